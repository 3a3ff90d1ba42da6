// WAL throughput: rows/s through PartitionLog.append + rotate for a 12-column event, with one
// Iceberg partition and with sixteen (rows of all sixteen interleaved in every batch, the worst
// case for grouping), against the bare Parquet writer as the reference. Rotates every 200,000
// rows as a commit would. Prints the median of the runs per case. Not part of `npm test`.
//
//   node participant/wal/wal.bench.ts [rows=1000000] [runs=5]
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PartitionSpec, StructValue } from '../../shared/iceberg/index.ts'
import { compilePartitioner } from '../../shared/iceberg/partitioning/index.ts'
import { openDataFile } from '../../shared/parquet/index.ts'
import { eventPool, schema } from './bench-rows.ts'
import { PartitionLog } from './index.ts'

const totalRows = Number(process.argv[2] ?? 1_000_000)
const runs = Number(process.argv[3] ?? 5)
const batchRows = 10_000 // about one poll of Kafka records
const rotateEvery = 200_000

const onePartition: PartitionSpec = {
  'spec-id': 0,
  fields: [{ 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' }],
}
const sixteenPartitions: PartitionSpec = {
  'spec-id': 1,
  fields: [
    { 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' },
    { 'source-id': 3, 'field-id': 1001, name: 'user_bucket', transform: 'bucket[16]' },
  ],
}

/** The batches of one run, sliced once so slicing is not measured. */
function batchesOf(pool: StructValue[]): StructValue[][] {
  const batches: StructValue[][] = []
  for (let written = 0; written < totalRows; written += batchRows) {
    const from = written % pool.length
    batches.push(pool.slice(from, from + Math.min(batchRows, totalRows - written)))
  }
  return batches
}

interface Result {
  seconds: number
  cpuSeconds: number
  files: number
}

async function measure(run: () => Promise<number>): Promise<Result> {
  const started = performance.now()
  const cpuStarted = process.cpuUsage()
  const files = await run()
  const cpu = process.cpuUsage(cpuStarted)
  return { seconds: (performance.now() - started) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6, files }
}

async function throughWal(directory: string, spec: PartitionSpec, batches: StructValue[][]): Promise<number> {
  const dir = join(directory, randomUUID())
  const log = new PartitionLog({ dir, topic: 'events', partition: 0, schema, spec, startOffset: 0n })
  let offset = 0n
  let sinceRotation = 0
  let files = 0
  for (const batch of batches) {
    offset += BigInt(batch.length)
    await log.append(batch, offset)
    sinceRotation += batch.length
    if (sinceRotation >= rotateEvery || log.rotationDue() !== undefined) {
      files += (await log.rotate('commit'))?.segments.length ?? 0
      sinceRotation = 0
    }
  }
  files += (await log.rotate('shutdown'))?.segments.length ?? 0
  await log.close()
  await rm(dir, { recursive: true, force: true })
  return files
}

/** The bare writer, one file per 200,000 rows: what the WAL adds is the difference. */
async function throughWriter(directory: string, batches: StructValue[][]): Promise<number> {
  let files = 0
  let writer: Awaited<ReturnType<typeof openDataFile>> | undefined
  let sinceRotation = 0
  for (const batch of batches) {
    writer ??= await openDataFile({ path: join(directory, `${randomUUID()}.parquet`), schema })
    await writer.append(batch)
    sinceRotation += batch.length
    if (sinceRotation >= rotateEvery) {
      await writer.close()
      writer = undefined
      files++
      sinceRotation = 0
    }
  }
  if (writer) {
    await writer.close()
    files++
  }
  return files
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

async function main(): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'floe-bench-wal-'))
  const pool = eventPool(Math.min(100_000, totalRows))
  const batches = batchesOf(pool)
  const cases: [string, () => Promise<number>][] = [
    ['openDataFile alone (reference)', () => throughWriter(directory, batches)],
    ['WAL, 1 Iceberg partition: day(ts)', () => throughWal(directory, onePartition, batches)],
    ['WAL, 16 Iceberg partitions: day(ts), bucket[16]', () => throughWal(directory, sixteenPartitions, batches)],
  ]
  console.log(`${totalRows} rows, ${schema.fields.length} columns, batches of ${batchRows}, rotation every`)
  console.log(`${rotateEvery} rows, zstd(3), row groups of 100,000, median of ${runs} runs, Node ${process.version}`)

  // the partition key alone: the per-row work the WAL adds in front of the writer
  const keyOf = compilePartitioner(sixteenPartitions, schema).key
  const keyTimes: number[] = []
  for (let run = 0; run < runs; run++) {
    const started = performance.now()
    let distinct = 0
    let last = ''
    for (const batch of batches) {
      for (const row of batch) {
        const key = keyOf(row)
        if (key !== last) distinct++
        last = key
      }
    }
    keyTimes.push((performance.now() - started) / 1000)
    if (distinct === 0) throw new Error('no keys')
  }
  console.log(
    `${'partition key only (16 partitions)'.padEnd(50)}${(totalRows / median(keyTimes)).toFixed(0).padStart(9)} rows/s`,
  )

  // runs interleaved across cases so drift on a shared host hits every case alike
  const results = new Map<string, Result[]>(cases.map(([name]) => [name, []]))
  for (let run = 0; run < runs; run++) {
    for (const [name, work] of cases) results.get(name)?.push(await measure(work))
  }
  for (const [name, caseResults] of results) {
    const seconds = median(caseResults.map((result) => result.seconds))
    const cpuSeconds = median(caseResults.map((result) => result.cpuSeconds))
    console.log(
      [
        name.padEnd(48),
        `${(totalRows / seconds).toFixed(0).padStart(9)} rows/s`,
        `${seconds.toFixed(2)} s`,
        `${cpuSeconds.toFixed(2)} s CPU`,
        `${caseResults[0]?.files} files`,
      ].join('  '),
    )
  }
  console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`)
  await rm(directory, { recursive: true, force: true })
}

await main()
