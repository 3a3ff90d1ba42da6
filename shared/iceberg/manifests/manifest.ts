// Writing and reading manifests (spec "Manifests"): an Avro object container of manifest_entry
// records, with the table schema and partition spec in its header.
import { FloeError } from '../../errors.ts'
import type { IcebergValue, PartitionField, PartitionSpec, Schema, StructValue } from '../types.ts'
import { type AvroCodec, avroTypeOf, readContainer, writeContainer } from './avro-container.ts'
import { fieldNamesById, manifestEntrySchema } from './avro-schemas.ts'
import {
  type ContentFile,
  DataFileContent,
  type ManifestContent,
  type ManifestEntry,
  ManifestEntryStatus,
  type ManifestEntryToWrite,
  type ManifestFile,
  type SerializeBound,
  type WrittenManifest,
} from './model.ts'
import { collectNamedTypes, partitionValueReader } from './partition-fields.ts'
import { PartitionSummaryBuilder } from './partition-summary.ts'

export interface ManifestToWrite {
  /** The table's current schema; its JSON goes into the header. */
  schema: Schema
  /** The spec every entry's partition tuple follows. */
  spec: PartitionSpec
  formatVersion: 2
  content: ManifestContent
  /** The snapshot this manifest is written for: added_snapshot_id, and the id of ADDED entries. */
  snapshotId: bigint
  entries: Iterable<ManifestEntryToWrite>
  serializeBound: SerializeBound
  /** deflate (default) as Java writes manifests; null for debugging. */
  codec?: AvroCodec
  syncMarker?: Uint8Array
}

function broken(message: string, details: Record<string, unknown> = {}, cause?: unknown): FloeError {
  return new FloeError('INVARIANT_BROKEN', message, { details, cause })
}

function mapToAvro<V>(map: Map<number, V> | undefined, value: (v: V) => unknown): unknown {
  if (map === undefined) return null
  const out: { key: number; value: unknown }[] = []
  for (const [key, v] of map) out.push({ key, value: value(v) })
  return out
}

const same = <V>(v: V): V => v
const asBuffer = (v: Uint8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength)

