// The participant's record path end to end, from a Kafka topic to ready WAL files: fetch, decode
// (JMESPath + typed conversion), Parquet encoding into open segments, and the rotation of END-COMMIT
// (no upload to storage, no commit). 1 KB JSON events, a 12-column mapping (strings, longs,
// timestamptz from ISO text and from epoch ms, double, boolean, nested paths, a list<string>).
// Not part of `npm test`; needs the local stack's Kafka (npm run stack -- up).
//
//   node bench/participant.bench.ts [events=300000] [runs=3] [partitions=3] [encoderThreads=cores] [columns=mapped]
//
// encoderThreads counts the main thread, as the `ingestion.wal.encoderThreads` key does: 1 encodes
// on the main thread, N >= 2 hands row groups to N - 1 encoder threads. `1,2` alternates runs of
// both (interleaved, so drift on a shared host hits each alike) and prints each one's median.
// columns `mapped,inferred` does the same with the dataset that infers its columns from the events
// (no mapping: every field a column, nested ones structs; bench-events.ts) beside the mapping's 12.
// columns `routed:N` (e.g. `mapped,routed:4,routed:1000`) is the mapped dataset routed into N tables
// by `sent_ms % N` (benchRoutedDataset), at most FLOE_BENCH_MAX_OPEN_TABLES (default 100) tables
// with open segments (one more evicts the least recently used first); `hot:N` routes nine
// events in ten into 9 hot tables and the rest evenly into N rare ones (benchHotRouteField), the
// shape an LRU serves: the hot tables stay open all round. A route needs the shared WAL
// layout: with a routed mode every run writes it, also the mapped and inferred ones, so they compare
// alike; FLOE_BENCH_WAL_LAYOUT (partition, shared) names the layout of a run without a route
// (default partition, the layout this benchmark was measured in before routing).
// FLOE_BENCH_HEAP_SNAPSHOT=<folder> writes a V8 heap snapshot of each run once its WRITE-STATUS
// arrived (what the participant still holds then: the status's files, the tables it knows), named
// by run and mode; bench/heap_summary.py sums one by constructor.
//
// Each run is a fresh DatasetParticipant with a fresh consumer group and WAL folder over the same
// pre-filled topic (created on the first use, reused after). Timing starts once the group has
// given it every partition and stops when the WRITE-STATUS of the END-COMMIT says every segment is
// ready. Prints events/s and MB/s of JSON per wall second and per CPU second (process.cpuUsage:
// the Kafka client's work in this process counts, the broker's does not), the median of the runs,
// each run's perf line (PhaseClock), and the ceiling (bench/ceiling.ts) on the same topic beside it.
// Per run also the peak RSS of the run (process.memoryUsage().rss sampled every 100 ms from the
// participant's start to the WRITE-STATUS; the RSS at the start says what earlier runs left, and
// the used JS heap and ArrayBuffers at the peak sample say what of it is objects and Buffers) beside
// the process's peak so far (resourceUsage's maxRSS: every run shares the process), the rotations cut by reason (floe_rotations_total) and tables evicted, and in
// the shared layout how many rotations and files the END-COMMIT's WRITE-STATUS held (at most 64
// rotations a status: shared-wal.ts) beside the ready .parquet files the WAL held after it.
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { availableParallelism, cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeHeapSnapshot } from 'node:v8'
import { readEndpoints } from '../integration/stack/index.ts'
import {
  benchDataset,
  benchEvent,
  benchHotRouteField,
  benchInferredDataset,
  benchRoutedDataset,
} from '../participant/decode/bench-events.ts'
import {
  Backpressure,
  DatasetParticipant,
  systemClock,
  systemTimers,
  UploadQueue,
  walDiskUsage,
} from '../participant/index.ts'
import type { ControlMessage, WriteStatus } from '../protocol/index.ts'
import type { DatasetConfig } from '../shared/config/index.ts'
import type { NestedField } from '../shared/iceberg/index.ts'
import {
  applyUpdates,
  currentSchema,
  defaultSpec,
  newTableMetadata,
  planWidening,
  widenFields,
} from '../shared/iceberg/metadata/index.ts'
import { KafkaAdmin, type KafkaConnection, KafkaProducer } from '../shared/kafka/index.ts'
import { EncoderPool } from '../shared/parquet/index.ts'
import { createLogger, createMetrics, PhaseClock } from '../shared/telemetry/index.ts'
import { ceilingLine, measureCeiling, ratioToCeiling } from './ceiling.ts'

