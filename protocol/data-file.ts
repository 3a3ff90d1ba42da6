// A data file as a WRITE-STATUS carries it, and its conversion from and to the manifest's DataFile.
// The partition tuple travels as the spec's JSON single-value text per partition field id: the
// control channel cannot know each table's partition type, so the coordinator converts it with
// the type of the file's spec when it reads the status.

import type { DataFile, IcebergType, IcebergValue, StructType, StructValue } from '../shared/iceberg/index.ts'
import { fromJsonSingleValue, toJsonSingleValueText } from '../shared/iceberg/values/index.ts'
import { FloeError } from '../shared/index.ts'
import { parseJson } from '../shared/json/index.ts'

/**
 * A DataFile in transit. Identical to DataFile except for the partition tuple, kept as text until
 * the receiver has the partition type of `specId`, and the bloom-filter sidecar's location.
 * On the wire an empty statistics map or split-offset list is the same as an absent one, so a
 * decoded entry leaves those properties out.
 */
export interface DataFileEntry extends Omit<DataFile, 'partition'> {
  /** Partition field id -> the value in the spec's JSON single-value text (`null` for null). */
  partitionJson: Map<number, string>
  bloomFilterLocation?: string
  /** The table (`namespace.table`) a routed dataset's file goes to; absent: the dataset's table. */
  table?: string
}

/** Converts a manifest DataFile for a WRITE-STATUS; `partitionType` is its spec's partition struct. */
export function toDataFileEntry(
  file: DataFile,
  partitionType: StructType,
  bloomFilterLocation?: string,
): DataFileEntry {
  const known = new Set(partitionType.fields.map((field) => field.name))
  for (const name of Object.keys(file.partition)) {
    if (!known.has(name)) {
      throw new FloeError(
        'CONVERSION_FAILED',
        `data file ${file.filePath}: partition field ${name} is not in its spec`,
        {
          details: { filePath: file.filePath, field: name, specId: file.specId },
        },
      )
    }
  }
  const partitionJson = new Map<number, string>()
  for (const field of partitionType.fields) {
    partitionJson.set(field.id, toJsonSingleValueText(field.type, file.partition[field.name] ?? null))
  }
  const { partition: _partition, ...rest } = file
  return bloomFilterLocation === undefined
    ? { ...rest, partitionJson }
    : { ...rest, partitionJson, bloomFilterLocation }
}

/** The manifest DataFile of an entry, its partition tuple read with its spec's partition struct. */
export function toDataFile(entry: DataFileEntry, partitionType: StructType): DataFile {
  const fieldIds = new Set(partitionType.fields.map((field) => field.id))
  for (const id of entry.partitionJson.keys()) {
    if (!fieldIds.has(id)) throw mismatch(entry, `partition field id ${id} is not in the partition type`)
  }
  const partition: StructValue = {}
  for (const field of partitionType.fields) {
    const text = entry.partitionJson.get(field.id)
    partition[field.name] = text === undefined ? null : partitionValue(entry, field.type, text)
  }
  const { partitionJson: _json, bloomFilterLocation: _bloom, table: _table, ...rest } = entry
  return { ...rest, partition }
}

function partitionValue(entry: DataFileEntry, type: IcebergType, text: string): IcebergValue {
  try {
    // parseJson keeps longs beyond 2^53 as bigint, which fromJsonSingleValue expects.
    return fromJsonSingleValue(type, parseJson(text))
  } catch (error) {
    throw mismatch(entry, `partition value ${text.slice(0, 60)} does not read as ${String(type)}`, error)
  }
}

function mismatch(entry: DataFileEntry, why: string, cause?: unknown): FloeError {
  return new FloeError('PROTOCOL_UNDECODABLE', `data file ${entry.filePath} (spec ${entry.specId}): ${why}`, {
    cause,
    details: { filePath: entry.filePath, specId: entry.specId, reason: 'partition-mismatch' },
  })
}
