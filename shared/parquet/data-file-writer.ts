// One Parquet data file of an Iceberg table, written row group by row group (the contract is
// data-file.ts). Rows are buffered per top-level column until the row-group target (rows or
// estimated bytes) is reached; then the group is encoded by hyparquet-writer
// (row-group-encoder.ts), handed to the sink and the buffer starts over, so memory holds at most
// one row group of rows plus its encoded bytes. With encoder threads (encoder-pool.ts) the group
// is encoded on one while the next fills: one more group, in flight, at most. Metrics come from
// the column-chunk statistics written to the footer anyway
// (statistics.ts for top-level columns, hyparquet-writer for nested ones; see metrics.ts), so
// nothing is read back.
//
// Input is rows, not columns: the converter yields one StructValue per Kafka record, and
// hyparquet-writer wants one array per top-level column with nested values left as they are, so
// a columnar API would only move the same per-cell read-and-push to the caller. That transposition
// costs about 0.3 µs per 12-column row, a few percent of the write (bench/parquet-writer.bench.ts).
import { ParquetWriter } from 'hyparquet-writer'
import { FloeError, isFloeError } from '../errors.ts'
import type { IcebergValue, StructValue } from '../iceberg/index.ts'
import type { DataFileWriter, OpenDataFileOptions } from './data-file.ts'
import { type EncodingHandle, encodingHandle, type RowGroupEncoders } from './encoder-pool.ts'
import { heldEstimateOf, OPEN_FILE_HEAP_BYTES, ROW_GROUP_HEAP_BYTES_PER_LEAF } from './memory.ts'
import { type DataFileMetrics, MetricsCollector } from './metrics.ts'
import { type EncodedRowGroup, RowGroupEncoder, shiftRowGroup } from './row-group-encoder.ts'
import { type ParquetLayout, sizeEstimateOf } from './schema.ts'
import { type ByteSink, fileSink, SinkByteWriter } from './sink.ts'

const defaults = { rowGroupRows: 100_000, rowGroupBytes: 16 * 1024 * 1024, pageSize: 1024 * 1024 }

export async function openDataFile(options: OpenDataFileOptions): Promise<DataFileWriter> {
  // everything that can refuse the configuration runs before a file is created
  const limits = {
    rowGroupRows: positiveInteger('rowGroupRows', options.rowGroupRows ?? defaults.rowGroupRows),
    rowGroupBytes: positiveInteger('rowGroupBytes', options.rowGroupBytes ?? defaults.rowGroupBytes),
    pageSize: positiveInteger('pageSize', options.pageSize ?? defaults.pageSize),
  }
  const statistics = options.statistics ?? true
  const encoding = encodingHandle({
    schema: options.schema,
    codec: options.codec ?? 'zstd',
    compressionLevel: options.compressionLevel,
    pageSize: limits.pageSize,
    statistics,
    footerStatisticsTruncateLength: options.footerStatisticsTruncateLength,
    bloomFilters: options.bloomFilters ?? [],
  })
  const encoder = new RowGroupEncoder(encoding.encoding)
  const layout = encoder.layout
  const metrics = new MetricsCollector(layout.leaves, options.metrics)
  const sink = options.sink ?? (await fileSink(options.path))
  const out = new SinkByteWriter(sink)
  const keyValueMetadata = { 'iceberg.schema': JSON.stringify(options.schema), ...options.keyValueMetadata }
  // writes the header and, at finish(), the page indexes, bloom filters and footer of the groups
  // landed in it; the groups themselves are encoded by `encoder` or `options.encoders`
  const parquet = new ParquetWriter({
    writer: out,
    schema: layout.elements,
    statistics,
    statisticsTruncateLength: options.footerStatisticsTruncateLength,
    createdBy: 'floe (hyparquet-writer 0.17.0)',
    kvMetadata: Object.entries(keyValueMetadata).map(([key, value]) => ({ key, value })),
  })
  return new ParquetDataFileWriter({
    layout,
    parquet,
    out,
    sink,
    metrics,
    encoder,
    encoders: options.encoders,
    encoding,
    limits,
  })
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
  /** Encodes on this thread when there are no encoder threads; its bloom plan records every group's filters. */
  encoder: RowGroupEncoder
  encoders: RowGroupEncoders | undefined
  encoding: EncodingHandle
  limits: { rowGroupRows: number; rowGroupBytes: number; pageSize: number }
}

