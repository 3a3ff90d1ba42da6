// Parquet data-file writer throughput: 1M rows of a 12-column event shape written to a local file
// with zstd, with and without footer statistics (which feed Iceberg's metrics), and with a bloom
// filter on two key columns. Prints the median of 3 runs per case. Not part of `npm test`.
//
//   node bench/parquet-writer.bench.ts [rows=1000000]
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Schema, StructValue } from '../shared/iceberg/index.ts'
import { type DataFileWriterOptions, openDataFile } from '../shared/parquet/index.ts'

const totalRows = Number(process.argv[2] ?? 1_000_000)
const batchRows = 10_000 // about one poll of Kafka records per append
const runs = 3

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'event_id', required: true, type: 'uuid' },
    { id: 2, name: 'ts', required: true, type: 'timestamptz' },
    { id: 3, name: 'user_id', required: true, type: 'long' },
    { id: 4, name: 'session_id', required: true, type: 'string' },
    { id: 5, name: 'event_type', required: true, type: 'string' },
    { id: 6, name: 'page', required: true, type: 'string' },
    { id: 7, name: 'referrer', required: false, type: 'string' },
    { id: 8, name: 'amount', required: false, type: 'double' },
    { id: 9, name: 'quantity', required: true, type: 'long' },
    { id: 10, name: 'country', required: true, type: 'string' },
    { id: 11, name: 'device', required: true, type: 'string' },
    { id: 12, name: 'payload', required: true, type: 'string' },
  ],
}

const eventTypes = ['view', 'click', 'purchase', 'add_to_cart', 'remove', 'search', 'login', 'logout']
const countries = Array.from({ length: 20 }, (_, i) => `C${String.fromCharCode(65 + i)}`)
const devices = ['ios', 'android', 'web', 'tablet', 'tv']

/**
 * A pool of distinct rows, cycled through so 1M rows need not all sit in memory at once. Strings
 * come out of JSON.parse, as in the real pipeline: V8 compares the flat strings it makes much
 * faster than the rope strings that concatenation (or crypto.randomUUID) produces.
 */
function eventPool(size: number): StructValue[] {
  const start = 1_700_000_000_000_000n
  return Array.from({ length: size }, (_, i) => {
    const message = JSON.parse(
      JSON.stringify({
        event_id: randomUUID(),
        session_id: randomUUID(),
        page: `/catalog/item/${Math.floor(Math.random() * 1000)}`,
        referrer: i % 2 === 0 ? null : `https://example.com/ref/${i % 97}`,
        payload: JSON.stringify({ a: i, b: randomUUID(), c: 'x'.repeat(60 + (i % 40)), d: [1, 2, 3] }),
      }),
    )
    return {
      event_id: new Uint8Array(Buffer.from(message.event_id.replaceAll('-', ''), 'hex')),
      ts: start + BigInt(i) * 1_000n,
      user_id: BigInt(Math.floor(Math.random() * 5_000_000)),
      session_id: message.session_id,
      event_type: eventTypes[i % eventTypes.length] as string,
      page: message.page,
      referrer: message.referrer,
      amount: i % 100 === 0 ? null : Math.round(Math.random() * 100_000) / 100,
      quantity: BigInt(1 + (i % 5)),
      country: countries[i % countries.length] as string,
      device: devices[i % devices.length] as string,
      payload: message.payload,
    }
  })
}

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
    ['zstd(3), no statistics', { statistics: false }],
    ['zstd(3), statistics + bloom(event_id, user_id)', { bloomFilters: [{ fieldId: 1 }, { fieldId: 3 }] }],
    ['zstd(1), statistics + metrics', { compressionLevel: 1 }],
    ['snappy, statistics + metrics', { codec: 'snappy' }],
  ]
  console.log(`${totalRows} rows, ${schema.fields.length} columns, ${inputPerRow.toFixed(0)} B/row of values,`)
  console.log(`batches of ${batchRows}, row groups of 100,000, median of ${runs} runs, Node ${process.version}`)

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
