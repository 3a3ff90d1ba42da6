// Peak memory of one real `floe run` worker draining a backlog: a topic of `partitions` Kafka
// partitions pre-filled with the participant benchmark's 1 KB events, a table partitioned
// `bucket(3, user_id)` (three open segments in all in the shared WAL layout, three per Kafka
// partition in the per-partition one), one worker started on it with `maxOpenSegmentMemoryBytes`
// = cap. Prints the worker's peak RSS (VmHWM), the drain's wall time, events/s and CPU seconds,
// how often the worker paused for memory, and its heap, Buffers and open segments at the highest
// RSS sampled. Not part of `npm test`; needs the local stack (npm run stack -- up).
//
//   node bench/worker-memory.bench.ts [partitions=256] [events=300000] [capMiB=512] [floeRoot=.]
//
// `floeRoot` runs another checkout's bin/floe against the same topic (before/after comparisons).
// The worker inherits the environment: FLOE_* overrides (FLOE_INGESTION__WAL__ENCODER_THREADS=1)
// and malloc's settings (MALLOC_ARENA_MAX) reach it; FLOE_BENCH_TRACE=1 prints every sample;
// FLOE_BENCH_CPU_PROFILE=DIR has the worker write a V8 CPU profile there (bench/cpu-profile.ts).
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { readEndpoints } from '../integration/stack/index.ts'
import { benchEvent, benchMapping, benchSchema } from '../participant/decode/bench-events.ts'
import { KafkaAdmin, type KafkaConnection, KafkaProducer } from '../shared/kafka/index.ts'
import { cpuSecondsOf, peakRssOf } from './scale-probes.ts'

const partitions = Number(process.argv[2] ?? 256)
const events = Number(process.argv[3] ?? 300_000)
const capMiB = Number(process.argv[4] ?? 512)
const floeRoot = resolve(process.argv[5] ?? join(import.meta.dirname, '..'))
const endpoints = readEndpoints()
const brokers = endpoints.kafka.brokers
const topic = `floe-bench-memory-${partitions}-${events}`
const connection: KafkaConnection = { brokers, clientId: 'floe-bench-memory' }

async function prefill(): Promise<void> {
  const admin = new KafkaAdmin(connection)
  try {
    const { created } = await admin.ensureTopic(topic, partitions)
    const ends = await admin.endOffsets(
      topic,
      Array.from({ length: partitions }, (_, p) => p),
    )
    const present = [...ends.values()].reduce((a, b) => a + b, 0n)
    if (!created && present >= BigInt(events)) return
    if (present > 0n) throw new Error(`topic ${topic} holds ${present} records, not ${events}`)
  } finally {
    await admin.close()
  }
  const producer = new KafkaProducer(connection, { compression: 'lz4' })
  try {
    for (let i = 0; i < events; i += 2000) {
      const records = []
      for (let k = i; k < Math.min(events, i + 2000); k++) {
        records.push({ topic, partition: k % partitions, value: benchEvent(k) })
      }
      await producer.send(records)
    }
  } finally {
    await producer.close()
  }
}

/** What the worker's /metrics says its memory holds (sampled at the highest RSS seen). */
interface Breakdown {
  rss: number
  heapUsed: number
  heapTotal: number
  external: number
  openSegments: number
}
const metricsPort = 19464 + Math.floor(Math.random() * 1000)
async function breakdown(): Promise<Breakdown | undefined> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0)
    return {
      rss: value(/^floe_process_process_resident_memory_bytes (\S+)/m),
      heapUsed: value(/^floe_process_nodejs_heap_size_used_bytes (\S+)/m),
      heapTotal: value(/^floe_process_nodejs_heap_size_total_bytes (\S+)/m),
      external: value(/^floe_process_nodejs_external_memory_bytes (\S+)/m),
      openSegments: value(/^floe_wal_bytes\{[^}]*state="open"[^}]*\} (\S+)/m),
    }
  } catch {
    return undefined
  }
}

