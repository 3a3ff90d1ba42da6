// The records of manifests and manifest lists (spec "Manifests", "Manifest Lists"), in memory.
// Longs are bigint; a null sequence number or snapshot id means "inherited" (spec "Sequence
// Number Inheritance").
import type { DataFile, IcebergValue, PrimitiveType } from '../types.ts'

/** manifest_entry.status (field 0). */
export const ManifestEntryStatus = { EXISTING: 0, ADDED: 1, DELETED: 2 } as const
export type ManifestEntryStatus = (typeof ManifestEntryStatus)[keyof typeof ManifestEntryStatus]

/** data_file.content (field 134). */
export const DataFileContent = { DATA: 0, POSITION_DELETES: 1, EQUALITY_DELETES: 2 } as const
export type DataFileContent = (typeof DataFileContent)[keyof typeof DataFileContent]

/** What a manifest tracks: the header key `content`, and manifest_file.content 0 / 1. */
export type ManifestContent = 'data' | 'deletes'

/**
 * The spec's `data_file` struct for any content file. Floe's own `DataFile` is one (content data,
 * Parquet); files other writers put in a table (ORC, delete files) read back with their format and
 * extra fields so that a merged manifest carries them over unchanged.
 */
export interface ContentFile extends Omit<DataFile, 'fileFormat'> {
  /** Absent means DATA. */
  content?: DataFileContent
  /** As written: Java and pyiceberg write upper case (PARQUET, ORC, AVRO, PUFFIN). */
  fileFormat: string
  keyMetadata?: Uint8Array
  equalityIds?: number[]
  referencedDataFile?: string
}

export interface ManifestEntry {
  status: ManifestEntryStatus
  /** Snapshot that added (or deleted) the file; null inherits the manifest's added_snapshot_id. */
  snapshotId: bigint | null
  /** Data sequence number; null inherits the manifest's sequence number (ADDED entries only). */
  sequenceNumber: bigint | null
  /** File sequence number; null inherits like `sequenceNumber`. */
  fileSequenceNumber: bigint | null
  dataFile: ContentFile
}

/** An entry to write: ADDED entries may leave every tracking field out, to be inherited. */
export interface ManifestEntryToWrite {
  status: ManifestEntryStatus
  snapshotId?: bigint | null
  sequenceNumber?: bigint | null
  fileSequenceNumber?: bigint | null
  dataFile: ContentFile
}

/** field_summary (element 508 of manifest_file.partitions), one per partition field. */
export interface PartitionFieldSummary {
  containsNull: boolean
  /** null when the writer did not say (optional field 518). */
  containsNan: boolean | null
  /** Single-value serialization of the smallest non-null, non-NaN value; null if none. */
  lowerBound: Uint8Array | null
  upperBound: Uint8Array | null
}

/** One manifest_file record of a manifest list (format v2). */
export interface ManifestFile {
  manifestPath: string
  manifestLength: bigint
  partitionSpecId: number
  content: ManifestContent
  /** null until the manifest list of the snapshot that adds it assigns that snapshot's number. */
  sequenceNumber: bigint | null
  /** Smallest data sequence number of live entries; null means "the one assigned on commit". */
  minSequenceNumber: bigint | null
  addedSnapshotId: bigint
  /** Counts are required in v2; null (v1 lists) means "unknown, assume non-zero". */
  addedFilesCount: number | null
  existingFilesCount: number | null
  deletedFilesCount: number | null
  addedRowsCount: bigint | null
  existingRowsCount: bigint | null
  deletedRowsCount: bigint | null
  partitions: PartitionFieldSummary[] | null
  keyMetadata: Uint8Array | null
}

/** Everything a manifest list needs about a manifest except where it was stored. */
export type ManifestSummary = Omit<ManifestFile, 'manifestPath' | 'manifestLength'>

export interface WrittenManifest {
  /** The Avro object container file, to upload as is. */
  bytes: Uint8Array
  summary: ManifestSummary
}

/**
 * Serializes a partition value for the manifest list's partition bounds with the spec's binary
 * single-value serialization (Appendix D). Injected so this folder does not duplicate the
 * serializer of shared/iceberg's value layer.
 */
export type SerializeBound = (type: PrimitiveType, value: IcebergValue) => Uint8Array
