// What the open segments of a log are made of (open-segments.ts): a segment, the file a table's
// eviction leaves for the cut, the route and writer settings a log gives them, and the table
// context a rotation reads.
import type { PartitionSpec, PrimitiveType, Schema, StructType, StructValue } from '../../shared/iceberg/index.ts'
import type { Partitioner } from '../../shared/iceberg/partitioning/index.ts'
import type {
  DataFileCodec,
  DataFileMetrics,
  DataFileWriter,
  DataFileWriterOptions,
  MetricsConfig,
  RowGroupEncoders,
} from '../../shared/parquet/index.ts'
import type { Clock } from './types.ts'

export interface OpenSegment {
  readonly uuid: string
  /** The Iceberg partition key. */
  readonly key: string
  /** The routed table (`namespace.table`) whose rows it holds; absent in an unrouted log. */
  readonly table?: string
  readonly partitionValues: StructValue
  readonly activeName: string
  /** Clock time of its first row, for the age trigger. */
  readonly openedAt: number
  readonly writer: DataFileWriter
  /** Rows of the append in progress that belong here; one array reused across appends. */
  readonly batch: StructValue[]
}

/**
 * A segment closed before its cut (its table evicted): footer written, file synced, not yet
 * renamed. Its writer is not kept: thousands may wait for one cut.
 */
export interface EvictedSegment {
  readonly segment: Omit<OpenSegment, 'writer' | 'batch'>
  readonly metrics: DataFileMetrics
}

export interface OpenSegmentsConfig {
  dir: string
  /** The `active_*` file name of a new segment: the layouts name them differently. */
  activeName(uuid: string): string
  clock: Clock
  writer: SegmentWriterSettings
  /** A routed dataset's tables: rows come with table numbers, segments are kept per table. */
  route?: SegmentRoute
}

/** What a routed shared log knows of the dataset's route. */
export interface WalRoute {
  /** By table number, its `namespace.table`: a live view (RouteTables.names) that grows as records name tables. */
  readonly names: readonly string[]
  /** At most this many tables have open segments: opening one more evicts the least recently used first. */
  readonly maxOpenTables: number
}

/** The route as the open segments use it: the log adds how an evicted file ends. */
export interface SegmentRoute extends WalRoute {
  /** The footer of an evicted table's file (it names the coming cut, which changes with each cut). */
  evictedFooter(table: string): Record<string, string>
  /** Told how many tables an eviction closed early. */
  onEvict?(tables: number): void
}

/** The writer settings a log's options give its segments (both layouts take the same ones). */
export interface SegmentWriterSettings {
  /** Default zstd. */
  codec?: DataFileCodec
  compressionLevel?: number
  rowGroupRows?: number
  rowGroupBytes?: number
  /** Iceberg metrics modes; default truncate(16). */
  metrics?: MetricsConfig
  /** Field ids of the columns that get a bloom filter. */
  bloomFilterColumns?: readonly number[]
  /** Encoder threads for the segments' row groups; none: encoded on the calling thread. */
  encoders?: RowGroupEncoders
}

/** What a rotation needs of the table the open segments were opened under, and where they are. */
export interface TableContext {
  dir: string
  schema: Schema
  spec: PartitionSpec
  partitioner: Partitioner
  partitionType: StructType
  fieldTypes: ReadonlyMap<number, PrimitiveType>
}

export function segmentWriterOptions(settings: SegmentWriterSettings, schema: Schema): DataFileWriterOptions {
  return {
    schema,
    codec: settings.codec,
    compressionLevel: settings.compressionLevel,
    rowGroupRows: settings.rowGroupRows,
    rowGroupBytes: settings.rowGroupBytes,
    metrics: settings.metrics,
    bloomFilters: (settings.bloomFilterColumns ?? []).map((fieldId) => ({ fieldId })),
    encoders: settings.encoders,
  }
}
