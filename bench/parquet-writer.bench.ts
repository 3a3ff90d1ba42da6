// Parquet data-file writer throughput: 1M rows of a 12-column event shape written to a local file
// with zstd, with and without footer statistics (which feed Iceberg's metrics), and with a bloom
// filter on two key columns. Prints the median of 3 runs per case. Not part of `npm test`.
//
//   node bench/parquet-writer.bench.ts [rows=1000000]
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventPool, schema } from '../participant/wal/bench-rows.ts'
import type { StructValue } from '../shared/iceberg/index.ts'
import { type DataFileWriterOptions, openDataFile } from '../shared/parquet/index.ts'

const totalRows = Number(process.argv[2] ?? 1_000_000)
const batchRows = 10_000 // about one poll of Kafka records per append
const runs = 3

/** Uncompressed size of the values, the input side of MB/s (strings as UTF-8 bytes). */
function inputBytes(rows: readonly StructValue[]): number {
  let bytes = 0
  for (const row of rows) {
    for (const value of Object.values(row)) {
      if (typeof value === 'string') bytes += Buffer.byteLength(value)
      else if (value instanceof Uint8Array) bytes += value.byteLength
      else if (value !== null) bytes += 8
    }
  }
  return bytes
}

interface Result {
  seconds: number
  /** This process's CPU time: less disturbed than wall time by other load on a shared host. */
  cpuSeconds: number
  fileBytes: number
}

async function writeOnce(directory: string, pool: StructValue[], options: Partial<DataFileWriterOptions>) {
  const path = join(directory, `${randomUUID()}.parquet`)
  const started = performance.now()
  const cpuStarted = process.cpuUsage()
  const writer = await openDataFile({ path, schema, ...options })
  for (let written = 0; written < totalRows; written += batchRows) {
    const from = written % pool.length
    await writer.append(pool.slice(from, from + Math.min(batchRows, totalRows - written)))
  }
  const metrics = await writer.close()
  const seconds = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuStarted)
  const cpuSeconds = (cpu.user + cpu.system) / 1e6
  const fileBytes = (await stat(path)).size
  if (BigInt(fileBytes) !== metrics.fileSizeInBytes) throw new Error('metrics disagree with the file size')
  await rm(path)
  return { seconds, cpuSeconds, fileBytes }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

async function main(): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'floe-bench-parquet-'))
  const pool = eventPool(Math.min(100_000, totalRows))
  const inputPerRow = inputBytes(pool) / pool.length
  const cases: [string, Partial<DataFileWriterOptions>][] = [
    ['zstd(3), statistics + metrics', {}],
    // the WAL's segments cut row groups at ingestion.wal.rowGroupBytes, 4 MiB by default
    ['zstd(3), statistics + metrics, 4 MiB row groups', { rowGroupBytes: 4 * 1024 * 1024 }],
    ['zstd(3), no statistics', { statistics: false }],
    ['zstd(3), statistics + bloom(event_id, user_id)', { bloomFilters: [{ fieldId: 1 }, { fieldId: 3 }] }],
    ['zstd(1), statistics + metrics', { compressionLevel: 1 }],
    ['snappy, statistics + metrics', { codec: 'snappy' }],
  ]
  console.log(`${totalRows} rows, ${schema.fields.length} columns, ${inputPerRow.toFixed(0)} B/row of values,`)
  console.log(
    `batches of ${batchRows}, row groups of 100,000 rows or 16 MiB unless noted, median of ${runs} runs, Node ${process.version}`,
  )

  // transposing rows into per-column buffers is the only work the row-shaped API adds
  const transposeTimes: number[] = []
  for (let run = 0; run < runs; run++) {
    const names = schema.fields.map((field) => field.name)
    const started = performance.now()
    let columns: unknown[][] = names.map(() => [])
    for (let i = 0; i < totalRows; i++) {
      const row = pool[i % pool.length] as StructValue
      for (let c = 0; c < names.length; c++) (columns[c] as unknown[]).push(row[names[c] as string])
      if (columns[0]?.length === 100_000) columns = names.map(() => [])
    }
    transposeTimes.push((performance.now() - started) / 1000)
  }
  const transpose = median(transposeTimes)
  console.log(`transpose rows to columns only: ${(totalRows / transpose).toFixed(0)} rows/s`)

  // runs are interleaved across cases so that drift on a shared host hits every case alike
  const results = new Map<string, Result[]>(cases.map(([name]) => [name, []]))
  for (let run = 0; run < runs; run++) {
    for (const [name, options] of cases) results.get(name)?.push(await writeOnce(directory, pool, options))
  }
  for (const [name, caseResults] of results) {
    const seconds = median(caseResults.map((r) => r.seconds))
    const fileBytes = median(caseResults.map((r) => r.fileBytes))
    const cpuSeconds = median(caseResults.map((r) => r.cpuSeconds))
    const rowsPerSecond = totalRows / seconds
    console.log(
      [
        name.padEnd(48),
        `${rowsPerSecond.toFixed(0).padStart(8)} rows/s`,
        `${((rowsPerSecond * inputPerRow) / 1e6).toFixed(1).padStart(6)} MB/s in`,
        `${(fileBytes / seconds / 1e6).toFixed(1).padStart(5)} MB/s out`,
        `${(fileBytes / 1e6).toFixed(1)} MB file`,
        `${seconds.toFixed(2)} s`,
        `${cpuSeconds.toFixed(2)} s CPU`,
      ].join('  '),
    )
  }
  console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`)
  await rm(directory, { recursive: true, force: true })
}

await main()