type WriterState = 'open' | 'closed' | 'failed' | 'aborted'

class ParquetDataFileWriter implements DataFileWriter {
  readonly #parts: WriterParts
  readonly #names: string[]
  readonly #requiredColumns: string[]
  /** Summed once per row instead of measuring every fixed-width value. */
  readonly #fixedRowBytes: number
  readonly #variableColumns: { column: number; estimate: (value: IcebergValue) => number }[]
  /** The same two for the memory the buffered values hold. */
  readonly #fixedRowHeld: number
  readonly #variableHeld: { column: number; estimate: (value: IcebergValue) => number }[]
  /** Footer metadata one row group adds until the file closes. */
  readonly #rowGroupHeld: number
  #buffers: IcebergValue[][]
  #bufferedRows = 0
  #bufferedBytes = 0
  #bufferedHeld = 0
  /** The rows of the group an encoder thread is encoding: held until it lands. */
  #inFlightHeld = 0
  #recordCount = 0
  #rowGroupCount = 0
  #state: WriterState = 'open'
  #failure: unknown
  #tail: Promise<unknown> = Promise.resolve()
  /** The group an encoder thread is encoding, landing in the file when done; at most one per file. */
  #inFlight: Promise<void> | undefined
  #inFlightGroup: Promise<EncodedRowGroup> | undefined

  constructor(parts: WriterParts) {
    this.#parts = parts
    const columns = parts.layout.columns
    this.#names = columns.map((column) => column.name)
    this.#requiredColumns = columns.filter((column) => column.required).map((column) => column.name)
    // Two estimates per column: of the Parquet bytes (the row-group target) and of the heap held.
    let fixed = 0
    let fixedHeld = 0
    this.#variableColumns = []
    this.#variableHeld = []
    columns.forEach((column, index) => {
      const size = sizeEstimateOf(column.type)
      if ('fixed' in size) fixed += size.fixed
      else this.#variableColumns.push({ column: index, estimate: size.estimate })
      const held = heldEstimateOf(column.type)
      if ('fixed' in held) fixedHeld += held.fixed
      else this.#variableHeld.push({ column: index, estimate: held.estimate })
    })
    this.#fixedRowBytes = fixed
    this.#fixedRowHeld = fixedHeld
    this.#rowGroupHeld = ROW_GROUP_HEAP_BYTES_PER_LEAF * parts.layout.leaves.length
    this.#buffers = columns.map(() => [])
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
  get bufferedHeldBytes(): number {
    return this.#bufferedHeld
  }
  get heldBytes(): number {
    if (this.#state !== 'open') return 0
    const { out, encoder } = this.#parts
    return (
      OPEN_FILE_HEAP_BYTES +
      this.#bufferedHeld +
      this.#inFlightHeld +
      out.capacity +
      encoder.capacity +
      this.#rowGroupCount * this.#rowGroupHeld +
      encoder.blooms.heldBytes
    )
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
    // waits for the group to land, so the memory it held is free when this resolves
    return this.#enqueue(async () => {
      await this.#writeRowGroup()
      await this.#landed()
    })
  }

  close(options: { keyValueMetadata?: Readonly<Record<string, string>> } = {}): Promise<DataFileMetrics> {
    return this.#enqueue(async () => {
      await this.#writeRowGroup()
      await this.#landed()
      const { parquet, sink, metrics, encoder } = this.#parts
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
      return metrics.finish(BigInt(this.#recordCount), BigInt(this.#parts.out.offset), encoder.blooms.locations())
    })
  }