const events = Number(process.argv[2] ?? 300_000)
const runs = Number(process.argv[3] ?? 3)
const partitions = Number(process.argv[4] ?? 3)
const threadCounts = (process.argv[5] ?? String(availableParallelism())).split(',').map(Number)
type ColumnMode = 'mapped' | 'inferred' | `routed:${number}` | `hot:${number}`
const columnModes = (process.argv[6] ?? 'mapped').split(',').map(columnMode)
// The local stack's broker (whatever port it runs on), unless FLOE_BENCH_BROKERS names others.
const brokers = process.env.FLOE_BENCH_BROKERS?.split(',') ?? readEndpoints().kafka.brokers
const topic = process.env.FLOE_BENCH_TOPIC ?? `floe-bench-participant-${events}-${partitions}`
const connection: KafkaConnection = { brokers, clientId: 'floe-bench-participant' }

const maxOpenTables = Number(process.env.FLOE_BENCH_MAX_OPEN_TABLES ?? 100)
const routing = columnModes.some((mode) => routedTables(mode) !== undefined)
const layoutName = process.env.FLOE_BENCH_WAL_LAYOUT ?? (routing ? 'shared' : 'partition')
if (layoutName !== 'partition' && layoutName !== 'shared') {
  throw new Error(`FLOE_BENCH_WAL_LAYOUT is partition or shared, not ${layoutName}`)
}
const layout: 'partition' | 'shared' = layoutName
if (routing && layout !== 'shared')
  throw new Error('a routed dataset writes the shared WAL layout: FLOE_BENCH_WAL_LAYOUT=shared')
const datasets = new Map(columnModes.map((mode) => [mode, datasetOf(mode)]))
/** The most rotations one WRITE-STATUS carries (maxRotationsPerStatus in participant/shared-wal.ts). */
const maxRotationsPerStatus = 64

function columnMode(text: string): ColumnMode {
  if (text === 'mapped' || text === 'inferred') return text
  const [, kind, tables] = /^(routed|hot):(\d+)$/.exec(text) ?? []
  if (tables !== undefined && Number(tables) > 0) return `${kind as 'routed' | 'hot'}:${Number(tables)}`
  throw new Error(`columns: mapped, inferred, routed:<tables> or hot:<rare tables>, not ${text}`)
}

function routedTables(mode: ColumnMode): number | undefined {
  const [kind, tables] = mode.split(':')
  return kind === 'routed' || kind === 'hot' ? Number(tables) : undefined
}

function datasetOf(mode: ColumnMode): DatasetConfig {
  const tables = routedTables(mode)
  if (tables === undefined)
    return mode === 'mapped' ? benchDataset(topic, brokers) : benchInferredDataset(topic, brokers)
  const field = mode.startsWith('hot:') ? benchHotRouteField(tables) : undefined
  return benchRoutedDataset(tables, topic, brokers, maxOpenTables, field)
}

function describeMode(mode: ColumnMode): string {
  const tables = routedTables(mode)
  if (tables === undefined) return mode === 'mapped' ? '12 mapped columns' : 'inferred columns'
  if (mode.startsWith('hot:'))
    return `12 mapped columns routed 90 % into 9 hot tables, 10 % into ${tables} rare ones (maxOpenTables ${maxOpenTables})`
  return `12 mapped columns routed into ${tables} tables (maxOpenTables ${maxOpenTables})`
}

/**
 * The table of a run, in memory: no catalog is part of the record path, but a dataset that infers
 * its columns widens its schema, once, at the first events.
 */
function tableOf(dataset: DatasetConfig, walDir: string) {
  let metadata = newTableMetadata({ location: `file://${walDir}/table`, schema: dataset.icebergSchema, nowMs: 0 })
  const widen = async (requests: readonly (readonly NestedField[])[]) => {
    let wanted: readonly NestedField[] = []
    for (const fields of requests) wanted = widenFields(wanted, fields)
    const change = planWidening(metadata, wanted)
    if (change.commit) metadata = applyUpdates(metadata, change.commit.updates, Date.now())
    return { schema: currentSchema(metadata), spec: defaultSpec(metadata) }
  }
  return {
    schema: currentSchema(metadata),
    spec: defaultSpec(metadata),
    dataLocation: `file://${walDir}/data`,
    offsets: async () => new Map<number, bigint>(),
    ...(dataset.inferColumns ? { widen } : {}),
    // a routed table's files would go under its own location; the run uploads nothing
    ...(dataset.route ? { routedDataLocation: async (table: string) => `file://${walDir}/tables/${table}/data` } : {}),
  }
}

