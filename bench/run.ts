// `npm run bench`: runs every benchmark the README quotes, one after the other, and prints each one's
// output under the command that reproduces it. `docs/benchmarks.md` holds the last full output.
//
//   node bench/run.ts            the README's sizes (about 15 minutes on a quiet 2-core machine)
//   node bench/run.ts --quick    scaled down (a few minutes): a smoke run, not figures to quote
//   node bench/run.ts --only parquet-writer,wal   a subset, by name
//
// The participant, scale and fuzz benchmarks need the local stack (`npm run stack -- up`): without it
// they are not run and the run exits 1, saying so. The kafka-clients comparison is not part of it
// (it installs two more Kafka clients of its own; see bench/kafka-clients/RESULTS.md).
import { execFileSync, spawn } from 'node:child_process'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { running, services, stackDir } from '../integration/stack/index.ts'

const root = join(import.meta.dirname, '..')
const quick = process.argv.includes('--quick')
const onlyAt = process.argv.indexOf('--only')
const only = onlyAt >= 0 ? new Set((process.argv[onlyAt + 1] ?? '').split(',')) : undefined

interface Benchmark {
  name: string
  /** What it measures, as the README's table says. */
  what: string
  needsStack: boolean
  args: string[]
  quickArgs: string[]
  env?: Record<string, string>
}

const benchmarks: Benchmark[] = [
  {
    name: 'participant',
    what: 'topic -> ready WAL files, 1 KB JSON, 12-column mapping; encoderThreads 1 and 2',
    needsStack: true,
    args: ['bench/participant.bench.ts', '1000000', '3', '3', '1,2'],
    quickArgs: ['bench/participant.bench.ts', '20000', '1'],
  },
  {
    name: 'inferred',
    what: 'the same topic -> ready WAL files into a dataset that infers its columns, beside the mapping (encoderThreads 1)',
    needsStack: true,
    args: ['bench/participant.bench.ts', '1000000', '3', '3', '1', 'mapped,inferred'],
    quickArgs: ['bench/participant.bench.ts', '20000', '1', '3', '1', 'mapped,inferred'],
  },
  {
    name: 'routing',
    what: 'the same topic -> ready WAL files routed by a field into 4 and 1,000 tables, and 90 % into 9 hot tables among 150 and 1,000 rare ones (maxOpenTables 100), beside the mapping; shared layout, RSS, rotations, evictions',
    needsStack: true,
    args: ['bench/participant.bench.ts', '200000', '3', '3', '1', 'mapped,routed:4,routed:1000,hot:150,hot:1000'],
    quickArgs: ['bench/participant.bench.ts', '20000', '1', '3', '1', 'mapped,routed:4,routed:1000,hot:150'],
  },
  {
    name: 'decode',
    what: 'decode only (UTF-8 + depth check, JSON.parse, JMESPath, conversion)',
    needsStack: false,
    args: ['participant/decode/decode.bench.ts'],
    quickArgs: ['participant/decode/decode.bench.ts', '5000'],
  },
  {
    name: 'parquet-writer',
    what: '200k rows, 12 columns, zstd(3), with statistics, and with two bloom-filter columns',
    needsStack: false,
    args: ['bench/parquet-writer.bench.ts', '200000'],
    quickArgs: ['bench/parquet-writer.bench.ts', '20000'],
  },
  {
    name: 'wal',
    what: 'WAL append + rotate, 1 and 16 Iceberg partitions',
    needsStack: false,
    args: ['participant/wal/wal.bench.ts', '200000', '3'],
    quickArgs: ['participant/wal/wal.bench.ts', '20000', '1'],
  },
  {
    name: 'manifest',
    what: '100k manifest entries with full statistics, written and read',
    needsStack: false,
    args: ['shared/iceberg/manifests/manifest.bench.ts'],
    quickArgs: ['shared/iceberg/manifests/manifest.bench.ts', '10000'],
  },
  {
    name: 'cores',
    what: 'what two cores give on this machine: JSON.parse and SHA-256 on one thread, then on two at once',
    needsStack: false,
    args: ['bench/cores.ts', '3'],
    quickArgs: ['bench/cores.ts', '1'],
  },
  {
    name: 'scale',
    what: 'real floe run worker over 4 to 1,000 partitions: cost per event beside the ceiling, RSS, files and rounds',
    needsStack: true,
    args: ['bench/scale.bench.ts', '--events', '200000', '--partitions', '4,64,256,1000'],
    quickArgs: ['bench/scale.bench.ts', '--quick'],
  },
  {
    name: 'fuzz',
    what: 'a real floe run worker over pre-filled records, clean and then 20 % hostile',
    needsStack: true,
    args: ['bench/fuzz.ts', '1000000', '0.2', '--compare'],
    quickArgs: ['bench/fuzz.ts', '20000', '0.2', '--compare'],
    env: { FUZZ_DLQ_MAX_BYTES: '1048576' },
  },
]

function stackIsUp(): boolean {
  const dir = stackDir()
  const names = services(dir).map((s) => s.name)
  return names.length > 0 && names.every((name) => running(dir, name))
}

// The Node options a worker runs with (bin/floe takes them from bin/node-options): a benchmark
// that runs the record path in its own process then measures it as a worker would run it.
const nodeOptions = execFileSync(join(root, 'bin', 'node-options'), { encoding: 'utf8' })
  .trim()
  .split(/\s+/)
  .filter(Boolean)

function exec(args: string[], env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...nodeOptions, ...args], {
      stdio: 'inherit',
      cwd: root,
      env: { ...process.env, ...env },
    })
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)))
  })
}

const chosen = benchmarks.filter((b) => !only || only.has(b.name))
if (only && chosen.length !== only.size) {
  console.error(`bench: unknown name in --only; the benchmarks are ${benchmarks.map((b) => b.name).join(', ')}`)
  process.exit(2)
}

const cpu = cpus()[0]?.model ?? 'unknown CPU'
console.log(
  `${new Date().toISOString()}: ${cpus().length} cores (${cpu}), Node ${process.version}${quick ? ', --quick' : ''}`,
)
const stackUp = stackIsUp()
const failed: string[] = []
for (const b of chosen) {
  const args = quick ? b.quickArgs : b.args
  const env = Object.entries(b.env ?? {}).map(([k, v]) => `${k}=${v} `)
  console.log(`\n== ${b.name}: ${b.what}\n$ ${env.join('')}node ${[...nodeOptions, ...args].join(' ')}`)
  if (b.needsStack && !stackUp) {
    console.log(`not run: it needs the local stack, which is not up (npm run stack -- up)`)
    failed.push(`${b.name} (no stack)`)
    continue
  }
  const started = performance.now()
  const code = await exec(args, b.env)
  console.log(`(${b.name}: exit ${code}, ${((performance.now() - started) / 1000).toFixed(0)} s)`)
  if (code !== 0) failed.push(b.name)
}
if (failed.length) {
  console.error(`\nbench: not every benchmark ran: ${failed.join(', ')}`)
  process.exit(1)
}
