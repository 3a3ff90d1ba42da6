// One Parquet data file of an Iceberg table, written row group by row group. Rows are buffered
// per top-level column until the row-group target (rows or estimated bytes) is reached; then the
// group is encoded by hyparquet-writer, handed to the sink and the buffer starts over, so memory
// holds at most one row group of rows plus its encoded bytes. Metrics come from the column-chunk
// statistics written to the footer anyway (statistics.ts for top-level columns, hyparquet-writer
// for nested ones; see metrics.ts), so nothing is read back.
//
// Input is rows, not columns: the converter yields one StructValue per Kafka record, and
// hyparquet-writer wants one array per top-level column with nested values left as they are, so
// a columnar API would only move the same per-cell read-and-push to the caller. That transposition
// costs about 0.3 µs per 12-column row, a few percent of the write (bench/parquet-writer.bench.ts).
import { ParquetWriter } from 'hyparquet-writer'
import { FloeError, isFloeError } from '../errors.ts'
import type { IcebergValue, Schema, StructValue } from '../iceberg/index.ts'
import { type BloomFilterColumn, BloomFilterPlan } from './bloom.ts'
import { type DataFileCodec, pageCompressionFor } from './codecs.ts'
import { type DataFileMetrics, MetricsCollector, type MetricsConfig } from './metrics.ts'
import { type ParquetLayout, parquetLayoutOf, sizeEstimateOf } from './schema.ts'
import { type ByteSink, fileSink, SinkByteWriter } from './sink.ts'
import { type StatisticsOf, statisticsFunctionFor } from './statistics.ts'

export interface DataFileWriterOptions {
  schema: Schema
  /** Default `zstd`. */
  codec?: DataFileCodec
  /** zstd 1..22 (default 3), gzip 0..9 (default 6), brotli 0..11 (default 4). */
  compressionLevel?: number
  /** A row group ends at this many rows (default 100,000)... */
  rowGroupRows?: number
  /** ...or when its values' estimated uncompressed size reaches this (default 16 MiB). */
  rowGroupBytes?: number
  /** Target uncompressed page size (default 1 MiB). */
  pageSize?: number
  /**
   * Footer statistics, and with them Iceberg's null/NaN counts and bounds (default true). Without
   * them only record count, sizes, value counts and split offsets are known.
   */
  statistics?: boolean
  /** Iceberg metrics modes; default `truncate(16)` for every column. */
  metrics?: MetricsConfig
  bloomFilters?: readonly BloomFilterColumn[]
  /** Max bytes of a string/binary min/max in the footer (default 16; Iceberg bounds are separate). */
  footerStatisticsTruncateLength?: number
  /** Written in the footer besides `iceberg.schema`. */
  keyValueMetadata?: Readonly<Record<string, string>>
}

export type OpenDataFileOptions = DataFileWriterOptions &
  ({ path: string; sink?: undefined } | { sink: ByteSink; path?: undefined })

export interface DataFileWriter {
  /**
   * Buffers rows (objects keyed by field name, values as in shared/iceberg/types.ts) and writes
   * every row group that fills up; resolves when those bytes are with the sink. Calls are queued
   * in order. A batch with a null in a required top-level field is refused whole
   * (RECORD_MALFORMED) and the writer stays usable; values of the wrong type for their column
   * are the converter's to prevent: an encoding failure fails the writer.
   */
  append(rows: readonly StructValue[]): Promise<void>
  /** Ends the current row group early (e.g. under memory pressure). */
  flushRowGroup(): Promise<void>
  /** Writes the last row group and the footer, makes the file durable, returns its metrics. */
  close(options?: { keyValueMetadata?: Readonly<Record<string, string>> }): Promise<DataFileMetrics>
  /** Stops writing and discards the file (deletes it when it was opened by path). */
  abort(): Promise<void>
  /** Rows accepted so far, written or buffered. */
  readonly recordCount: number
  readonly bufferedRows: number
  /** Estimated uncompressed bytes of the buffered rows. */
  readonly bufferedBytes: number
  /** Bytes handed to the sink so far: the file's size if it were closed now, less the footer and buffered rows. */
  readonly writtenBytes: number
  readonly rowGroupCount: number
}

const defaults = { rowGroupRows: 100_000, rowGroupBytes: 16 * 1024 * 1024, pageSize: 1024 * 1024 }

