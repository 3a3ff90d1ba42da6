// Writing and reading manifest lists (spec "Manifest Lists"): one Avro object container of
// manifest_file records per snapshot.
import { FloeError } from '../../errors.ts'
import { type AvroCodec, avroTypeOf, readContainer, writeContainer } from './avro-container.ts'
import { fieldNamesById, manifestFileSchema } from './avro-schemas.ts'
import type { ManifestContent, ManifestFile, PartitionFieldSummary } from './model.ts'

export interface ManifestListToWrite {
  snapshotId: bigint
  parentSnapshotId: bigint | null
  /** The new snapshot's sequence number, given to every manifest this snapshot adds. */
  sequenceNumber: bigint
  /** In order: usually the new manifests first, then the parent snapshot's kept ones. */
  manifests: readonly ManifestFile[]
  codec?: AvroCodec
  syncMarker?: Uint8Array
}

const manifestFileType = avroTypeOf(manifestFileSchema)

function broken(message: string, details: Record<string, unknown> = {}, cause?: unknown): FloeError {
  return new FloeError('INVARIANT_BROKEN', message, { details, cause })
}

const toBuffer = (bytes: Uint8Array | null): Buffer | null =>
  bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

function required<T>(value: T | null, manifest: ManifestFile, field: string): T {
  if (value === null) {
    // v2 makes the counts required; a v1 list's unknown counts cannot be carried into a v2 list.
    throw broken(`manifest ${field} is unknown and a v2 manifest list requires it`, {
      manifestPath: manifest.manifestPath,
    })
  }
  return value
}

export function writeManifestList(list: ManifestListToWrite): Uint8Array {
  const { snapshotId, sequenceNumber } = list
  const records = list.manifests.map((manifest) => {
    // Spec: a manifest added by this snapshot gets the snapshot's sequence number here, so one
    // manifest file survives commit retries; only the list is rewritten. Like Java's
    // ManifestFileWrapper, refuse an unassigned number on a manifest of another snapshot.
    if (
      (manifest.sequenceNumber === null || manifest.minSequenceNumber === null) &&
      manifest.addedSnapshotId !== snapshotId
    ) {
      throw broken('a manifest of an earlier snapshot has no sequence number', {
        manifestPath: manifest.manifestPath,
        addedSnapshotId: String(manifest.addedSnapshotId),
      })
    }
    return {
      manifest_path: manifest.manifestPath,
      manifest_length: manifest.manifestLength,
      partition_spec_id: manifest.partitionSpecId,
      content: manifest.content === 'deletes' ? 1 : 0,
      sequence_number: manifest.sequenceNumber ?? sequenceNumber,
      min_sequence_number: manifest.minSequenceNumber ?? sequenceNumber,
      added_snapshot_id: manifest.addedSnapshotId,
      added_files_count: required(manifest.addedFilesCount, manifest, 'added_files_count'),
      existing_files_count: required(manifest.existingFilesCount, manifest, 'existing_files_count'),
      deleted_files_count: required(manifest.deletedFilesCount, manifest, 'deleted_files_count'),
      added_rows_count: required(manifest.addedRowsCount, manifest, 'added_rows_count'),
      existing_rows_count: required(manifest.existingRowsCount, manifest, 'existing_rows_count'),
      deleted_rows_count: required(manifest.deletedRowsCount, manifest, 'deleted_rows_count'),
      partitions:
        manifest.partitions?.map((p) => ({
          contains_null: p.containsNull,
          contains_nan: p.containsNan,
          lower_bound: toBuffer(p.lowerBound),
          upper_bound: toBuffer(p.upperBound),
        })) ?? null,
      key_metadata: toBuffer(manifest.keyMetadata),
    }
  })
  try {
    return writeContainer(
      {
        schema: manifestFileSchema,
        type: manifestFileType,
        codec: list.codec ?? 'deflate',
        syncMarker: list.syncMarker,
        metadata: {
          'snapshot-id': String(snapshotId),
          // Java and pyiceberg both write the string "null" for a snapshot without a parent.
          'parent-snapshot-id': list.parentSnapshotId === null ? 'null' : String(list.parentSnapshotId),
          'sequence-number': String(sequenceNumber),
          'format-version': '2',
        },
      },
      records,
    )
  } catch (error) {
    if (error instanceof FloeError) throw error
    throw broken('a manifest list record does not fit the manifest_file schema', {}, error)
  }
}