/** Creates and fills the topic unless a previous run did; returns the bytes of JSON in it. */
async function prefill(admin: KafkaAdmin): Promise<number> {
  const bytes = Array.from({ length: 100 }, (_, i) => benchEvent(i).length).reduce((a, b) => a + b, 0) / 100
  const { created } = await admin.ensureTopic(topic, partitions)
  const ends = await admin.endOffsets(
    topic,
    Array.from({ length: partitions }, (_, p) => p),
  )
  const present = [...ends.values()].reduce((a, b) => a + b, 0n)
  if (!created && present >= BigInt(events)) return Math.round(bytes * events)
  if (present > 0n) throw new Error(`topic ${topic} holds ${present} records, not ${events}: delete it or name another`)
  const producer = new KafkaProducer(connection, { compression: 'lz4' })
  const started = performance.now()
  try {
    const chunk = 2000
    for (let i = 0; i < events; i += chunk) {
      const records = []
      for (let k = i; k < Math.min(events, i + chunk); k++) {
        records.push({ topic, partition: k % partitions, value: benchEvent(k) })
      }
      await producer.send(records)
    }
  } finally {
    await producer.close()
  }
  console.log(`filled ${topic}: ${events} events in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return Math.round(bytes * events)
}

interface RunResult {
  wallSeconds: number
  cpuSeconds: number
  /** The main thread's share of cpuSeconds: with encoder threads, the rest is theirs. */
  mainCpuSeconds: number
  line: string
  files: number
  /** From END-COMMIT to its WRITE-STATUS: the last rotation (footers, fsyncs, renames). */
  endMs: number
  /** The run's peak RSS (sampled every 100 ms), and the process's peak after it (maxRSS), in MiB. */
  peakRssMiB: number
  /** At the peak RSS sample: V8's used heap and the ArrayBuffers (Buffers) outside it, in MiB. */
  peakHeapMiB: number
  peakArrayBuffersMiB: number
  /** The RSS at the run's start: what earlier runs of the process left (V8 keeps a heap it grew). */
  startRssMiB: number
  processMaxRssMiB: number
  /** Rotations cut during the run, by reason (floe_rotations_total). */
  rotations: Map<string, number>
  /** Tables a routed run evicted (floe_table_evictions_total). */
  evictions: number
  /** The shared layout: rotations in the END-COMMIT's WRITE-STATUS; undefined in the per-partition one. */
  statusRotations: number | undefined
  /** Ready .parquet files in the WAL after the END-COMMIT. */
  walFiles: number
}

async function run(
  admin: KafkaAdmin,
  producer: KafkaProducer,
  index: number,
  threads: number,
  columns: ColumnMode,
): Promise<RunResult> {
  const dataset = datasets.get(columns) as DatasetConfig
  let peak = process.memoryUsage()
  const startRss = peak.rss
  const sample = () => {
    const now = process.memoryUsage()
    if (now.rss > peak.rss) peak = now
  }
  const sampler = setInterval(sample, 100)
  const encoders = threads >= 2 ? new EncoderPool({ threads: threads - 1 }) : undefined
  const walDir = await mkdtemp(join(tmpdir(), 'floe-bench-participant-'))
  const metrics = createMetrics({ defaultMetrics: false })
  const phases = new PhaseClock()
  const backpressure = new Backpressure({
    limits: { diskHighWatermarkPct: 100, maxPendingUploadBytes: 2 ** 40, maxOpenSegmentMemoryBytes: 2 ** 40 },
    measureDisk: walDiskUsage(walDir, { volumeSizeBytes: 2 ** 50 }),
    clock: systemClock,
    timers: systemTimers,
  })
  // No storage: a segment is "uploaded" where it lies, so the round reports it without a copy.
  const uploads = new UploadQueue({
    uploader: { upload: async (segment) => ({ ...segment.dataFile, filePath: `file://${segment.localPath}` }) },
  })
  // a partition still appending its last batch at END-COMMIT answers in a WRITE-STATUS of its own
  const reported: WriteStatus['partitions'][number][] = []
  // the shared layout's files are in the status's rotations (by id: a later status repeats them)
  const rotationsReported = new Map<string, NonNullable<WriteStatus['rotations']>[number]>()
  const group = `floe-bench-${Date.now()}-${index}`
  const participant = new DatasetParticipant({
    dataset,
    group,
    workerId: 'bench',
    connection,
    autoOffsetReset: 'earliest',
    wal: {
      dir: walDir,
      maxFileSizeBytes: 64 * 1024 * 1024,
      maxFileAgeMinutes: 5,
      maxOpenSegmentsPerPartition: 256,
      rowGroupBytes: 4 * 1024 * 1024,
      compression: 'zstd',
      encoders,
      layout,
    },
    maxRecordBytes: 1 << 20,
    table: tableOf(dataset, walDir),
    admin,
    producer,
    uploads,
    backpressure,
    send: async (message) => {
      if (message.body.type !== 'WriteStatus') return
      const status = (message as ControlMessage<WriteStatus>).body
      reported.push(...status.partitions)
      for (const rotation of status.rotations ?? []) rotationsReported.set(rotation.id, rotation)
    },
    logger: createLogger({ level: 'warn' }),
    metrics,
    phases,
  })
  const received = async () => (await metrics.recordsReceived.get()).values.reduce((a, v) => a + v.value, 0)
  const until = async (condition: () => boolean | Promise<boolean>) => {
    while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10))
  }
  try {
    await participant.start()
    await until(() => participant.assigned.length === partitions)
    phases.report()
    const cpu = process.cpuUsage()
    const mainCpu = process.threadCpuUsage()
    const started = performance.now()
    await until(async () => (await received()) >= events)
    // END-COMMIT rotates every open segment into a ready file and answers with the files
    const control = (body: ControlMessage['body']): ControlMessage => ({
      dataset: dataset.name,
      group,
      commitId: 'bench-round',
      sender: { workerId: 'bench', memberId: '', generation: -1 },
      timeMs: Date.now(),
      body,
    })
    await participant.receive(control({ type: 'StartCommit', tableOffsets: [], snapshotId: null }))
    const ended = performance.now()
    await participant.receive(control({ type: 'EndCommit', expectedPartitions: [] }))
    await until(() => reported.length >= partitions)
    const wallSeconds = (performance.now() - started) / 1000
    const endMs = performance.now() - ended
    const used = process.cpuUsage(cpu)
    const mainUsed = process.threadCpuUsage(mainCpu)
    sample()
    clearInterval(sampler)
    // after the run's figures: a snapshot takes seconds and a heap's worth of memory
    const snapshots = process.env.FLOE_BENCH_HEAP_SNAPSHOT
    if (snapshots) writeHeapSnapshot(join(snapshots, `run${index}-${columns.replace(':', '-')}.heapsnapshot`))
    const statusRotations = [...rotationsReported.values()]
    const files = [...reported.flatMap((p) => p.files), ...statusRotations.flatMap((r) => r.files)]
    const rows = files.reduce((n, file) => n + file.recordCount, 0n)
    // a status carries the oldest rotations only: the rest wait for the next round, still ready in the WAL
    const capped = statusRotations.length >= maxRotationsPerStatus && rows < BigInt(events)
    if (rows !== BigInt(events) && !capped) throw new Error(`the ready files hold ${rows} rows, not ${events}`)
    const line = phases.report().line
    const rotations = new Map<string, number>()
    for (const { labels, value } of (await metrics.rotations.get()).values) {
      const reason = String(labels.reason)
      rotations.set(reason, (rotations.get(reason) ?? 0) + value)
    }
    const evictions = (await metrics.tableEvictions.get()).values.reduce((sum, { value }) => sum + value, 0)
    const walFiles = (await readdir(walDir, { recursive: true })).filter(
      (name) => name.endsWith('.parquet') && !name.split('/').at(-1)?.startsWith('active_'),
    ).length
    return {
      wallSeconds,
      cpuSeconds: (used.user + used.system) / 1e6,
      mainCpuSeconds: (mainUsed.user + mainUsed.system) / 1e6,
      line,
      files: files.length,
      endMs,
      peakRssMiB: peak.rss / 2 ** 20,
      peakHeapMiB: peak.heapUsed / 2 ** 20,
      peakArrayBuffersMiB: peak.arrayBuffers / 2 ** 20,
      startRssMiB: startRss / 2 ** 20,
      processMaxRssMiB: process.resourceUsage().maxRSS / 1024,
      rotations,
      evictions,
      statusRotations: layout === 'shared' ? statusRotations.length : undefined,
      walFiles,
    }
  } finally {
    clearInterval(sampler)
    await participant.stop({ leave: true })
    await encoders?.close()
    await rm(walDir, { recursive: true, force: true })
  }
}

