// `./dev demo`: the main job for a newcomer, on the local stack. Creates a topic, starts three
// `floe run` workers sharing one configuration, produces sample events while they run, waits until
// pyiceberg reads every event from the Iceberg table, shows some rows and `floe status`, and stops
// the workers with SIGTERM (they drain: a last commit round, then they leave the group).
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { KafkaAdmin, KafkaProducer } from '../shared/kafka/index.ts'
import { WorkerProcess } from './e2e/fleet.ts'
import { verifyTable } from './harness.ts'
import { readEndpoints, stackDir } from './stack/index.ts'

const endpoints = readEndpoints()
const dir = join(stackDir(), 'demo')
rmSync(dir, { recursive: true, force: true })
mkdirSync(dir, { recursive: true })
const run = Date.now().toString(36)
const topic = `demo-events-${run}`
const table = `demo_${run}.events`
const config = join(dir, 'floe.yaml')
writeFileSync(
  config,
  `kafka:
  brokers: [${endpoints.kafka.bootstrap}]
  controlTopic: demo-control-${run}
catalog:
  type: rest
  uri: ${endpoints.rest.uri}
ingestion:
  commitIntervalSeconds: 5
  wal:
    dir: ${join(dir, 'wal')}
datasets:
  - name: events
    topic: ${topic}
    table: ${table}
    customMapping: {event_id: id, ts: timestamp, user_id: user.id, kind: type, amount: details.amount}
    schema: {event_id: string not null, ts: timestamptz, user_id: long, kind: string, amount: double}
    partitionSpec: [day(ts)]
    dlqTopic: ${topic}-dlq
log:
  level: warn
`,
)
const admin = new KafkaAdmin({ brokers: endpoints.kafka.brokers, clientId: 'floe-demo' })
await admin.ensureTopic(topic, 6)
await admin.close()
console.log(`topic ${topic} (6 partitions), table ${table}, config ${config}`)

const workers = [1, 2, 3].map(
  (n) => new WorkerProcess(`demo-${n}`, config, join(dir, `worker-${n}.log`), {}, join(dir, `wal-${n}`)),
)
console.log(`started 3 workers (logs in ${dir})`)
const stopAll = () => {
  for (const w of workers) w.kill('SIGTERM')
}
process.once('SIGINT', stopAll)

const count = 10_000
const producer = new KafkaProducer({ brokers: endpoints.kafka.brokers, clientId: 'floe-demo' })
const kinds = ['click', 'view', 'purchase']
for (let sent = 0; sent < count; sent += 1000) {
  await producer.send(
    Array.from({ length: 1000 }, (_, k) => {
      const i = sent + k
      const event = {
        id: `evt-${i}`,
        timestamp: new Date(Date.now() - (i % 3) * 86_400_000).toISOString(),
        user: { id: 1000 + (i % 97) },
        type: kinds[i % 3],
        details: { amount: Math.round(i * 1.37) / 100 },
      }
      return { topic, key: Buffer.from(event.id), value: Buffer.from(JSON.stringify(event)) }
    }),
  )
}
await producer.close()
console.log(`produced ${count} events; waiting for the workers to commit them...`)

const started = Date.now()
let rows = 0
while (Date.now() - started < 180_000) {
  const report = await verifyTable(table, { rows: 5 }).catch(() => undefined)
  rows = report?.rows ?? 0
  if (report && rows >= count) {
    console.log(
      `\npyiceberg reads ${rows} rows from ${table} after ${((Date.now() - started) / 1000).toFixed(1)} s, in ${report.dataFiles} data files, ${report.snapshots.length} snapshots`,
    )
    console.table(report.sample)
    break
  }
  await sleep(2000)
}
console.log(
  execFileSync(join(import.meta.dirname, '..', 'bin', 'floe'), ['status', '--config', config], { encoding: 'utf8' }),
)
stopAll()
const codes = await Promise.all(workers.map((w) => w.exited))
console.log(`workers stopped (exit codes ${codes.join(', ')})`)
process.exit(rows >= count ? 0 : 1)
