// What a worker costs as the partition count grows: the same N events of 1 KB JSON (the 12-column
// mapping of bench/participant.bench.ts) in topics of 4, 64, 256 and 1,000 partitions, each drained
// by real `floe run` workers (the CLI as child processes, integration/e2e/fleet.ts) on the local
// stack — Kafka, the REST catalog, data files in its local file:// warehouse — until the table
// holds every event. Per point it prints:
// - events per CPU-second of the worker processes: user + system time from /proc/<pid>/stat, from
//   the worker's `worker started` line (its start-up is left out) to the moment the table holds
//   every event; the Kafka client's work counts, the broker's and the catalog's do not;
// - events/s: records received between the first /metrics sample that saw some and the one that
//   saw them all (the workers' /metrics, scraped every second);
// - the ceiling on the same topic (bench/ceiling.ts: consume + JSON.parse) and the ratio;
// - peak RSS per worker (VmHWM of /proc/<pid>/status);
// - data files per commit (the snapshots' summaries) and their median size (the manifests);
// - each round's collecting and commit times, from the coordinator's `round committed` lines;
// - how many of the machine's cores the workers and the stack's processes (broker, catalog) kept
//   busy while the backlog was read (the same samples as events/s), and the rate the workers worked
//   through the events at: those cores times events per CPU-second. A worker that reads ahead of
//   its encoding (rows held in open segments) reads faster than it works; events/s shows the first.
// Not part of `npm test`; needs the local stack (npm run stack -- up).
//
//   node bench/scale.bench.ts [--events 1000000] [--partitions 4,64,256,1000] [--workers 1]
//     [--commit-interval 10] [--partitioned] [--rate R --seconds S] [--encoder-threads N]
//     [--threads N] [--worker-cpus LIST] [--layout partition|shared] [--cpu-profile DIR]
//     [--timeout-minutes 20] [--quick]
//
// --workers N: N workers started together. They share the partitions from the first read only on
//   a stack started with `--group-join-delay-ms 3000` (Kafka's default; the tests' stack uses 0, so
//   the first worker reads every partition until the next joins, and what it read is read again).
// --partitioned: the table is partitioned by bucket[3](user_id), three Iceberg partitions.
// --rate R [--seconds 180]: a live topic instead of a backlog: R events a second produced while the
//   workers run (the ceiling then reads the topic after them), and the commit visibility's p99. The
//   new topic is warmed first (warmTopic), and the rounds and visibility from the first round that
//   every partition answered on are printed apart as the steady state.
// --threads N: the workers' ingestion.threads, members on threads (default 1, whatever the cores).
// --encoder-threads N: the workers' ingestion.wal.encoderThreads (1: everything on the main thread),
//   to set one worker's backlog rate on one core beside its rate on all of them.
// --worker-node-options '...': Node options for the workers alone (e.g. --max-semi-space-size=32).
// --worker-cpus LIST: every thread of each worker pinned to these CPUs (taskset's list, e.g. 1), so
//   a worker of one member runs on one core alone: its single-core rate, beside which one worker on
//   every core is measured. The broker, the catalog and this process stay unpinned.
// --layout: the workers' ingestion.wal.layout (default: the workers' default, shared).
// --cpu-profile DIR: each worker writes a V8 CPU profile into DIR (node --cpu-prof), stopped with
//   SIGTERM and drained at the end of its point so the profile is written; open it in Chrome's
//   DevTools or read its self times with bench/cpu-profile.ts.
// --quick: 20,000 events at 4 and 64 partitions, a smoke run (not figures to quote).
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { WorkerProcess } from '../integration/e2e/fleet.ts'
import { endpoints, stackConfigYaml, uniqueName } from '../integration/harness.ts'
import { services, stackDir, stackOptions } from '../integration/stack/index.ts'
import { benchMapping, benchSchema } from '../participant/decode/bench-events.ts'
import { KafkaAdmin, type KafkaConnection } from '../shared/kafka/index.ts'
import { type CeilingResult, ceilingLine, measureCeiling } from './ceiling.ts'
import { produceBacklog, produceSteadily, warmTopic } from './scale-load.ts'
import {
  addedFileSizes,
  bucketQuantile,
  bucketsSince,
  counterTotal,
  cpuSecondsOf,
  type FloeCommit,
  histogramBuckets,
  peakRssOf,
  quantile,
  readTable,
  roundsOfLog,
} from './scale-probes.ts'

