// One fuzz run on the real stack, for fuzz.test.ts and bench/fuzz.ts: a topic filled with good
// events and hostile records (generator.ts), one real `floe run` worker process over it, and the
// accounting afterwards:
// - every good id in the table exactly once (pyiceberg, filtered on kind = 'good'), checked again
//   after a settling time of a few commit intervals, so a late duplicate is seen;
// - table rows + dead-lettered records + records Floe counted as dropped = records produced
//   (the rest "vanished");
// - the worker still running, its peak RSS (VmHWM), its ingest rate from /metrics.
// The caller's TestContext (or the bench's cleanup list) stops the worker and deletes the topics.
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { KafkaAdmin, KafkaProducer, type OutgoingRecord } from '../../shared/kafka/index.ts'
import { WorkerProcess } from '../e2e/fleet.ts'
import { endpoints, stackConfigYaml, uniqueName, type VerifyResult, verifyTable } from '../harness.ts'
import { fuzzMapping, fuzzSchema, HostileGenerator, inferredHostileKinds } from './generator.ts'

export interface FuzzOptions {
  records: number
  hostileRate: number
  partitions?: number
  seed?: number
  maxRecordBytes?: number
  /** Share of hostile picks that keep an oversize record (generator.ts; default 0.05). */
  oversizeShare?: number
  /** `max.message.bytes` of the dead-letter topic: small enough that some records must be cut. */
  dlqMaxMessageBytes?: number
  commitIntervalSeconds?: number
  /** How long to wait for every good id. */
  timeoutMs?: number
  /** Called as the run goes, for the bench's progress lines. */
  progress?: (line: string) => void
  /**
   * `mapped` (default): the fuzz mapping. `inferred`: a dataset that infers its columns (ts a
   * timestamptz, amount declared double), fed the inferred hostile kinds too, after 100 good events.
   */
  columns?: 'mapped' | 'inferred'
}

export interface FuzzResult {
  produced: number
  good: number
  rows: number
  goodRows: number
  deadLettered: number
  deadLetteredByReason: Record<string, number>
  /** Bad records Floe counted and dropped (refused for good by the dead-letter topic). */
  dropped: number
  cut: number
  vanished: number
  ids: VerifyResult['ids']
  /** The same count, a settling time after every id was first seen. */
  settledIds: VerifyResult['ids']
  workerAlive: boolean
  peakRssBytes: number
  /** Records read per second, from the first record received to the last. */
  eventsPerSecond: number
  produceSeconds: number
  ingestSeconds: number
  lastPerfLine: string | undefined
}

export interface FuzzRun {
  result: Promise<FuzzResult>
  /** Stops the worker and deletes what the run made. Safe to call more than once. */
  cleanup(): Promise<void>
}

const sum = (values: Iterable<bigint>) => [...values].reduce((a, b) => a + b, 0n)

/** Prometheus text -> value per metric name and label set. */
async function scrape(port: number, previous = new Map<string, number>()): Promise<Map<string, number>> {
  // A busy worker may drop one scrape: the last values stand until the next.
  const text = await fetch(`http://127.0.0.1:${port}/metrics`)
    .then((response) => response.text())
    .catch(() => undefined)
  if (text === undefined) return previous
  const values = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (!line.startsWith('floe_')) continue
    const space = line.lastIndexOf(' ')
    values.set(line.slice(0, space), Number(line.slice(space + 1)))
  }
  return values
}

function total(metrics: Map<string, number>, name: string): number {
  let n = 0
  for (const [key, value] of metrics) if (key === name || key.startsWith(`${name}{`)) n += value
  return n
}

function byLabel(metrics: Map<string, number>, name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [key, value] of metrics) {
    if (!key.startsWith(`${name}{`)) continue
    const match = new RegExp(`${label}="([^"]*)"`).exec(key)
    if (match?.[1]) out[match[1]] = (out[match[1]] ?? 0) + value
  }
  return out
}

function peakRss(pid: number | undefined): number {
  if (!pid) return 0
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1]
    return kb ? Number(kb) * 1024 : 0
  } catch {
    return 0
  }
}