export function writeManifest(manifest: ManifestToWrite): WrittenManifest {
  if (manifest.formatVersion !== 2) {
    throw new FloeError('CONFIG_INVALID', `manifest format version ${manifest.formatVersion} is not supported`)
  }
  const { schema, spec, snapshotId, content } = manifest
  const entrySchema = manifestEntrySchema(schema, spec)
  const summary = new PartitionSummaryBuilder(entrySchema.partition, manifest.serializeBound)
  const counts = { added: 0, existing: 0, deleted: 0, addedRows: 0n, existingRows: 0n, deletedRows: 0n }
  let minSequenceNumber: bigint | null = null
  const avroPartition = (partition: StructValue): Record<string, unknown> => {
    const record: Record<string, unknown> = {}
    for (const codec of entrySchema.partition) {
      record[codec.avroField.name as string] = codec.toAvro(partition[codec.field.name] ?? null)
    }
    return record
  }

  function* avroEntries(): Generator<unknown> {
    for (const entry of manifest.entries) {
      const file = entry.dataFile
      const fileContent = file.content ?? DataFileContent.DATA
      if ((fileContent === DataFileContent.DATA) !== (content === 'data')) {
        throw broken('a manifest holds either data files or delete files', { filePath: file.filePath, content })
      }
      if (file.specId !== spec['spec-id']) {
        throw broken('a manifest holds files of one partition spec', { filePath: file.filePath, specId: file.specId })
      }
      let entrySnapshotId = entry.snapshotId ?? null
      const sequenceNumber = entry.sequenceNumber ?? null
      const fileSequenceNumber = entry.fileSequenceNumber ?? null
      switch (entry.status) {
        case ManifestEntryStatus.ADDED:
          counts.added += 1
          counts.addedRows += file.recordCount
          entrySnapshotId ??= snapshotId
          break
        case ManifestEntryStatus.EXISTING:
        case ManifestEntryStatus.DELETED:
          // Spec: EXISTING and DELETED entries carry both sequence numbers explicitly, never inherit.
          if (sequenceNumber === null || fileSequenceNumber === null) {
            throw broken('an existing or deleted manifest entry needs explicit sequence numbers', {
              filePath: file.filePath,
              status: entry.status,
            })
          }
          if (entry.status === ManifestEntryStatus.EXISTING) {
            if (entrySnapshotId === null)
              throw broken('an existing entry keeps its snapshot id', { filePath: file.filePath })
            counts.existing += 1
            counts.existingRows += file.recordCount
          } else {
            entrySnapshotId ??= snapshotId
            counts.deleted += 1
            counts.deletedRows += file.recordCount
          }
          break
        default:
          throw broken(`manifest entry status ${String(entry.status)} is not one of 0, 1, 2`)
      }
      if (entry.status !== ManifestEntryStatus.DELETED && sequenceNumber !== null) {
        if (minSequenceNumber === null || sequenceNumber < minSequenceNumber) minSequenceNumber = sequenceNumber
      }
      summary.add(file.partition)
      yield {
        status: entry.status,
        snapshot_id: entrySnapshotId,
        sequence_number: sequenceNumber,
        file_sequence_number: fileSequenceNumber,
        data_file: {
          content: fileContent,
          file_path: file.filePath,
          file_format: file.fileFormat,
          partition: avroPartition(file.partition),
          record_count: file.recordCount,
          file_size_in_bytes: file.fileSizeInBytes,
          column_sizes: mapToAvro(file.columnSizes, same),
          value_counts: mapToAvro(file.valueCounts, same),
          null_value_counts: mapToAvro(file.nullValueCounts, same),
          nan_value_counts: mapToAvro(file.nanValueCounts, same),
          lower_bounds: mapToAvro(file.lowerBounds, asBuffer),
          upper_bounds: mapToAvro(file.upperBounds, asBuffer),
          key_metadata: file.keyMetadata ? asBuffer(file.keyMetadata) : null,
          split_offsets: file.splitOffsets ?? null,
          equality_ids: file.equalityIds ?? null,
          sort_order_id: file.sortOrderId ?? null,
          referenced_data_file: file.referencedDataFile ?? null,
        },
      }
    }
  }

  let bytes: Uint8Array
  try {
    bytes = writeContainer(
      {
        schema: entrySchema.avro,
        type: avroTypeOf(entrySchema.avro),
        codec: manifest.codec ?? 'deflate',
        syncMarker: manifest.syncMarker,
        metadata: {
          schema: JSON.stringify(schema),
          'schema-id': String(schema['schema-id']),
          'partition-spec': JSON.stringify(spec.fields),
          'partition-spec-id': String(spec['spec-id']),
          'format-version': '2',
          content,
        },
      },
      avroEntries(),
    )
  } catch (error) {
    if (error instanceof FloeError) throw error
    // avsc rejects a value that does not fit its Avro type (a number where a bigint belongs, ...).
    throw broken('a manifest entry does not fit the manifest schema', {}, error)
  }
  return {
    bytes,
    summary: {
      partitionSpecId: spec['spec-id'],
      content,
      sequenceNumber: null,
      minSequenceNumber,
      addedSnapshotId: snapshotId,
      addedFilesCount: counts.added,
      existingFilesCount: counts.existing,
      deletedFilesCount: counts.deleted,
      addedRowsCount: counts.addedRows,
      existingRowsCount: counts.existingRows,
      deletedRowsCount: counts.deletedRows,
      partitions: summary.summaries(),
      keyMetadata: null,
    },
  }
}

/** The manifest list record of a manifest once it is stored at `manifestPath`. */
export function manifestFileOf(written: WrittenManifest, manifestPath: string): ManifestFile {
  return { manifestPath, manifestLength: BigInt(written.bytes.length), ...written.summary }
}

export interface ManifestRead {
  /** 1 when the header does not say (v1 made the key optional). */
  formatVersion: number
  content: ManifestContent
  /** The table schema when the manifest was written; absent only in malformed files. */
  schema: Schema | undefined
  partitionSpec: PartitionSpec
  entries: ManifestEntry[]
}

