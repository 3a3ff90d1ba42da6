// Table metadata (format v2) shaped exactly like the spec's JSON, as types.ts does for schemas, so
// a metadata file and a REST payload need no translation. Two departures, both made by the
// parser: int64 ids and sequence numbers are bigint (a JS number cannot hold a 63-bit snapshot
// id), and "no current snapshot" is null (files say -1, or leave the key out).
//
// Keys this model does not name (v3's next-row-id, encryption keys, an engine's own additions)
// stay on the parsed objects at runtime and are written back unchanged, as long as objects are
// copied with spread: a catalog that rewrites a file must not drop what it does not understand.
import type { PartitionSpec, Schema, SortOrder } from '../types.ts'

export type SnapshotOperation = 'append' | 'replace' | 'overwrite' | 'delete'

/** The spec's snapshot summary: string values only; `operation` is required. */
export interface SnapshotSummary {
  operation: SnapshotOperation
  [property: string]: string
}

export interface Snapshot {
  'snapshot-id': bigint
  'parent-snapshot-id'?: bigint
  'sequence-number': bigint
  'timestamp-ms': number
  'manifest-list': string
  summary: SnapshotSummary
  'schema-id'?: number
}

export interface SnapshotRef {
  type: 'branch' | 'tag'
  'snapshot-id': bigint
  'max-ref-age-ms'?: bigint
  'max-snapshot-age-ms'?: bigint
  'min-snapshots-to-keep'?: number
}

export interface SnapshotLogEntry {
  'snapshot-id': bigint
  'timestamp-ms': number
}

export interface MetadataLogEntry {
  'metadata-file': string
  'timestamp-ms': number
}

export interface BlobMetadata {
  type: string
  'snapshot-id': bigint
  'sequence-number': bigint
  fields: number[]
  properties?: Record<string, string>
}

export interface StatisticsFile {
  'snapshot-id': bigint
  'statistics-path': string
  'file-size-in-bytes': bigint
  'file-footer-size-in-bytes': bigint
  'blob-metadata': BlobMetadata[]
}

export interface PartitionStatisticsFile {
  'snapshot-id': bigint
  'statistics-path': string
  'file-size-in-bytes': bigint
}

export interface TableMetadata {
  'format-version': number
  'table-uuid': string
  location: string
  'last-sequence-number': bigint
  'last-updated-ms': number
  'last-column-id': number
  schemas: Schema[]
  'current-schema-id': number
  'partition-specs': PartitionSpec[]
  'default-spec-id': number
  'last-partition-id': number
  properties: Record<string, string>
  /** null when the table has no current snapshot (the file says -1). */
  'current-snapshot-id': bigint | null
  snapshots: Snapshot[]
  'snapshot-log': SnapshotLogEntry[]
  'metadata-log': MetadataLogEntry[]
  'sort-orders': SortOrder[]
  'default-sort-order-id': number
  refs: Record<string, SnapshotRef>
  statistics: StatisticsFile[]
  'partition-statistics': PartitionStatisticsFile[]
}

export const mainBranch = 'main'

/** Partition field ids start here (the spec's rule; 999 means "none assigned yet"). */
export const partitionFieldIdStart = 1000

/** Table properties with meaning to metadata handling (names as Iceberg spells them). */
export const tableProperties = {
  metadataPath: 'write.metadata.path',
  previousVersionsMax: 'write.metadata.previous-versions-max',
  formatVersion: 'format-version',
} as const

export const previousVersionsMaxDefault = 100