function flag(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 ? process.argv[at + 1] : undefined
}
const quick = process.argv.includes('--quick')
const rate = Number(flag('rate') ?? 0)
const steadySeconds = Number(flag('seconds') ?? 180)
const events = rate > 0 ? rate * steadySeconds : Number(flag('events') ?? (quick ? 20_000 : 1_000_000))
const partitionCounts = (flag('partitions') ?? (quick ? '4,64' : '4,64,256,1000')).split(',').map(Number)
const workerCount = Number(flag('workers') ?? 1)
const commitIntervalSeconds = Number(flag('commit-interval') ?? 10)
const partitioned = process.argv.includes('--partitioned')
const timeoutMs = Number(flag('timeout-minutes') ?? 20) * 60_000
// ingestion.wal.encoderThreads of the workers; unset, the workers' default (the cores available).
const encoderThreads = flag('encoder-threads')
// ingestion.wal.layout of the workers; unset, the workers' default.
const walLayout = flag('layout')
const cpuProfileDir = flag('cpu-profile')
// Node's options for the workers alone (the ceiling loop runs in this process, unchanged).
const workerNodeOptions = [
  process.env.NODE_OPTIONS ?? '',
  flag('worker-node-options') ?? '',
  cpuProfileDir ? `--cpu-prof --cpu-prof-dir=${cpuProfileDir}` : '',
]
  .join(' ')
  .trim()
const threads = Number(flag('threads') ?? 1)
const workerCpus = flag('worker-cpus')
const workerEnv: NodeJS.ProcessEnv = {
  FLOE_INGESTION__THREADS: String(threads),
  ...(workerNodeOptions ? { NODE_OPTIONS: workerNodeOptions } : {}),
}

const connection: KafkaConnection = { brokers: endpoints().kafka.brokers, clientId: 'floe-bench-scale' }
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`
const round0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toString() : '-')

/** Everything a point started, stopped in reverse even when the point fails or the run is interrupted. */
const cleanups: (() => Promise<void>)[] = []
async function cleanUp(): Promise<void> {
  while (cleanups.length > 0)
    await cleanups
      .pop()?.()
      .catch(() => {})
}
// Interrupted: no next point starts while what this one started is stopped.
let stopping = false
function stop(code: number): void {
  stopping = true
  void cleanUp().then(() => process.exit(code))
}
process.once('SIGINT', () => stop(130))
process.once('SIGTERM', () => stop(143))

async function configFile(dir: string, topic: string, controlTopic: string, table: string): Promise<string> {
  const config = join(dir, 'floe.yaml')
  await writeFile(
    config,
    `${stackConfigYaml('scale', { controlTopic })}ingestion:
  commitIntervalSeconds: ${commitIntervalSeconds}
  wal:
    dir: ${join(dir, 'wal-unused')}
${encoderThreads === undefined ? '' : `    encoderThreads: ${encoderThreads}\n`}${walLayout === undefined ? '' : `    layout: ${walLayout}\n`}datasets:
  - name: scale
    topic: ${topic}
    table: ${table}
    customMapping: ${JSON.stringify(benchMapping)}
    schema: ${JSON.stringify(benchSchema)}
    badRecords: skip
${partitioned ? '    partitionSpec: ["bucket[3](user_id)"]\n' : ''}log:
  level: info