  async abort(): Promise<void> {
    if (this.#state === 'closed' || this.#state === 'aborted') return
    this.#state = 'aborted'
    // let an in-flight write settle before the sink goes away under it
    await this.#tail
    await this.#inFlight?.catch(() => {})
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
    const variableHeld = this.#variableHeld
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
      let held = this.#fixedRowHeld
      for (let v = 0; v < variableHeld.length; v++) {
        const { column, estimate } = variableHeld[v] as (typeof variableHeld)[number]
        held += estimate(row[names[column] as string] ?? null)
      }
      this.#bufferedHeld += held
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

  /**
   * Hands the buffered rows over as one row group. Without encoder threads it is encoded here and
   * written before this resolves; with them it resolves once the previous group has landed, and
   * this one lands while the caller buffers the next (so a file's groups stay in order).
   */
  async #writeRowGroup(): Promise<void> {
    await this.#landed()
    const rowCount = this.#bufferedRows
    if (rowCount === 0) return
    const { layout, encoder, encoders, encoding } = this.#parts
    const columns = this.#buffers
    const rowGroup = this.#rowGroupCount
    this.#buffers = layout.columns.map(() => [])
    this.#bufferedRows = 0
    this.#bufferedBytes = 0
    const held = this.#bufferedHeld
    this.#bufferedHeld = 0
    this.#rowGroupCount++
    if (!encoders) {
      let group: EncodedRowGroup
      try {
        group = encoder.encode(columns, rowCount)
      } catch (error) {
        throw this.#fail(asRecordError(error))
      }
      await this.#land(group, rowGroup)
      return
    }
    this.#inFlightGroup = encoders.encode(encoding, columns, rowCount)
    this.#inFlightHeld = held
    this.#inFlight = this.#inFlightGroup.then(
      (group) => this.#land(group, rowGroup),
      (error) => {
        throw this.#fail(asRecordError(error))
      },
    )
    // observed by the next #landed(); until then a failure must not count as unhandled
    this.#inFlight.catch(() => {})
  }

  /** Waits for the group in flight to be in the file; its failure is this writer's. */
  async #landed(): Promise<void> {
    const inFlight = this.#inFlight
    if (!inFlight) return
    if (this.#inFlightGroup) this.#parts.encoders?.hurry(this.#inFlightGroup, this.#parts.encoder)
    await inFlight
    this.#inFlight = undefined
    this.#inFlightGroup = undefined
    this.#inFlightHeld = 0
  }

  /** Places an encoded group after the previous one: footer records, metrics, then its bytes to the sink. */
  async #land(group: EncodedRowGroup, rowGroup: number): Promise<void> {
    const { parquet, out, metrics, encoder } = this.#parts
    const start = out.offset
    try {
      shiftRowGroup(group, start)
      parquet.row_groups.push(group.rowGroup)
      parquet.num_rows += BigInt(group.rowCount)
      parquet.pendingIndexes.push(...group.indexes)
      encoder.blooms.record(rowGroup, group.indexes)
      metrics.addRowGroup(group.rowGroup, start)
      out.appendBytes(new Uint8Array(group.bytes))
    } catch (error) {
      throw this.#fail(asRecordError(error))
    }
    try {
      await out.flush()
    } catch (error) {
      throw this.#fail(asStorageError(error))
    }
  }

  #fail(error: FloeError): FloeError {
    if (this.#state !== 'open') return error
    this.#state = 'failed'
    this.#failure = error
    return error
  }
}

function asRecordError(error: unknown): FloeError {
  if (isFloeError(error)) return error
  return new FloeError('RECORD_MALFORMED', 'a value does not fit its Parquet column; the data file is unusable', {
    cause: error,
  })
}

function asStorageError(error: unknown): FloeError {
  if (isFloeError(error)) return error
  return new FloeError('STORAGE_UNAVAILABLE', 'cannot write the data file', { cause: error })
}
