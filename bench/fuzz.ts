// Hostile input at scale: integration/hostile's fuzz run (generator.ts, fuzz-run.ts) over a
// pre-filled topic, one real `floe run` worker, pyiceberg counting every good id after a settling
// time. Prints one line per run: records, rows, dead-lettered by reason, vanished, duplicates,
// whether the worker is alive, its peak RSS and events/s (first record read to last, from /metrics).
// With --compare, the same number of records with no hostile input first: the cost of bad input.
// Not part of `npm test`; needs the local stack (node integration/stack/stack.ts up).
//
//   node bench/fuzz.ts [records=1000000] [hostileRate=0.2] [--compare]
import { type FuzzResult, startFuzzRun } from '../integration/hostile/fuzz-run.ts'

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'))
const records = Number(args[0] ?? 1_000_000)
const hostileRate = Number(args[1] ?? 0.2)
const compare = process.argv.includes('--compare')

function line(rate: number, r: FuzzResult): string {
  const reasons = Object.entries(r.deadLetteredByReason)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ')
  const duplicates = r.settledIds?.duplicated ?? Number.NaN
  const missing = r.settledIds?.missing ?? Number.NaN
  return (
    `fuzz ${Math.round(rate * 100)}% hostile: ${r.produced} records, ${r.rows} rows (${r.goodRows} good of ${r.good}), ` +
    `${r.deadLettered} dead-lettered (${reasons || 'none'}; ${r.cut} cut), ${r.dropped} dropped, ${r.vanished} vanished, ` +
    `${duplicates} duplicates, ${missing} missing, worker ${r.workerAlive ? 'alive' : 'DEAD'}, ` +
    `peak RSS ${(r.peakRssBytes / 2 ** 20).toFixed(0)} MiB, ${r.eventsPerSecond.toFixed(0)} events/s ` +
    `(${r.ingestSeconds.toFixed(1)} s to read; produced in ${r.produceSeconds.toFixed(1)} s)`
  )
}

async function one(rate: number): Promise<FuzzResult> {
  const run = startFuzzRun({
    records,
    hostileRate: rate,
    partitions: 3,
    seed: 1,
    // Oversize records just over 128 KiB; a dead-letter topic of 64 KiB, so the incompressible ones
    // (about 100 KiB compressed) are cut to land.
    maxRecordBytes: 128 * 1024,
    dlqMaxMessageBytes: Number(process.env.FUZZ_DLQ_MAX_BYTES ?? 64 * 1024),
    commitIntervalSeconds: 5,
    ...(process.env.FUZZ_OVERSIZE_SHARE ? { oversizeShare: Number(process.env.FUZZ_OVERSIZE_SHARE) } : {}),
    timeoutMs: 30 * 60_000,
    progress: (text) => console.log(`  ${text}`),
  })
  const stop = () => void run.cleanup().then(() => process.exit(130))
  process.once('SIGINT', stop)
  try {
    const result = await run.result
    console.log(line(rate, result))
    if (result.lastPerfLine) console.log(`  last busy ${result.lastPerfLine}`)
    return result
  } finally {
    process.off('SIGINT', stop)
    await run.cleanup()
  }
}

const baseline = compare ? await one(0) : undefined
const hostile = await one(hostileRate)
if (baseline) {
  const ratio = hostile.eventsPerSecond / baseline.eventsPerSecond
  console.log(
    `cost of bad input: ${baseline.eventsPerSecond.toFixed(0)} events/s clean, ${hostile.eventsPerSecond.toFixed(0)} events/s at ${Math.round(hostileRate * 100)}% hostile (${(ratio * 100).toFixed(0)}%)`,
  )
}
const failed = hostile.vanished !== 0 || !hostile.workerAlive || (hostile.settledIds?.duplicated ?? 1) !== 0
process.exit(failed ? 1 : 0)