await prefill()
const dir = await mkdtemp(join(tmpdir(), 'floe-bench-memory-'))
const stamp = `${Date.now()}`
const config = join(dir, 'floe.yaml')
await writeFile(
  config,
  `kafka:
  brokers: [${brokers.join(', ')}]
  groupPrefix: bench-memory-${stamp}
  controlTopic: bench-memory-control-${stamp}
catalog:
  type: rest
  uri: ${endpoints.rest.uri}
ingestion:
  commitIntervalSeconds: 10
  wal:
    dir: ${join(dir, 'wal')}
    maxOpenSegmentMemoryBytes: ${capMiB * 1024 * 1024}
datasets:
  - name: bench
    topic: ${topic}
    table: bench_memory_${stamp}.events
    badRecords: skip
    customMapping: ${JSON.stringify(benchMapping)}
    schema: ${JSON.stringify(benchSchema)}
    partitionSpec: ['bucket[3](user_id)']
log:
  level: info
`,
)
// a CPU profile is written when the worker exits on its own, so it is stopped with SIGTERM then
const profileDir = process.env.FLOE_BENCH_CPU_PROFILE
const profileEnv = profileDir
  ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --cpu-prof --cpu-prof-dir=${profileDir}`.trim() }
  : {}
const started = performance.now()
const child = spawn(join(floeRoot, 'bin', 'floe'), ['run', '--config', config], {
  env: { ...process.env, ...profileEnv, FLOE_WORKER_ID: 'bench-memory', FLOE_METRICS__PORT: String(metricsPort) },
  stdio: ['ignore', 'pipe', 'pipe'],
})
let committed = 0
let memoryPauses = 0
let drainedAt: number | undefined
let log = ''
const tail: string[] = []
const onLine = (line: string) => {
  tail.push(line)
  if (tail.length > 20) tail.shift()
  if (!line.startsWith('{')) return
  const entry = JSON.parse(line) as { msg?: string; records?: string; reasons?: string[] }
  if (entry.msg === 'round committed' && entry.records) committed += Number(entry.records)
  if (entry.msg === 'pausing every dataset' && entry.reasons?.includes('memory')) memoryPauses++
}
for (const stream of [child.stdout, child.stderr]) {
  stream.setEncoding('utf8')
  stream.on('data', (chunk: string) => {
    log += chunk
    const lines = log.split('\n')
    log = lines.pop() ?? ''
    for (const line of lines) onLine(line)
  })
}
let peak = 0
// user + system seconds of the worker until it drained, start-up included
let cpuSeconds = 0
let atPeak: Breakdown | undefined
const deadline = started + 15 * 60_000
while (child.exitCode === null && performance.now() < deadline) {
  const sampled = await breakdown()
  if (sampled && sampled.rss >= (atPeak?.rss ?? 0)) atPeak = sampled
  if (sampled && process.env.FLOE_BENCH_TRACE) {
    const m = (bytes: number) => Math.round(bytes / 2 ** 20)
    console.log(
      `${((performance.now() - started) / 1000).toFixed(1)} s rss ${m(sampled.rss)} heap ${m(sampled.heapUsed)} of ${m(sampled.heapTotal)} ` +
        `external ${m(sampled.external)} open ${m(sampled.openSegments)} committed ${committed}`,
    )
  }
  peak = Math.max(peak, peakRssOf(child.pid as number))
  cpuSeconds = cpuSecondsOf(child.pid as number) ?? cpuSeconds
  if (committed >= events && drainedAt === undefined) drainedAt = performance.now()
  if (drainedAt !== undefined) break
  await sleep(250)
}
peak = Math.max(peak, peakRssOf(child.pid as number))
if (child.exitCode !== null) console.log(`worker exited ${child.exitCode}:\n${tail.join('\n')}`)
if (profileDir && child.exitCode === null) {
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await Promise.race([exited, sleep(60_000)])
}
child.kill('SIGKILL')
await rm(dir, { recursive: true, force: true })
const seconds = ((drainedAt ?? performance.now()) - started) / 1000
console.log(
  `partitions=${partitions} events=${events} cap=${capMiB}MiB root=${floeRoot}: peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB, ` +
    `${drainedAt ? 'drained' : `NOT drained (${committed} committed)`} in ${seconds.toFixed(1)} s ` +
    `(${Math.round(events / seconds)} events/s incl. start and the last commit), ` +
    `${cpuSeconds.toFixed(1)} CPU s (${Math.round(events / cpuSeconds)} events per CPU-second), memory pauses ${memoryPauses}`,
)
if (atPeak) {
  const m = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`
  console.log(
    `  at the highest sampled RSS (${m(atPeak.rss)}): V8 heap used ${m(atPeak.heapUsed)} of ${m(atPeak.heapTotal)}, external ${m(atPeak.external)}, ` +
      `open segments hold (estimate) ${m(atPeak.openSegments)}`,
  )
}