export async function openDataFile(options: OpenDataFileOptions): Promise<DataFileWriter> {
  // everything that can refuse the configuration runs before a file is created
  const layout = parquetLayoutOf(options.schema)
  const compression = pageCompressionFor(options.codec ?? 'zstd', options.compressionLevel)
  const metrics = new MetricsCollector(layout.leaves, options.metrics)
  const blooms = new BloomFilterPlan(layout.leaves, options.bloomFilters ?? [])
  const limits = {
    rowGroupRows: positiveInteger('rowGroupRows', options.rowGroupRows ?? defaults.rowGroupRows),
    rowGroupBytes: positiveInteger('rowGroupBytes', options.rowGroupBytes ?? defaults.rowGroupBytes),
    pageSize: positiveInteger('pageSize', options.pageSize ?? defaults.pageSize),
  }
  const sink = options.sink ?? (await fileSink(options.path))
  const out = new SinkByteWriter(sink, Math.min(limits.rowGroupBytes, 4 * 1024 * 1024))
  const keyValueMetadata = { 'iceberg.schema': JSON.stringify(options.schema), ...options.keyValueMetadata }
  const parquet = new ParquetWriter({
    writer: out,
    schema: layout.elements,
    codec: compression.codec,
    compressors: compression.compressors,
    statistics: options.statistics ?? true,
    statisticsTruncateLength: options.footerStatisticsTruncateLength,
    createdBy: 'floe (hyparquet-writer 0.17.0)',
    kvMetadata: Object.entries(keyValueMetadata).map(([key, value]) => ({ key, value })),
  })
  const statistics = options.statistics ?? true
  return new ParquetDataFileWriter({ layout, parquet, out, sink, metrics, blooms, limits, statistics })
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new FloeError('CONFIG_INVALID', `${name} must be a positive integer`, { details: { [name]: value } })
  }
  return value
}

interface WriterParts {
  layout: ParquetLayout
  parquet: ParquetWriter
  out: SinkByteWriter
  sink: ByteSink
  metrics: MetricsCollector
  blooms: BloomFilterPlan
  limits: { rowGroupRows: number; rowGroupBytes: number; pageSize: number }
  statistics: boolean
}

/** A top-level primitive column whose chunk statistics this module computes (see statistics.ts). */
interface FlatColumnStatistics {
  leafIndex: number
  statisticsOf: StatisticsOf
}

type WriterState = 'open' | 'closed' | 'failed' | 'aborted'

class ParquetDataFileWriter implements DataFileWriter {
  readonly #parts: WriterParts
  readonly #names: string[]
  readonly #requiredColumns: string[]
  /** Summed once per row instead of measuring every fixed-width value. */
  readonly #fixedRowBytes: number
  readonly #variableColumns: { column: number; estimate: (value: IcebergValue) => number }[]
  /** By top-level column; undefined where hyparquet-writer computes the statistics (nested) or none are kept. */
  readonly #flatStatistics: (FlatColumnStatistics | undefined)[]
  #buffers: IcebergValue[][]
  #bufferedRows = 0
  #bufferedBytes = 0
  #recordCount = 0
  #rowGroupCount = 0
  #state: WriterState = 'open'
  #failure: unknown
  #tail: Promise<unknown> = Promise.resolve()