`,
  )
  return config
}

interface PointResult {
  partitions: number
  cpuSeconds: number
  eventsPerCpuSecond: number
  eventsPerSecond: number
  ceiling: CeilingResult
  peakRss: number[]
  filesPerCommit: number[]
  medianFileBytes: number
  collectingMs: number[]
  committingMs: number[]
  roundMs: number[]
  firstCollectingMs: number
  partialRounds: number
  secondsToAllCommitted: number
  /**
   * Cores the workers and the stack's processes (broker, catalog) kept busy while the backlog was
   * read (from the first sample that saw records to the one that saw them all).
   */
  readingCores?: { workers: number; stack: number; seconds: number }
  /** The upper bound of the visibility histogram's bucket that holds its p99 (Infinity past the last). */
  visibilityP99Seconds: number
  /** A live topic's figures from the first round every partition answered on. */
  steady?: { rounds: number; roundMs: number[]; visibilityP99Seconds: number }
}

async function startWorkers(dir: string, config: string): Promise<{ worker: WorkerProcess; startCpu: number }[]> {
  const started: { worker: WorkerProcess; startCpu: number }[] = []
  for (let w = 1; w <= workerCount; w++) {
    const wal = join(dir, `w${w}`, 'wal')
    await mkdir(wal, { recursive: true })
    const worker = new WorkerProcess(`scale-w${w}`, config, join(dir, `w${w}.log`), workerEnv, wal)
    cleanups.push(async () => {
      // A profile is written at a clean exit only: drain first, and kill only what does not stop.
      if (cpuProfileDir) {
        worker.kill('SIGTERM')
        await Promise.race([worker.exited, sleep(60_000)])
      }
      worker.kill('SIGKILL')
      await worker.exited
    })
    if (workerCpus !== undefined) pinToCpus(worker)
    started.push({ worker, startCpu: 0 })
  }
  // Start-up (loading the CLI, the first catalog read) is not per-event cost: CPU counts from here.
  const deadline = Date.now() + 120_000
  for (const entry of started) {
    while (!entry.worker.logged('worker started')) {
      if (!entry.worker.running) throw new Error(`worker exited at start: ${lastWords(entry.worker)}`)
      if (Date.now() > deadline) throw new Error(`worker did not start: see ${entry.worker.logFile}`)
      await sleep(100)
    }
    // Again once started: a thread created while the first pinning ran may have escaped it.
    if (workerCpus !== undefined) pinToCpus(entry.worker)
    entry.startCpu = cpuSecondsOf(entry.worker.child.pid ?? 0) ?? 0
  }
  return started
}

/** Every thread of the worker on --worker-cpus; the threads it starts later inherit the mask. */
function pinToCpus(worker: WorkerProcess): void {
  execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', String(workerCpus), String(worker.child.pid)], {
    stdio: 'ignore',
  })
}

/** The last line a worker wrote, for an error that names why it stopped. */
function lastWords(worker: WorkerProcess): string {
  let text = ''
  try {
    text = readFileSync(worker.logFile, 'utf8').trim()
  } catch {}
  return `${text.split('\n').at(-1)?.slice(0, 400) ?? ''} (${worker.logFile})`
}

function metricsPort(worker: WorkerProcess): number | undefined {
  const port = worker.lines().find((l) => l.msg === 'worker started')?.metricsPort
  return typeof port === 'number' ? port : undefined
}

async function received(workers: WorkerProcess[], last: Map<WorkerProcess, number>): Promise<number> {
  for (const worker of workers) {
    const port = metricsPort(worker)
    if (port === undefined) continue
    // A busy worker may miss a scrape: its last count stands.
    const text = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2000) })
      .then((r) => r.text())
      .catch(() => undefined)
    if (text !== undefined) last.set(worker, counterTotal(text, 'floe_records_received_total'))
  }
  return [...last.values()].reduce((a, b) => a + b, 0)
}

async function metricsTexts(workers: WorkerProcess[]): Promise<string[]> {
  const texts: string[] = []
  for (const worker of workers) {
    const port = metricsPort(worker)
    if (port === undefined) continue
    const text = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) })
      .then((r) => r.text())
      .catch(() => undefined)
    if (text !== undefined) texts.push(text)
  }
  return texts
}

async function point(partitions: number): Promise<PointResult> {
  const name = uniqueName(`scale_${partitions}`)
  const topic = name
  const controlTopic = `${name}-control`
  const table = `${name}.events`
  const dir = await mkdtemp(join(tmpdir(), 'floe-bench-scale-'))
  cleanups.push(async () => {
    if (!process.env.FLOE_KEEP_E2E) await rm(dir, { recursive: true, force: true })
  })
  const admin = new KafkaAdmin(connection)
  cleanups.push(() => admin.close())
  cleanups.push(async () => {
    await admin.deleteTopic(topic).catch(() => {})
    await admin.deleteTopic(controlTopic).catch(() => {})
  })
  await admin.ensureTopic(topic, partitions)
  let ceiling: CeilingResult | undefined
  // Every event the workers must commit: on a live topic, the warm-up's too.
  let expected = events
  if (rate > 0) expected += await warmTopic(connection, topic, partitions)
  if (rate === 0) {
    await produceBacklog(connection, topic, partitions, events)
    ceiling = await measureCeiling({ topic, timeoutMs })
    console.log(`  ${ceilingLine(ceiling)}`)
  }

  const config = await configFile(dir, topic, controlTopic, table)
  const started = await startWorkers(dir, config)
  const workers = started.map((s) => s.worker)
  const begun = performance.now()
  // A failed producer fails the point at the next look, not as an unhandled rejection.
  let producerFailed: unknown
  const producing =
    rate > 0
      ? produceSteadily(connection, topic, partitions, rate, steadySeconds).catch((error: unknown) => {
          producerFailed = error
        })
      : Promise.resolve()
  const deadline = Date.now() + timeoutMs
  const counts = new Map<WorkerProcess, number>()
  // The first sample that saw records, and what it saw: the rate counts from there, so the time
  // before it (joining the group, the first fetch) and the sampling's granularity stay out.
  // Each with the CPU seconds the workers and the stack had used by then (readingCores).
  let firstRead: { at: number; count: number; cpu: CpuUsed } | undefined
  let lastRead: { at: number; cpu: CpuUsed } | undefined
  let committed = 0
  // On a live topic: from the first round that every partition answered, the fleet is steady
  // (joined, rebalanced, positioned); what the commit visibility histogram held then is warm-up.
  let steady: { at: number; visibility: Map<number, number> } | undefined
  let lastLine = begun
  let cpuSeconds = 0
  const cpuNow = () =>
    started.reduce((sum, s) => sum + ((cpuSecondsOf(s.worker.child.pid ?? 0) ?? s.startCpu) - s.startCpu), 0)
  const cpuUsed = (): CpuUsed => ({ workers: cpuNow(), stack: stackCpuSeconds() })
  while (committed < expected) {
    if (Date.now() > deadline) throw new Error(`not every event committed in time (${committed} of ${expected})`)
    if (producerFailed) throw producerFailed
    for (const worker of workers) {
      if (!worker.running) throw new Error(`worker ${worker.id} exited: ${lastWords(worker)}`)
    }
    await sleep(1000)
    const read = await received(workers, counts)
    const now = performance.now()
    if (read > 0 && read < expected) firstRead ??= { at: now, count: read, cpu: cpuUsed() }
    if (read >= expected) lastRead ??= { at: now, cpu: cpuUsed() }
    committed = (await readTable(endpoints().rest.uri, table))?.totalRecords ?? 0
    cpuSeconds = cpuNow()
    if (rate > 0 && !steady && workers.some((w) => roundsOfLog(w.lines()).some((r) => r.complete && r.records > 0))) {
      steady = {
        at: Date.now(),
        visibility: histogramBuckets(await metricsTexts(workers), 'floe_commit_visibility_seconds'),
      }
      console.log(`  ${((now - begun) / 1000).toFixed(0)} s: steady (a round that every partition answered)`)
    }
    if (now - lastLine >= 10_000) {
      lastLine = now
      const rss = workers.map((w) => mib(peakRssOf(w.child.pid ?? 0))).join(', ')
      console.log(
        `  ${((now - begun) / 1000).toFixed(0)} s: ${read} read, ${committed} committed, ${cpuSeconds.toFixed(1)} CPU s, peak RSS ${rss}`,
      )
    }
  }
  const secondsToAllCommitted = (performance.now() - begun) / 1000
  const peakRss = workers.map((w) => peakRssOf(w.child.pid ?? 0))
  const readEnd = lastRead?.at ?? performance.now()
  // A backlog read within one sample has no first sample: then the rate counts from the start.
  const eventsPerSecond = firstRead
    ? (expected - firstRead.count) / Math.max(0.001, (readEnd - firstRead.at) / 1000)
    : expected / Math.max(0.001, (readEnd - begun) / 1000)

  const commits: FloeCommit[] = (await readTable(endpoints().rest.uri, table))?.commits ?? []
  const sizes: number[] = []
  for (const commit of commits) sizes.push(...(await addedFileSizes(commit)))
  const rounds = workers.flatMap((w) => roundsOfLog(w.lines())).filter((r) => r.records > 0)
  const visibility = histogramBuckets(await metricsTexts(workers), 'floe_commit_visibility_seconds')
  const steadyRounds = steady ? rounds.filter((r) => r.at > (steady?.at ?? 0)) : []
  await producing
  if (!ceiling) {
    // On a live topic the ceiling reads what was produced once the workers are gone, not beside them.
    for (const worker of workers) worker.kill('SIGKILL')
    await Promise.all(workers.map((w) => w.exited))
    ceiling = await measureCeiling({ topic, timeoutMs })
    console.log(`  ${ceilingLine(ceiling)}`)
  }
  const result: PointResult = {
    partitions,
    cpuSeconds,
    eventsPerCpuSecond: expected / cpuSeconds,
    eventsPerSecond,
    ceiling,
    peakRss,
    filesPerCommit: commits.map((c) => c.addedFiles),
    medianFileBytes: quantile(sizes, 0.5),
    collectingMs: rounds.map((r) => r.collectingMs),
    committingMs: rounds.map((r) => r.committingMs),
    roundMs: rounds.map((r) => r.collectingMs + r.committingMs),
    firstCollectingMs: rounds[0]?.collectingMs ?? Number.NaN,
    partialRounds: rounds.filter((r) => r.partial).length,
    secondsToAllCommitted,
    ...(firstRead &&
      lastRead && { readingCores: coresBusy(firstRead.cpu, lastRead.cpu, (lastRead.at - firstRead.at) / 1000) }),
    visibilityP99Seconds: bucketQuantile(visibility, 0.99),
    ...(steady && {
      steady: {
        rounds: steadyRounds.length,
        roundMs: steadyRounds.map((r) => r.collectingMs + r.committingMs),
        visibilityP99Seconds: bucketQuantile(bucketsSince(visibility, steady.visibility), 0.99),
      },
    }),
  }
  await cleanUp()
  return result
}

/**
 * CPU seconds the local stack's processes (broker, catalog, Azurite) have used: on a machine they
 * share with the workers, what of its cores a drain leaves the worker.
 */
function stackCpuSeconds(): number {
  return services(stackDir()).reduce((sum, service) => sum + (cpuSecondsOf(service.pid) ?? 0), 0)
}

/** CPU seconds used so far by the workers (since they started) and by the stack's processes. */
interface CpuUsed {
  workers: number
  stack: number
}

function coresBusy(from: CpuUsed, to: CpuUsed, seconds: number): CpuUsed & { seconds: number } {
  return { workers: (to.workers - from.workers) / seconds, stack: (to.stack - from.stack) / seconds, seconds }
}

function report(r: PointResult): void {
  const ratio = r.eventsPerCpuSecond / r.ceiling.eventsPerCpuSecond
  const files = r.filesPerCommit
  console.log(
    `${r.partitions} partitions: ${round0(r.eventsPerCpuSecond)} events per CPU-second (${r.cpuSeconds.toFixed(1)} CPU s), ` +
      `${round0(r.eventsPerSecond)} events/s; ceiling ${round0(r.ceiling.eventsPerCpuSecond)} per CPU-second ` +
      `(${round0(r.ceiling.eventsPerSecond)} events/s), ratio ${ratio.toFixed(2)}; all committed ${r.secondsToAllCommitted.toFixed(0)} s after start`,
  )
  const cores = r.readingCores
  if (cores) {
    console.log(
      `  while the backlog was read (${cores.seconds.toFixed(0)} s): the workers kept ${cores.workers.toFixed(2)} cores busy, ` +
        `the stack (broker, catalog) ${cores.stack.toFixed(2)}, of ${cpus().length}; worked through at about ` +
        `${round0(cores.workers * r.eventsPerCpuSecond)} events/s (those cores x events per CPU-second)`,
    )
  }
  console.log(
    `  peak RSS ${r.peakRss.map(mib).join(', ')}; ${files.length} commits, data files per commit ${quantile(files, 0.5)} median ` +
      `(${Math.min(...files)}-${Math.max(...files)}), median file ${(r.medianFileBytes / 1024).toFixed(0)} KiB`,
  )
  console.log(
    `  rounds with records: ${r.roundMs.length} (${r.partialRounds} cut short by the timeout); collecting median ${round0(quantile(r.collectingMs, 0.5))} ms, ` +
      `max ${round0(quantile(r.collectingMs, 1))} ms, first ${round0(r.firstCollectingMs)} ms; commit median ${round0(quantile(r.committingMs, 0.5))} ms, ` +
      `max ${round0(quantile(r.committingMs, 1))} ms; collecting + commit p99 ${round0(quantile(r.roundMs, 0.99))} ms`,
  )
  if (rate > 0) console.log(`  commit visibility p99 ≤ ${r.visibilityP99Seconds} s (the histogram's bucket)`)
  if (r.steady) {
    console.log(
      `  steady (after the first round every partition answered): ${r.steady.rounds} rounds, collecting + commit p99 ` +
        `${round0(quantile(r.steady.roundMs, 0.99))} ms, max ${round0(quantile(r.steady.roundMs, 1))} ms; commit visibility p99 ≤ ${r.steady.visibilityP99Seconds} s`,
    )
  }
}