export interface ManifestListRead {
  /** null when the header does not carry it (not required by the spec). */
  snapshotId: bigint | null
  parentSnapshotId: bigint | null
  sequenceNumber: bigint | null
  formatVersion: number
  manifests: ManifestFile[]
}

function headerLong(metadata: Map<string, string>, key: string): bigint | null {
  const text = metadata.get(key)
  if (text === undefined || text === 'null') return null
  try {
    return BigInt(text)
  } catch (error) {
    throw broken(`manifest list header ${key} is not a number`, { key, text }, error)
  }
}

type AvroRecord = Record<string, unknown>

/** Reads a manifest list of any engine, v1 or v2, by field id; v1 defaults follow the spec. */
export function readManifestList(bytes: Uint8Array): ManifestListRead {
  const { metadata, records: manifests } = readContainer(bytes, ({ schema }) => manifestFileReader(schema))
  return {
    snapshotId: headerLong(metadata, 'snapshot-id'),
    parentSnapshotId: headerLong(metadata, 'parent-snapshot-id'),
    sequenceNumber: headerLong(metadata, 'sequence-number'),
    formatVersion: Number(metadata.get('format-version') ?? '1'),
    manifests,
  }
}

/** Builds, once per file, a reader that finds every manifest_file field by its field id. */
function manifestFileReader(schema: object): (record: unknown) => ManifestFile {
  const fields = fieldNamesById(schema)
  const at = (record: AvroRecord, id: number): unknown => {
    const field = fields.get(id)
    return field === undefined ? undefined : record[field.name]
  }
  const partitionsType = fields.get(507)?.type
  const partitionsArray = Array.isArray(partitionsType) ? partitionsType.find((t) => t !== 'null') : partitionsType
  const summaryFields = fieldNamesById((partitionsArray as { items?: unknown } | undefined)?.items)
  const summaryAt = (record: AvroRecord, id: number): unknown => {
    const field = summaryFields.get(id)
    return field === undefined ? undefined : record[field.name]
  }
  const bytesOf = (value: unknown): Uint8Array | null =>
    Buffer.isBuffer(value) ? new Uint8Array(value.buffer, value.byteOffset, value.length) : null
  const orNull = <T>(value: unknown): T | null => (value === undefined || value === null ? null : (value as T))

  return (value: unknown): ManifestFile => {
    const record = value as AvroRecord
    const content: ManifestContent = at(record, 517) === 1 ? 'deletes' : 'data'
    const partitions = orNull<AvroRecord[]>(at(record, 507))
    return {
      manifestPath: at(record, 500) as string,
      manifestLength: at(record, 501) as bigint,
      partitionSpecId: at(record, 502) as number,
      content,
      // Spec Appendix E: reading a v1 list, sequence numbers default to 0.
      sequenceNumber: orNull<bigint>(at(record, 515)) ?? 0n,
      minSequenceNumber: orNull<bigint>(at(record, 516)) ?? 0n,
      addedSnapshotId: at(record, 503) as bigint,
      addedFilesCount: orNull<number>(at(record, 504)),
      existingFilesCount: orNull<number>(at(record, 505)),
      deletedFilesCount: orNull<number>(at(record, 506)),
      addedRowsCount: orNull<bigint>(at(record, 512)),
      existingRowsCount: orNull<bigint>(at(record, 513)),
      deletedRowsCount: orNull<bigint>(at(record, 514)),
      partitions:
        partitions?.map(
          (summary): PartitionFieldSummary => ({
            containsNull: summaryAt(summary, 509) === true,
            containsNan: orNull<boolean>(summaryAt(summary, 518)),
            lowerBound: bytesOf(summaryAt(summary, 510)),
            upperBound: bytesOf(summaryAt(summary, 511)),
          }),
        ) ?? null,
      keyMetadata: bytesOf(at(record, 519)),
    }
  }
}
