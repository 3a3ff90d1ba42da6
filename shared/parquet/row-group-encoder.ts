// Encodes one row group of a data file into bytes that start at offset 0, with the column-chunk
// records the footer and Iceberg's metrics need. It is a pure function of the buffered columns and
// the file's encoding settings, so it runs the same on the main thread (encoder threads off) and in
// an encoder thread (encoder-thread.ts): both paths produce the same bytes. The data file writer
// then places the group in its file (landRowGroup), shifting the chunks' offsets to where it lands.
import { ByteWriter, ParquetWriter } from 'hyparquet-writer'
import { FloeError, isFloeError } from '../errors.ts'
import type { IcebergValue, Schema } from '../iceberg/index.ts'
import { type BloomFilterColumn, BloomFilterPlan } from './bloom.ts'
import { type DataFileCodec, pageCompressionFor } from './codecs.ts'
import { type ParquetLayout, parquetLayoutOf } from './schema.ts'
import { IDLE_ENCODE_BUFFER_BYTES } from './sink.ts'
import { type StatisticsOf, statisticsFunctionFor } from './statistics.ts'

/** What decides a row group's bytes; plain data, so it can be posted to an encoder thread. */
export interface RowGroupEncoding {
  schema: Schema
  codec: DataFileCodec
  compressionLevel: number | undefined
  pageSize: number
  statistics: boolean
  footerStatisticsTruncateLength: number | undefined
  bloomFilters: readonly BloomFilterColumn[]
}

export type PendingIndex = ParquetWriter['pendingIndexes'][number]
export type RowGroupRecord = ParquetWriter['row_groups'][number]

export interface EncodedRowGroup {
  /** The group's bytes, as they go into the file right after the previous group. */
  bytes: ArrayBuffer
  /** Offsets in it count from the group's first byte. */
  rowGroup: RowGroupRecord
  /** One per leaf column, in schema order; their chunks are rowGroup.columns' (bloom filters attached). */
  indexes: PendingIndex[]
  rowCount: number
}

/** A top-level primitive column whose chunk statistics this module computes (see statistics.ts). */
interface FlatColumnStatistics {
  leafIndex: number
  statisticsOf: StatisticsOf
}

export class RowGroupEncoder {
  readonly layout: ParquetLayout
  readonly blooms: BloomFilterPlan
  readonly #encoding: RowGroupEncoding
  readonly #out: ByteWriter
  readonly #parquet: ParquetWriter
  /** By top-level column; undefined where hyparquet-writer computes the statistics (nested) or none are kept. */
  readonly #flatStatistics: (FlatColumnStatistics | undefined)[]

  /** Bytes its encode buffer holds between groups. */
  get capacity(): number {
    return this.#out.buffer.byteLength
  }

