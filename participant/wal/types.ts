// The shapes the WAL hands to the rest of the participant: ready segments, rotations, limits.
import type { DataFile, StructValue } from '../../shared/iceberg/index.ts'
import type { BloomFilterLocation } from '../../shared/parquet/index.ts'

/**
 * Why a rotation happened. The log itself reports size, age, segments and tables (rotationDue);
 * the caller rotates for the rest. 'tables' is a routed shared log holding as many files of
 * evicted tables, waiting for the cut, as the open segments' limit. 'recovered' marks files kept from before a restart; 'resync' closes the
 * open segments before the partition is positioned again from the table (recovery then keeps them
 * if they start at its offset). 'schema' closes segments written under a schema the table has
 * widened for the records that follow (a dataset that infers its columns).
 */
export type RotationReason =
  | 'size'
  | 'age'
  | 'segments'
  | 'tables'
  | 'commit'
  | 'revoke'
  | 'shutdown'
  | 'memory'
  | 'recovered'
  | 'resync'
  | 'schema'

/** One closed, fsynced, renamed WAL segment: an Iceberg data file waiting for upload and commit. */
export interface ReadySegment {
  /** Chosen when the segment opened; names the object in storage (invariant 7). */
  readonly uuid: string
  /** The `ready_*.parquet` file. */
  readonly localPath: string
  /** Its `ready_*.json` sidecar. */
  readonly jsonPath: string
  readonly topic: string
  /** The Kafka partition. */
  readonly partition: number
  /** The Kafka offset range `[start, end)` of the rotation that made this segment. */
  readonly start: bigint
  readonly end: bigint
  /** The Iceberg partition tuple, partition field name -> value (the same as `dataFile.partition`). */
  readonly partitionValues: StructValue
  /** `ts_day=2025-11-30/...`; '' when the table is unpartitioned. */
  readonly partitionPath: string
  /** The manifest's data_file without its object location; bounds in single-value binary form. */
  readonly dataFile: Omit<DataFile, 'filePath'>
  /** The split-block bloom filters inside the Parquet file. */
  readonly bloomFilters: readonly BloomFilterLocation[]
  readonly sizeBytes: number
  /** Set once the file is in storage (markUploaded). */
  readonly uploadedLocation?: string
}

/** What one rotation made ready: the range `[start, end)` and its segments (none if no row arrived). */
export interface Rotation {
  readonly start: bigint
  readonly end: bigint
  readonly reason: RotationReason
  readonly segments: readonly ReadySegment[]
}

export interface WalLimits {
  /** An open segment's written plus buffered bytes that trigger a rotation (default 64 MiB). */
  maxFileSizeBytes: number
  /** The age of the oldest open segment that triggers a rotation (default 5 min). */
  maxFileAgeMs: number
  /** More open segments (Iceberg partitions) than this trigger a rotation (default 256). */
  maxOpenSegments: number
}

export const defaultWalLimits: Readonly<WalLimits> = {
  maxFileSizeBytes: 64 * 1024 * 1024,
  maxFileAgeMs: 5 * 60 * 1000,
  maxOpenSegments: 256,
}

export interface Clock {
  /** Milliseconds; only differences matter. */
  now(): number
}