/**
 * CPU seconds of the busiest thread: the drain's wall time on a host whose cores are free for it
 * (the main thread and the encoder threads overlap). On a shared host wall time also counts the
 * time other processes held the cores, so this is the figure to compare there.
 */
function busiest(result: RunResult, threads: number): number {
  const encoders = threads >= 2 ? threads - 1 : 1
  return Math.max(result.mainCpuSeconds, (result.cpuSeconds - result.mainCpuSeconds) / encoders)
}

/** A run's memory, rotations and files. */
function runDetails(result: RunResult): string {
  const reasons = [...result.rotations].map(([reason, count]) => `${reason} ${count}`).join(', ') || 'none'
  const status =
    result.statusRotations === undefined
      ? ''
      : `; the END-COMMIT's WRITE-STATUS held ${result.statusRotations} rotations, ${result.files} files${result.statusRotations >= maxRotationsPerStatus ? ` (at most ${maxRotationsPerStatus} rotations a status)` : ''}`
  return `peak RSS ${result.peakRssMiB.toFixed(0)} MiB this run (${result.startRssMiB.toFixed(0)} at its start; at the peak ${result.peakHeapMiB.toFixed(0)} MiB of JS heap used, ${result.peakArrayBuffersMiB.toFixed(0)} of ArrayBuffers), ${result.processMaxRssMiB.toFixed(0)} MiB the process so far; rotations by reason: ${reasons}${result.evictions > 0 ? `; ${result.evictions} tables evicted` : ''}${status}; ${result.walFiles} ready .parquet files in the WAL`
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const admin = new KafkaAdmin(connection)
const producer = new KafkaProducer(connection)
try {
  const bytes = await prefill(admin)
  const cpu = cpus()[0]?.model ?? 'unknown cpu'
  console.log(
    `${events} events of ${(bytes / events).toFixed(0)} B in ${partitions} partitions, ${columnModes.map(describeMode).join(' and ')}; WAL layout ${layout}; node ${process.version}; ${cpu} (${cpus().length} cores); ${new Date().toISOString()}`,
  )
  // each variant: encoder threads, and (when both are asked for) which columns
  const variants = threadCounts.flatMap((threads) =>
    columnModes.map((columns) => ({
      threads,
      columns,
      label: `encoderThreads ${threads}${columnModes.length > 1 || columns !== 'mapped' ? `, ${routedTables(columns) === undefined ? `${columns} columns` : columns}` : ''}`,
    })),
  )
  const results = new Map<(typeof variants)[number], RunResult[]>(variants.map((variant) => [variant, []]))
  const mb = bytes / 1e6
  for (let i = 0; i < runs; i++) {
    for (const variant of variants) {
      const { threads, label } = variant
      const result = await run(admin, producer, i, threads, variant.columns)
      results.get(variant)?.push(result)
      console.log(
        `run ${i + 1}, ${label}: ${(events / result.wallSeconds).toFixed(0)} events/s, ${(mb / result.wallSeconds).toFixed(1)} MB/s wall; ${(events / result.cpuSeconds).toFixed(0)} events/s, ${(mb / result.cpuSeconds).toFixed(1)} MB/s per CPU second (${result.cpuSeconds.toFixed(2)} CPU s, ${result.mainCpuSeconds.toFixed(2)} on the main thread, over ${result.wallSeconds.toFixed(2)} s); ${(events / busiest(result, threads)).toFixed(0)} events/s on idle cores; ${result.files} files, END to status ${result.endMs.toFixed(0)} ms`,
      )
      console.log(`  ${runDetails(result)}`)
      console.log(`  ${result.line}`)
    }
  }
  for (const [{ threads, label }, own] of results) {
    const wall = median(own.map((r) => r.wallSeconds))
    const cpuSeconds = median(own.map((r) => r.cpuSeconds))
    const idle = median(own.map((r) => busiest(r, threads)))
    const rss = median(own.map((r) => r.peakRssMiB))
    console.log(
      `median, ${label}: ${(events / wall).toFixed(0)} events/s, ${(mb / wall).toFixed(1)} MB/s wall; ${(events / cpuSeconds).toFixed(0)} events/s, ${(mb / cpuSeconds).toFixed(1)} MB/s per core; ${(events / idle).toFixed(0)} events/s on idle cores; peak RSS ${rss.toFixed(0)} MiB; ${median(own.map((r) => r.walFiles))} ready files`,
    )
  }
  // The same topic through the bare consume + JSON.parse loop: what no decoder can beat.
  const ceiling = await measureCeiling({ topic, brokers })
  console.log(ceilingLine(ceiling))
  for (const [{ label }, own] of results) {
    const cpuSeconds = median(own.map((r) => r.cpuSeconds))
    console.log(`participant, ${label}: ${ratioToCeiling(events / cpuSeconds, ceiling)}`)
  }
} finally {
  await producer.close()
  await admin.close()
}