  /** Refuses a bad configuration (CONFIG_INVALID) before any file exists. */
  constructor(encoding: RowGroupEncoding) {
    this.#encoding = encoding
    this.layout = parquetLayoutOf(encoding.schema)
    const compression = pageCompressionFor(encoding.codec, encoding.compressionLevel)
    this.blooms = new BloomFilterPlan(this.layout.leaves, encoding.bloomFilters)
    // small between groups, as SinkByteWriter's: one encoder per open file, thousands of them
    this.#out = new ByteWriter(IDLE_ENCODE_BUFFER_BYTES)
    this.#parquet = new ParquetWriter({
      writer: this.#out,
      schema: this.layout.elements,
      codec: compression.codec,
      compressors: compression.compressors,
      statistics: encoding.statistics,
      statisticsTruncateLength: encoding.footerStatisticsTruncateLength,
    })
    const leaves = this.layout.leaves
    this.#flatStatistics = this.layout.columns.map((_, index) => {
      const leafIndex = leaves.findIndex((leaf) => leaf.topLevelIndex === index && leaf.path.length === 1)
      const leaf = leaves[leafIndex]
      return encoding.statistics && leaf ? { leafIndex, statisticsOf: statisticsFunctionFor(leaf) } : undefined
    })
  }

  /**
   * Encodes and compresses the group. A value that does not fit its column is RECORD_MALFORMED
   * (the file it was meant for is unusable); the encoder itself stays usable.
   */
  encode(columns: readonly IcebergValue[][], rowCount: number): EncodedRowGroup {
    const parquet = this.#parquet
    const out = this.#out
    // the writer only appends: starting each group at index 0, offset 0 gives group-relative offsets
    out.index = 0
    out.offset = 0
    parquet.row_groups = []
    parquet.pendingIndexes = []
    const flatStatistics = this.#flatStatistics
    const statistics = this.#encoding.statistics
    const columnData = this.layout.columns.map((column, index) => {
      const values = columns[index] as IcebergValue[]
      const bytes = column.type === 'string' ? plainUtf8(values) : undefined
      return {
        name: column.name,
        data: bytes ?? values,
        // hyparquet-writer's statistics only where this module does not compute them
        statistics: statistics && flatStatistics[index] === undefined,
        // hyparquet-writer would RLE-encode boolean pages; Iceberg's vectorized Spark reader reads
        // v2 data pages only when PLAIN or dictionary-encoded (it refuses others), so booleans stay
        // PLAIN (bit-packed, the same size before compression). Nested booleans keep RLE: forcing
        // PLAIN there would also turn off dictionaries for their sibling leaves.
        encoding: column.type === 'boolean' || bytes ? ('PLAIN' as const) : undefined,
      }
    })
    try {
      // a ByteWriter has no flush, so this encodes the whole group synchronously
      parquet.write({ columnData, rowGroupSize: rowCount, pageSize: this.#encoding.pageSize })
      const rowGroup = parquet.row_groups[0]
      if (!rowGroup) throw new FloeError('INVARIANT_BROKEN', 'row group was not recorded')
      // the footer is serialized from these chunk records, so statistics set here land in it
      flatStatistics.forEach((flat, index) => {
        const chunk = flat && rowGroup.columns[flat.leafIndex]?.meta_data
        if (chunk) chunk.statistics = flat.statisticsOf(columns[index] as IcebergValue[]) as typeof chunk.statistics
      })
      const indexes = parquet.pendingIndexes
      if (!this.blooms.isEmpty) this.blooms.build(columns, indexes)
      const bytes = out.buffer.slice(0, out.index)
      if (out.buffer.byteLength > IDLE_ENCODE_BUFFER_BYTES) {
        out.buffer = new ArrayBuffer(IDLE_ENCODE_BUFFER_BYTES)
        out.view = new DataView(out.buffer)
      }
      return { bytes, rowGroup, indexes, rowCount }
    } catch (error) {
      throw isFloeError(error)
        ? error
        : new FloeError('RECORD_MALFORMED', 'a value does not fit its Parquet column; the data file is unusable', {
            cause: error,
          })
    }
  }
}

/**
 * A string column's values as UTF-8 bytes, when hyparquet-writer would write them PLAIN anyway;
 * undefined when it would try a dictionary. Its own conversion makes a TextEncoder array per
 * value; Buffer.from takes a slice of Node's buffer pool for the same bytes, 3-5 times faster for
 * short strings, and a column of ids or names converts every value (docs/benchmarks.md, "String
 * columns handed to the writer as UTF-8 bytes"). The choice repeats hyparquet-writer's sample
 * (1,000 values spread over the chunk, weighed by length plus the 4-byte prefix; a dictionary is
 * not tried when distinct values make over 90 % of it), so a chunk keeps the encoding it had; were
 * the two to differ, the chunk would be PLAIN where a dictionary might have been smaller, never wrong.
 */
function plainUtf8(values: readonly IcebergValue[]): IcebergValue[] | undefined {
  const count = values.length
  const sampleSize = Math.min(count, 1000)
  const seen = new Set<IcebergValue>()
  let distinct = 0
  let total = 0
  for (let i = 0; i < sampleSize; i++) {
    const value = values[sampleSize === 1 ? 0 : Math.floor((i * (count - 1)) / (sampleSize - 1))] as IcebergValue
    const size = typeof value === 'string' ? value.length + 4 : 0
    if (!seen.has(value)) {
      seen.add(value)
      distinct += size
    }
    total += size
  }
  if (total > 0 && distinct / total <= 0.9) return undefined
  const bytes: IcebergValue[] = new Array(count)
  for (let i = 0; i < count; i++) {
    const value = values[i] as IcebergValue
    bytes[i] = typeof value === 'string' ? Buffer.from(value, 'utf8') : value
  }
  return bytes
}

/**
 * Moves a group encoded at offset 0 to `start`, the file position its first byte lands at. These
 * are every absolute offset hyparquet-writer records while writing a group; the page-index and
 * bloom-filter offsets are set later, by finish(), at their final positions.
 */
export function shiftRowGroup(group: EncodedRowGroup, start: number): void {
  const shift = BigInt(start)
  for (const chunk of group.rowGroup.columns) {
    chunk.file_offset += shift
    const meta = chunk.meta_data
    if (meta) {
      meta.data_page_offset += shift
      if (meta.dictionary_page_offset !== undefined) meta.dictionary_page_offset += shift
    }
  }
  for (const index of group.indexes) {
    for (const location of index.offsetIndex?.page_locations ?? []) location.offset += shift
  }
}