function table(results: PointResult[]): void {
  console.log(
    '\n| partitions | events per CPU-second | events/s | ceiling per CPU-second | ratio | peak RSS | files per commit (median, range) | median file | collecting median / max / first | commit median / max | collecting + commit p99 |',
  )
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  for (const r of results) {
    const files = r.filesPerCommit
    console.log(
      `| ${r.partitions} | ${round0(r.eventsPerCpuSecond)} | ${round0(r.eventsPerSecond)} | ${round0(r.ceiling.eventsPerCpuSecond)} | ` +
        `${(r.eventsPerCpuSecond / r.ceiling.eventsPerCpuSecond).toFixed(2)} | ${r.peakRss.map(mib).join(', ')} | ` +
        `${quantile(files, 0.5)} (${Math.min(...files)}-${Math.max(...files)}) | ${(r.medianFileBytes / 1024).toFixed(0)} KiB | ` +
        `${round0(quantile(r.collectingMs, 0.5))} / ${round0(quantile(r.collectingMs, 1))} / ${round0(r.firstCollectingMs)} ms | ` +
        `${round0(quantile(r.committingMs, 0.5))} / ${round0(quantile(r.committingMs, 1))} ms | ${round0(quantile(r.roundMs, 0.99))} ms |`,
    )
  }
}

