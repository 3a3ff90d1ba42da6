// What a data file writer promises: the options it takes and the DataFileWriter it returns. The
// implementation, row-group buffering and landing, is data-file-writer.ts; callers hold this
// interface, so the contract can be read without the machinery behind it.
import type { Schema, StructValue } from '../iceberg/index.ts'
import type { BloomFilterColumn } from './bloom.ts'
import type { DataFileCodec } from './codecs.ts'
import type { RowGroupEncoders } from './encoder-pool.ts'
import type { DataFileMetrics, MetricsConfig } from './metrics.ts'
import type { ByteSink } from './sink.ts'

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
  /**
   * Encoder threads (encoder-pool.ts) that encode and compress full row groups while the caller
   * goes on buffering the next one; without them a group is encoded on the calling thread.
   */
  encoders?: RowGroupEncoders
}

export type OpenDataFileOptions = DataFileWriterOptions &
  ({ path: string; sink?: undefined } | { sink: ByteSink; path?: undefined })

export interface DataFileWriter {
  /**
   * Buffers rows (objects keyed by field name, values as in shared/iceberg/types.ts) and writes
   * every row group that fills up; resolves when those bytes are with the sink (with encoder
   * threads, the last group it filled may still be encoding: flushRowGroup and close wait for it,
   * and a failure of it fails the next call). Calls are queued
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
  /**
   * Estimated memory the buffered rows hold (their values' heap objects, see memory.ts): what
   * flushing a row group would release.
   */
  readonly bufferedHeldBytes: number
  /**
   * Estimated memory the open file holds: buffered rows, writer state, the encode buffer, footer
   * metadata and bloom filters of the row groups written. What a memory cap should count.
   */
  readonly heldBytes: number
  /** Bytes handed to the sink so far: the file's size if it were closed now, less the footer and buffered rows. */
  readonly writtenBytes: number
  readonly rowGroupCount: number
}