export function startFuzzRun(options: FuzzOptions): FuzzRun {
  const cleanups: (() => Promise<void>)[] = []
  let cleaned: Promise<void> | undefined
  const cleanup = () => {
    cleaned ??= (async () => {
      for (const step of cleanups.reverse()) await step().catch(() => {})
    })()
    return cleaned
  }
  return { result: run(options, cleanups), cleanup }
}

async function run(options: FuzzOptions, cleanups: (() => Promise<void>)[]): Promise<FuzzResult> {
  const log = options.progress ?? (() => {})
  const partitions = options.partitions ?? 3
  const maxRecordBytes = options.maxRecordBytes ?? 64 * 1024
  const dlqMaxMessageBytes = options.dlqMaxMessageBytes ?? 32 * 1024
  const commitIntervalSeconds = options.commitIntervalSeconds ?? 2
  const dir = await mkdtemp(join(tmpdir(), 'floe-fuzz-'))
  cleanups.push(async () => {
    if (!process.env.FLOE_KEEP_E2E) await rm(dir, { recursive: true, force: true })
  })
  const topic = uniqueName('fuzz')
  const dlqTopic = `${topic}-dlq`
  const table = `${uniqueName('fuzz')}.events`
  const connection = { brokers: endpoints().kafka.brokers, clientId: 'fuzz' }
  const admin = new KafkaAdmin(connection)
  cleanups.push(() => admin.close())
  // The source topic takes records up to 4 MiB (oversize ones arrive compressed); the dead-letter
  // topic takes much less, so the largest bad records must be cut to land there.
  await admin.ensureTopic(topic, partitions, { 'max.message.bytes': String(4 * 1024 * 1024) })
  await admin.ensureTopic(dlqTopic, partitions, { 'max.message.bytes': String(dlqMaxMessageBytes) })
  cleanups.push(async () => {
    await admin.deleteTopic(topic).catch(() => {})
    await admin.deleteTopic(dlqTopic).catch(() => {})
  })

  // Fill the topic first: the worker's rate is then measured on a backlog, as in an outage's catch-up.
  const generator = new HostileGenerator({
    hostileRate: options.hostileRate,
    runId: topic,
    maxRecordBytes,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.oversizeShare === undefined ? {} : { oversizeShare: options.oversizeShare }),
    ...(options.columns === 'inferred' ? { kinds: inferredHostileKinds, goodFirst: 100 } : {}),
  })
  const goodIds: string[] = []
  const producer = new KafkaProducer(connection, { compression: 'zstd' })
  const produceStarted = performance.now()
  try {
    const chunk = 1000
    for (let sent = 0; sent < options.records; sent += chunk) {
      const records: OutgoingRecord[] = []
      for (let i = sent; i < Math.min(options.records, sent + chunk); i++) {
        const record = generator.next()
        if (record.goodId) goodIds.push(record.goodId)
        records.push({ topic, key: record.key, value: record.value })
      }
      await producer.send(records)
      if ((sent / chunk) % 100 === 0) log(`produced ${sent + records.length} of ${options.records}`)
    }
  } finally {
    await producer.close()
  }
  const produceSeconds = (performance.now() - produceStarted) / 1000
  const ends = await admin.endOffsets(
    topic,
    Array.from({ length: partitions }, (_, p) => p),
  )
  const produced = Number(sum(ends.values()))
  if (produced !== options.records) throw new Error(`the topic holds ${produced} records, not ${options.records}`)
  const idsFile = join(dir, 'good-ids.txt')
  await writeFile(idsFile, `${goodIds.join('\n')}\n`)
  log(`produced ${produced} records (${goodIds.length} good) in ${produceSeconds.toFixed(1)} s`)

  const config = join(dir, 'floe.yaml')
  await writeFile(
    config,
    `${stackConfigYaml('fuzz')}ingestion:
  commitIntervalSeconds: ${commitIntervalSeconds}
  commitTimeoutSeconds: 10
  drainTimeoutSeconds: 20
  maxRecordBytes: ${maxRecordBytes}
  wal:
    dir: ${join(dir, 'wal')}
datasets:
  - name: fuzz
    topic: ${topic}
    table: ${table}
${
  options.columns === 'inferred'
    ? '    timestampFields: [ts]\n    schema: {amount: double}\n'
    : `    customMapping: ${JSON.stringify(fuzzMapping)}\n    schema: ${JSON.stringify(fuzzSchema)}\n`
}    dlqTopic: ${dlqTopic}
log:
  level: info
`,
  )
  await mkdir(join(dir, 'wal'), { recursive: true })
  const worker = new WorkerProcess('fuzz-w1', config, join(dir, 'worker.log'), {})
  cleanups.push(async () => {
    worker.kill('SIGKILL')
    await worker.exited
  })
  let port: number | undefined
  const deadline = Date.now() + (options.timeoutMs ?? 5 * 60_000)
  while (port === undefined) {
    if (!worker.running) throw new Error(`the worker exited before it started: see ${worker.logFile}`)
    if (Date.now() > deadline) throw new Error('the worker did not start')
    const started = worker.lines().find((l) => l.msg === 'worker started')
    if (typeof started?.metricsPort === 'number') port = started.metricsPort
    else await sleep(200)
  }

  // The ingest rate: from the first record received to the last, by /metrics.
  let firstAt: number | undefined
  let lastAt: number | undefined
  let metrics = new Map<string, number>()
  while (Date.now() < deadline) {
    if (!worker.running) throw new Error(`the worker exited: see ${worker.logFile}`)
    metrics = await scrape(port, metrics)
    const received = total(metrics, 'floe_records_received_total')
    const now = performance.now()
    if (received > 0) firstAt ??= now
    if (received >= produced) {
      lastAt = now
      break
    }
    await sleep(250)
  }
  if (firstAt === undefined || lastAt === undefined) throw new Error('the worker did not read every record in time')
  const ingestSeconds = Math.max(0.001, (lastAt - firstAt) / 1000)
  log(`read ${produced} records in ${ingestSeconds.toFixed(1)} s`)

  const goodCheck = () =>
    verifyTable(table, { idsFile, idColumn: 'id', filter: "kind = 'good'" }).catch(
      (error: unknown) => ({ error: String(error) }) as VerifyResult,
    )
  let first: VerifyResult | undefined
  while (Date.now() < deadline) {
    first = await goodCheck()
    if (!first.error && first.ids && first.ids.missing === 0) break
    await sleep(2000)
  }
  if (first?.ids?.missing !== 0) {
    throw new Error(`not every good id landed in time: ${JSON.stringify(first?.ids ?? first?.error)}`)
  }
  // Settling: a few commit intervals more, then count again (a late duplicate must be seen).
  await sleep(commitIntervalSeconds * 3 * 1000 + 2000)
  const settled = await goodCheck()
  const all = await verifyTable(table)
  metrics = await scrape(port, metrics)
  const dlqEnds = await admin.endOffsets(
    dlqTopic,
    Array.from({ length: partitions }, (_, p) => p),
  )
  const deadLettered = Number(sum(dlqEnds.values()))
  const dropped = total(metrics, 'floe_records_dropped_total')
  const perf = worker
    .lines()
    .filter((l) => typeof l.msg === 'string' && l.msg.startsWith('perf '))
    .map((l) => String(l.msg))
  const result: FuzzResult = {
    produced,
    good: goodIds.length,
    rows: all.rows,
    goodRows: settled.rows,
    deadLettered,
    deadLetteredByReason: byLabel(metrics, 'floe_records_dead_lettered_total', 'reason'),
    dropped,
    cut: total(metrics, 'floe_dead_letter_cut_total'),
    vanished: produced - all.rows - deadLettered - dropped,
    ids: first.ids,
    settledIds: settled.ids,
    workerAlive: worker.running,
    peakRssBytes: peakRss(worker.child.pid),
    eventsPerSecond: produced / ingestSeconds,
    produceSeconds,
    ingestSeconds,
    lastPerfLine: perf.findLast((line) => !line.includes(' 0 in,')),
  }
  return result
}
