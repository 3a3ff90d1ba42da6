// What each `badRecords` choice does, on real `floe run` workers: `stop` exits non-zero with one
// line naming the record; `skip` goes on, logs the coordinates and counts; `dlq` with a dead-letter
// topic that disappeared goes on too, counting the records the topic refused (never retried).
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { KafkaAdmin, KafkaProducer } from '../../shared/kafka/index.ts'
import { WorkerProcess } from '../e2e/fleet.ts'
import { endpoints, stackConfigYaml, uniqueName, verifyTable } from '../harness.ts'

interface Setup {
  topic: string
  table: string
  worker: WorkerProcess
  produce(values: (string | null)[]): Promise<void>
  metric(name: string): Promise<number>
}

async function setup(
  t: TestContext,
  datasetExtra: string,
  dlqTopic?: string,
  env: NodeJS.ProcessEnv = {},
): Promise<Setup> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-bad-'))
  const topic = uniqueName('bad')
  const table = `${uniqueName('bad')}.events`
  const connection = { brokers: endpoints().kafka.brokers, clientId: 'bad-records' }
  const admin = new KafkaAdmin(connection)
  await admin.ensureTopic(topic, 1)
  const config = join(dir, 'floe.yaml')
  await writeFile(
    config,
    `${stackConfigYaml('bad')}ingestion:
  commitIntervalSeconds: 1
  commitTimeoutSeconds: 5
  drainTimeoutSeconds: 10
  wal:
    dir: ${join(dir, 'wal')}
datasets:
  - name: events
    topic: ${topic}
    table: ${table}
    customMapping: {id: id, n: n}
    schema: {id: string not null, n: long}
${datasetExtra}
`,
  )
  await mkdir(join(dir, 'wal'), { recursive: true })
  const worker = new WorkerProcess('bad-w1', config, join(dir, 'worker.log'), env)
  t.after(async () => {
    worker.kill('SIGKILL')
    await worker.exited
    await admin.deleteTopic(topic).catch(() => {})
    if (dlqTopic) await admin.deleteTopic(dlqTopic).catch(() => {})
    await admin.close()
    await rm(dir, { recursive: true, force: true })
  })
  await until(() => !worker.running || worker.logged('worker started'), 'the worker to start')
  return {
    topic,
    table,
    worker,
    produce: async (values) => {
      const producer = new KafkaProducer(connection)
      try {
        await producer.send(values.map((value) => ({ topic, value: value === null ? null : Buffer.from(value) })))
      } finally {
        await producer.close()
      }
    },
    metric: async (name) => {
      const port = worker.lines().find((l) => l.msg === 'worker started')?.metricsPort
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
      let sum = 0
      for (const line of text.split('\n'))
        if (line.startsWith(name)) sum += Number(line.slice(line.lastIndexOf(' ') + 1))
      return sum
    },
  }
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(200)
  }
}

const good = (i: number) => JSON.stringify({ id: `good-${i}`, n: i })

describe('badRecords', { concurrency: false }, () => {
  test('stop: the worker exits with status 3 and one line naming the record', async (t) => {
    const s = await setup(t, '    badRecords: stop')
    await s.produce([good(0), good(1), '{"id": "half', good(3)])
    const code = await s.worker.exited
    assert.equal(code, 3)
    const fatal = s.worker.lines().filter((l) => l.msg === 'fatal error: stopping')
    assert.equal(fatal.length, 1)
    assert.match(
      String(fatal[0]?.err),
      new RegExp(`stopping on the bad record at ${s.topic}/0@2 \\(badRecords: stop\\): it is not-json`),
    )
  })

  test('stop, on a worker of two members on threads: the member stops the other, exit 3, one line on stderr', async (t) => {
    const s = await setup(t, '    badRecords: stop', undefined, { FLOE_INGESTION__THREADS: '2' })
    await s.produce([good(0), '{"id": "half'])
    assert.equal(await s.worker.exited, 3)
    assert.equal(s.worker.lines().filter((l) => l.msg === 'fatal error: stopping').length, 1)
    const stopped = s.worker.lines().filter((l) => l.msg === 'worker stopped')
    assert.deepEqual(
      stopped.map((l) => l.code),
      [3],
      'the main thread says it stopped, with 3',
    )
    assert.match(
      readFileSync(s.worker.logFile, 'utf8'),
      /^floe run: fatal: dataset events: stopping on the bad record at .*\(BAD_RECORD_STOP\)$/m,
    )
  })

  test('skip: the worker goes on, every good record lands, each skipped one is counted and its place logged', async (t) => {
    const s = await setup(t, '    badRecords: skip')
    await s.produce([good(0), 'nope', good(2), null, good(4)])
    await until(async () => (await verifyTable(s.table).catch(() => ({ rows: 0 }))).rows === 3, 'three rows')
    assert.equal(s.worker.running, true)
    assert.equal(await s.metric('floe_records_dropped_total'), 2)
    const skipped = s.worker.lines().filter((l) => l.msg === 'skipped a bad record (badRecords: skip)')
    assert.deepEqual(
      skipped.map((l) => [l.topic, l.partition, l.offset]),
      [[s.topic, 0, '1']],
      'the second of one batch waits for the next line (rate-limited)',
    )
  })

  test('dlq: a dead-letter topic that disappeared refuses the records for good, and the partition goes on', async (t) => {
    const dlqTopic = uniqueName('bad-dlq')
    const s = await setup(t, `    dlqTopic: ${dlqTopic}`, dlqTopic)
    await s.produce([good(0)])
    await until(async () => (await verifyTable(s.table).catch(() => ({ rows: 0 }))).rows === 1, 'the first row')
    const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'bad-records-admin' })
    // closed whatever happens: an open admin connection keeps the test file from ending
    t.after(() => admin.close())
    await admin.deleteTopic(dlqTopic)
    await until(async () => (await admin.partitionCount(dlqTopic)) === undefined, 'the topic to go')
    await s.produce(['nope', good(2)])
    await until(async () => (await verifyTable(s.table).catch(() => ({ rows: 0 }))).rows === 2, 'the second row')
    assert.equal(s.worker.running, true)
    assert.equal(await s.metric('floe_dead_letter_refused_total{dataset="events",error="topic-missing"}'), 1)
    assert.ok(s.worker.logged('dead-letter topic refused a bad record; counted and dropped'))
  })
})