  constructor(parts: WriterParts) {
    this.#parts = parts
    const columns = parts.layout.columns
    this.#names = columns.map((column) => column.name)
    this.#requiredColumns = columns.filter((column) => column.required).map((column) => column.name)
    let fixed = 0
    this.#variableColumns = []
    columns.forEach((column, index) => {
      const size = sizeEstimateOf(column.type)
      if ('fixed' in size) fixed += size.fixed
      else this.#variableColumns.push({ column: index, estimate: size.estimate })
    })
    this.#fixedRowBytes = fixed
    this.#buffers = columns.map(() => [])
    this.#flatStatistics = columns.map((_, index) => {
      const leafIndex = parts.layout.leaves.findIndex((leaf) => leaf.topLevelIndex === index && leaf.path.length === 1)
      const leaf = parts.layout.leaves[leafIndex]
      return parts.statistics && leaf ? { leafIndex, statisticsOf: statisticsFunctionFor(leaf) } : undefined
    })
  }

  get recordCount(): number {
    return this.#recordCount
  }
  get bufferedRows(): number {
    return this.#bufferedRows
  }
  get bufferedBytes(): number {
    return this.#bufferedBytes
  }
  get writtenBytes(): number {
    return this.#parts.out.offset - this.#parts.out.pendingBytes
  }
  get rowGroupCount(): number {
    return this.#rowGroupCount
  }

  append(rows: readonly StructValue[]): Promise<void> {
    return this.#enqueue(() => this.#appendRows(rows))
  }

  flushRowGroup(): Promise<void> {
    return this.#enqueue(() => this.#writeRowGroup())
  }

  close(options: { keyValueMetadata?: Readonly<Record<string, string>> } = {}): Promise<DataFileMetrics> {
    return this.#enqueue(async () => {
      await this.#writeRowGroup()
      const { parquet, sink, metrics, blooms } = this.#parts
      for (const [key, value] of Object.entries(options.keyValueMetadata ?? {})) {
        parquet.kvMetadata?.push({ key, value })
      }
      try {
        await parquet.finish()
        await sink.close()
      } catch (error) {
        throw this.#fail(asStorageError(error))
      }
      this.#state = 'closed'
      this.#buffers = []
      return metrics.finish(BigInt(this.#recordCount), BigInt(this.#parts.out.offset), blooms.locations())
    })
  }

  async abort(): Promise<void> {
    if (this.#state === 'closed' || this.#state === 'aborted') return
    this.#state = 'aborted'
    // let an in-flight write settle before the sink goes away under it
    await this.#tail
    this.#buffers = []
    await this.#parts.sink.abort()
  }

  #enqueue<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(() => {
      this.#assertOpen()
      return operation()
    })
    this.#tail = result.catch(() => {})
    return result
  }

  #assertOpen(): void {
    if (this.#state === 'open') return
    if (this.#state === 'failed') throw this.#failure
    throw new FloeError('INVARIANT_BROKEN', `data file writer used after it was ${this.#state}`)
  }

  async #appendRows(rows: readonly StructValue[]): Promise<void> {
    this.#checkRequired(rows)
    const names = this.#names
    const columnCount = names.length
    const variable = this.#variableColumns
    const limits = this.#parts.limits
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r] as StructValue
      const buffers = this.#buffers
      for (let c = 0; c < columnCount; c++) (buffers[c] as IcebergValue[]).push(row[names[c] as string] ?? null)
      let bytes = this.#fixedRowBytes
      for (let v = 0; v < variable.length; v++) {
        const { column, estimate } = variable[v] as (typeof variable)[number]
        bytes += estimate(row[names[column] as string] ?? null)
      }
      this.#bufferedBytes += bytes
      this.#recordCount++
      if (++this.#bufferedRows >= limits.rowGroupRows || this.#bufferedBytes >= limits.rowGroupBytes) {
        await this.#writeRowGroup()
      }
    }
  }

  /** Refuses the batch before any of it is buffered, so a bad record cannot poison the file. */
  #checkRequired(rows: readonly StructValue[]): void {
    for (const name of this.#requiredColumns) {
      for (let r = 0; r < rows.length; r++) {
        const value = (rows[r] as StructValue)[name]
        if (value === null || value === undefined) {
          throw new FloeError('RECORD_MALFORMED', `required field ${name} is null`, {
            details: { field: name, row: r },
          })
        }
      }
    }
  }

  async #writeRowGroup(): Promise<void> {
    const rowCount = this.#bufferedRows
    if (rowCount === 0) return
    const { parquet, out, metrics, blooms, layout, limits } = this.#parts
    const buffers = this.#buffers
    const flatStatistics = this.#flatStatistics
    const columnData = layout.columns.map((column, index) => ({
      name: column.name,
      data: buffers[index] as IcebergValue[],
      // hyparquet-writer's statistics only where this module does not compute them
      statistics: this.#parts.statistics && flatStatistics[index] === undefined,
      // hyparquet-writer would RLE-encode boolean pages; Iceberg's vectorized Spark reader reads
      // v2 data pages only when PLAIN or dictionary-encoded (apache/iceberg#2749), so booleans stay
      // PLAIN (bit-packed, the same size before compression). Nested booleans keep RLE: forcing
      // PLAIN there would also turn off dictionaries for their sibling leaves.
      encoding: column.type === 'boolean' ? ('PLAIN' as const) : undefined,
    }))
    const startOffset = out.offset
    const firstPending = parquet.pendingIndexes.length
    let written: void | Promise<void>
    try {
      // encodes the whole group synchronously, then starts the sink write (flush)
      written = parquet.write({ columnData, rowGroupSize: rowCount, pageSize: limits.pageSize })
      const rowGroup = parquet.row_groups[parquet.row_groups.length - 1]
      if (!rowGroup) throw new FloeError('INVARIANT_BROKEN', 'row group was not recorded')
      // the footer is serialized from these chunk records at finish(), so statistics set here land in it
      flatStatistics.forEach((flat, index) => {
        const chunk = flat && rowGroup.columns[flat.leafIndex]?.meta_data
        if (chunk) chunk.statistics = flat.statisticsOf(buffers[index] as IcebergValue[]) as typeof chunk.statistics
      })
      metrics.addRowGroup(rowGroup, startOffset)
      if (!blooms.isEmpty) blooms.attach(this.#rowGroupCount, buffers, parquet.pendingIndexes.slice(firstPending))
    } catch (error) {
      throw this.#fail(
        isFloeError(error)
          ? error
          : new FloeError('RECORD_MALFORMED', 'a value does not fit its Parquet column; the data file is unusable', {
              cause: error,
            }),
      )
    }
    this.#buffers = layout.columns.map(() => [])
    this.#bufferedRows = 0
    this.#bufferedBytes = 0
    this.#rowGroupCount++
    try {
      await written
    } catch (error) {
      throw this.#fail(asStorageError(error))
    }
  }

  #fail(error: FloeError): FloeError {
    this.#state = 'failed'
    this.#failure = error
    return error
  }
}

function asStorageError(error: unknown): FloeError {
  if (isFloeError(error)) return error
  return new FloeError('STORAGE_UNAVAILABLE', 'cannot write the data file', { cause: error })
}