/**
 * Reads a manifest written by any engine. With `inheritFrom` (its manifest list record), null
 * snapshot ids and sequence numbers are inherited as the spec says; without it they stay null.
 */
export function readManifest(bytes: Uint8Array, options: { inheritFrom?: ManifestFile } = {}): ManifestRead {
  const inherit = options.inheritFrom
  const { metadata, records: entries } = readContainer(bytes, ({ schema: avro, metadata }) => {
    const readEntry = entryReader(avro, headerSpec(metadata))
    return inherit
      ? (record) => inheritFromManifest(readEntry(record as AvroRecord), inherit)
      : (record) => readEntry(record as AvroRecord)
  })
  const schemaText = metadata.get('schema')
  return {
    formatVersion: Number(metadata.get('format-version') ?? '1'),
    content: metadata.get('content') === 'deletes' ? 'deletes' : 'data',
    schema: schemaText === undefined ? undefined : (parseHeader(schemaText, 'schema') as Schema),
    partitionSpec: headerSpec(metadata),
    entries,
  }
}

function parseHeader(text: string, key: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    throw broken(`manifest header ${key} is not JSON`, { key }, error)
  }
}

function headerSpec(metadata: Map<string, string>): PartitionSpec {
  const fields = metadata.get('partition-spec')
  return {
    'spec-id': Number(metadata.get('partition-spec-id') ?? '0'),
    fields: fields === undefined ? [] : (parseHeader(fields, 'partition-spec') as PartitionField[]),
  }
}

/** Spec "Sequence Number Inheritance"; a v1 manifest's sequence numbers default to its list's 0. */
export function inheritFromManifest(entry: ManifestEntry, manifest: ManifestFile): ManifestEntry {
  const inherits = entry.status === ManifestEntryStatus.ADDED || manifest.sequenceNumber === 0n
  return {
    ...entry,
    snapshotId: entry.snapshotId ?? manifest.addedSnapshotId,
    sequenceNumber: entry.sequenceNumber ?? (inherits ? manifest.sequenceNumber : null),
    fileSequenceNumber: entry.fileSequenceNumber ?? (inherits ? manifest.sequenceNumber : null),
    dataFile: { ...entry.dataFile, specId: manifest.partitionSpecId },
  }
}

type AvroRecord = Record<string, unknown>