console.log(
  `${events} events of 1 KB, 12 columns, ${partitioned ? 'bucket[3](user_id): 3 Iceberg partitions' : 'unpartitioned'}; ` +
    `${workerCount} worker${workerCount === 1 ? '' : 's'}${threads === 1 ? '' : ` of ${threads} threads`}` +
    `${workerCpus === undefined ? '' : ` pinned to CPUs ${workerCpus}`}, ` +
    `${commitIntervalSeconds} s commits, ` +
    `${encoderThreads === undefined ? '' : `encoderThreads ${encoderThreads}, `}local file:// warehouse; ` +
    `node ${process.version}; ${cpus()[0]?.model ?? 'unknown CPU'} (${cpus().length} cores, ${mib(totalmem())})`,
)
if (workerCount > 1 && !stackOptions().groupJoinDelayMs) {
  console.log(
    `  the stack's broker does not wait for more members (group.initial.rebalance.delay.ms 0): the first ` +
      'worker reads every partition until the next joins; `npm run stack -- up --group-join-delay-ms 3000` does',
  )
}
const results: PointResult[] = []
let failed = false
for (const partitions of partitionCounts) {
  if (stopping) break
  console.log(`== ${partitions} partitions`)
  try {
    const result = await point(partitions)
    report(result)
    results.push(result)
  } catch (error) {
    failed = true
    console.log(`${partitions} partitions: FAILED: ${error instanceof Error ? error.message : String(error)}`)
  } finally {
    await cleanUp()
  }
}
if (results.length > 0) table(results)
process.exit(failed ? 1 : 0)
