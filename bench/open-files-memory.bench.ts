// What open data files really hold in memory, against what the writers' accounting says: opens N
// files at once (as a worker does with N open WAL segments), appends R decoded 1 KB events to
// each, flushes a row group in each, and prints heap, ArrayBuffer and RSS growth per step beside
// the writers' own figures. No Kafka: the events go through the real decoder of the participant
// benchmark. Run with --expose-gc so each figure is measured after a full collection.
//
//   node --expose-gc bench/open-files-memory.bench.ts [files=1000] [rows=200]
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { getHeapStatistics } from 'node:v8'
import { benchDataset, benchEvent } from '../participant/decode/bench-events.ts'
import { compileDecoder } from '../participant/decode/index.ts'
import type { StructValue } from '../shared/iceberg/index.ts'
import { type DataFileWriter, openDataFile } from '../shared/parquet/index.ts'

const files = Number(process.argv[2] ?? 1000)
const rows = Number(process.argv[3] ?? 200)
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with node --expose-gc')

const dataset = benchDataset()
const decoder = compileDecoder(dataset, { maxRecordBytes: 1 << 20 })

interface Sample {
  heap: number
  arrayBuffers: number
  rss: number
}
function sample(): Sample {
  gc?.()
  gc?.()
  const usage = process.memoryUsage()
  return { heap: getHeapStatistics().used_heap_size, arrayBuffers: usage.arrayBuffers, rss: usage.rss }
}
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1).padStart(8)
function line(step: string, from: Sample, to: Sample, accounted: number): void {
  const per = (bytes: number) => `${Math.round(bytes / files)}`.padStart(8)
  console.log(
    `${step.padEnd(28)} heap ${mib(to.heap - from.heap)} MiB (${per(to.heap - from.heap)}/file)` +
      `  arrayBuffers ${mib(to.arrayBuffers - from.arrayBuffers)} MiB (${per(to.arrayBuffers - from.arrayBuffers)}/file)` +
      `  rss ${mib(to.rss - from.rss)} MiB  heldBytes ${mib(accounted)} MiB`,
  )
}

const dir = await mkdtemp(join(tmpdir(), 'floe-bench-memory-'))
try {
  const base = sample()
  const writers: DataFileWriter[] = []
  for (let f = 0; f < files; f++) {
    writers.push(await openDataFile({ schema: dataset.icebergSchema, path: join(dir, `${f}.parquet`) }))
  }
  const opened = sample()
  const held = () => writers.reduce((sum, writer) => sum + writer.heldBytes, 0)
  line(`open ${files} files`, base, opened, held())
  let event = 0
  for (const writer of writers) {
    const batch: StructValue[] = []
    for (let r = 0; r < rows; r++) batch.push(decoder.decode(benchEvent(event++)))
    await writer.append(batch)
  }
  const appended = sample()
  const buffered = writers.reduce((sum, writer) => sum + writer.bufferedBytes, 0)
  const bufferedHeld = writers.reduce((sum, writer) => sum + writer.bufferedHeldBytes, 0)
  line(`append ${rows} rows/file`, base, appended, held())
  console.log(
    `  per row: Parquet estimate (bufferedBytes) ${Math.round(buffered / files / rows)} B, ` +
      `held estimate (bufferedHeldBytes) ${Math.round(bufferedHeld / files / rows)} B, ` +
      `heap measured ${Math.round((appended.heap - opened.heap) / files / rows)} B`,
  )
  for (const writer of writers) await writer.flushRowGroup()
  const flushed = sample()
  line('flush a row group each', base, flushed, held())
  for (const writer of writers) await writer.abort()
  writers.length = 0
  const aborted = sample()
  line('abort all', base, aborted, held())
} finally {
  await rm(dir, { recursive: true, force: true })
}