/** Builds, once per file, a reader that finds every field by its Iceberg field id. */
function entryReader(avro: object, spec: PartitionSpec): (record: AvroRecord) => ManifestEntry {
  const specId = spec['spec-id']
  const named = collectNamedTypes(avro)
  const resolve = (type: unknown): unknown => {
    const branch = Array.isArray(type) ? type.find((t) => t !== 'null') : type
    return typeof branch === 'string' ? (named.get(branch) ?? branch) : branch
  }
  const entryFields = fieldNamesById(avro)
  const name = (fields: typeof entryFields, id: number): string => fields.get(id)?.name ?? `\u0000missing-${id}`
  const dataFileField = entryFields.get(2)
  if (!dataFileField) throw broken('manifest schema has no data_file (field id 2)')
  const fileFields = fieldNamesById(resolve(dataFileField.type))
  const partitionField = fileFields.get(102)
  const partitionNames = new Map(spec.fields.map((f) => [f['field-id'], f.name]))
  const partitionReaders = [...fieldNamesById(resolve(partitionField?.type)).entries()].map(([id, field]) => ({
    avroName: field.name,
    icebergName: partitionNames.get(id) ?? field.name,
    read: partitionValueReader(field.type, named),
  }))
  const mapOf = <V>(id: number, value: (v: unknown) => V) => {
    const fieldName = name(fileFields, id)
    const items = resolve((resolve(fileFields.get(id)?.type) as { items?: unknown } | undefined)?.items) as
      | { fields?: { name: string }[] }
      | undefined
    const keyName = items?.fields?.[0]?.name ?? 'key'
    const valueName = items?.fields?.[1]?.name ?? 'value'
    return (file: AvroRecord): Map<number, V> | undefined => {
      const array = file[fieldName] as AvroRecord[] | null | undefined
      if (array === null || array === undefined) return undefined
      const map = new Map<number, V>()
      for (const pair of array) map.set(pair[keyName] as number, value(pair[valueName]))
      return map
    }
  }
  const asBigint = (v: unknown): bigint => v as bigint
  const asBytes = (v: unknown): Uint8Array => {
    const b = v as Buffer
    return new Uint8Array(b.buffer, b.byteOffset, b.length)
  }
  const columnSizes = mapOf(108, asBigint)
  const valueCounts = mapOf(109, asBigint)
  const nullValueCounts = mapOf(110, asBigint)
  const nanValueCounts = mapOf(137, asBigint)
  const lowerBounds = mapOf(125, asBytes)
  const upperBounds = mapOf(128, asBytes)
  const n = {
    status: name(entryFields, 0),
    snapshotId: name(entryFields, 1),
    sequenceNumber: name(entryFields, 3),
    fileSequenceNumber: name(entryFields, 4),
    dataFile: dataFileField.name,
    content: name(fileFields, 134),
    filePath: name(fileFields, 100),
    fileFormat: name(fileFields, 101),
    partition: name(fileFields, 102),
    recordCount: name(fileFields, 103),
    fileSizeInBytes: name(fileFields, 104),
    keyMetadata: name(fileFields, 131),
    splitOffsets: name(fileFields, 132),
    equalityIds: name(fileFields, 135),
    sortOrderId: name(fileFields, 140),
    referencedDataFile: name(fileFields, 143),
  }

  return (record) => {
    const file = record[n.dataFile] as AvroRecord
    const avroPartition = (file[n.partition] ?? {}) as AvroRecord
    const partition: StructValue = {}
    for (const p of partitionReaders) partition[p.icebergName] = p.read(avroPartition[p.avroName]) as IcebergValue
    const status = record[n.status]
    if (status !== 0 && status !== 1 && status !== 2) throw broken('manifest entry with an unknown status', { status })
    const content = (file[n.content] ?? 0) as number
    if (content !== 0 && content !== 1 && content !== 2) throw broken('data file with an unknown content', { content })
    const dataFile: ContentFile = {
      content,
      filePath: file[n.filePath] as string,
      fileFormat: file[n.fileFormat] as string,
      specId,
      partition,
      recordCount: file[n.recordCount] as bigint,
      fileSizeInBytes: file[n.fileSizeInBytes] as bigint,
    }
    // Optional fields are set only when present, so a read file equals the one that was written.
    const sizes = columnSizes(file)
    if (sizes) dataFile.columnSizes = sizes
    const values = valueCounts(file)
    if (values) dataFile.valueCounts = values
    const nulls = nullValueCounts(file)
    if (nulls) dataFile.nullValueCounts = nulls
    const nans = nanValueCounts(file)
    if (nans) dataFile.nanValueCounts = nans
    const lower = lowerBounds(file)
    if (lower) dataFile.lowerBounds = lower
    const upper = upperBounds(file)
    if (upper) dataFile.upperBounds = upper
    const keyMetadata = file[n.keyMetadata]
    if (keyMetadata) dataFile.keyMetadata = asBytes(keyMetadata)
    const splitOffsets = file[n.splitOffsets]
    if (splitOffsets) dataFile.splitOffsets = splitOffsets as bigint[]
    const equalityIds = file[n.equalityIds]
    if (equalityIds) dataFile.equalityIds = equalityIds as number[]
    const sortOrderId = file[n.sortOrderId]
    if (typeof sortOrderId === 'number') dataFile.sortOrderId = sortOrderId
    const referencedDataFile = file[n.referencedDataFile]
    if (typeof referencedDataFile === 'string') dataFile.referencedDataFile = referencedDataFile
    return {
      status,
      snapshotId: (record[n.snapshotId] ?? null) as bigint | null,
      sequenceNumber: (record[n.sequenceNumber] ?? null) as bigint | null,
      fileSequenceNumber: (record[n.fileSequenceNumber] ?? null) as bigint | null,
      dataFile,
    }
  }
}
