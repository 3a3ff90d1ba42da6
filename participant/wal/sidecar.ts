// The `ready_*.json` sidecar of a segment (and, through fileFields, the data-file part of the
// shared layout's `segment_*.json`): everything a manifest entry and a WRITE-STATUS need
// about the file, so a restart can report a kept file without opening it. It is self-describing
// (it carries the partition struct type) because recovery runs before any dataset config is at
// hand, and it is lossless: 64-bit counts and offsets go through shared/json, bounds as base64
// of their single-value binary form, partition values in the spec's JSON single-value form.

import { readFile, stat } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import type { DataFile, StructType, StructValue } from '../../shared/iceberg/index.ts'
import {
  decodeBase64,
  encodeBase64,
  fromJsonSingleValue,
  type JsonSingleValue,
  toJsonSingleValue,
} from '../../shared/iceberg/values/index.ts'
import { FloeError, isFloeError } from '../../shared/index.ts'
import { type JsonObject, type JsonValue, parseJson, stringifyJsonBytes } from '../../shared/json/index.ts'
import type { BloomFilterLocation } from '../../shared/parquet/index.ts'
import { replaceFileDurably, storageError } from './durable.ts'
import type { ReadySegment } from './types.ts'

/**
 * A sidecar's text decoded with `decode`, and the size of its `.parquet` on disk; undefined when
 * the sidecar does not read back (recovery drops its rotation). A file that cannot be read at all
 * is a storage failure and throws.
 */
export async function readSidecarWithSize<T>(
  jsonPath: string,
  localPath: string,
  decode: (text: string) => T,
): Promise<{ decoded: T; size: number } | undefined> {
  let text: string
  let size: number
  try {
    text = await readFile(jsonPath, 'utf8')
    size = (await stat(localPath)).size
  } catch (error) {
    throw storageError('cannot read WAL file', jsonPath, error)
  }
  try {
    return { decoded: decode(text), size }
  } catch (error) {
    if (isFloeError(error)) return undefined
    throw error
  }
}

/** How a layout writes its sidecars and reads back their partition type, for recordUpload. */
export interface SidecarCodec<S> {
  encode(segment: S, partitionType: StructType): Uint8Array
  decode(text: string): { partitionType: StructType }
  /** The staging name of a sidecar being replaced, in the layout's naming. */
  temporaryName(name: string): string
}

/**
 * The segment with its upload location, recorded in its sidecar (replaced atomically). The
 * partition type is read back rather than re-encoded from memory: a recovered segment may carry
 * another spec's, which only its sidecar knows.
 */
export async function recordUpload<S extends SidecarFile & { readonly jsonPath: string }>(
  segment: S,
  location: string,
  codec: SidecarCodec<S>,
): Promise<S> {
  let text: string
  try {
    text = await readFile(segment.jsonPath, 'utf8')
  } catch (error) {
    throw storageError('cannot read WAL sidecar', segment.jsonPath, error)
  }
  const { partitionType } = codec.decode(text)
  const updated: S = { ...segment, uploadedLocation: location }
  const name = basename(segment.jsonPath)
  await replaceFileDurably(
    dirname(segment.jsonPath),
    name,
    codec.temporaryName(name),
    codec.encode(updated, partitionType),
  )
  return updated
}

const format = 'floe-wal-segment'
const version = 1

/** A ready segment as its sidecar records it, with the partition type needed to read it back. */
export function encodeSidecar(segment: ReadySegment, partitionType: StructType): Uint8Array {
  return stringifyJsonBytes({
    format,
    version,
    uuid: segment.uuid,
    topic: segment.topic,
    partition: segment.partition,
    start: segment.start,
    end: segment.end,
    ...fileFields(segment, partitionType),
  })
}

/** What a sidecar says about the data file itself, whichever layout wrote it. */
export type SidecarFile = Pick<
  ReadySegment,
  'partitionValues' | 'partitionPath' | 'dataFile' | 'bloomFilters' | 'sizeBytes' | 'uploadedLocation'
>

/** The data file's part of a sidecar (every field but the header and what names the Kafka records). */
export function fileFields(file: SidecarFile, partitionType: StructType): Record<string, unknown> {
  const dataFile = file.dataFile
  return {
    partitionType,
    partitionValues: toJsonSingleValue(partitionType, file.partitionValues) as JsonSingleValue,
    partitionPath: file.partitionPath,
    specId: dataFile.specId,
    recordCount: dataFile.recordCount,
    fileSizeInBytes: dataFile.fileSizeInBytes,
    columnSizes: countsToJson(dataFile.columnSizes),
    valueCounts: countsToJson(dataFile.valueCounts),
    nullValueCounts: countsToJson(dataFile.nullValueCounts),
    nanValueCounts: countsToJson(dataFile.nanValueCounts),
    lowerBounds: boundsToJson(dataFile.lowerBounds),
    upperBounds: boundsToJson(dataFile.upperBounds),
    splitOffsets: dataFile.splitOffsets,
    sortOrderId: dataFile.sortOrderId,
    bloomFilters: file.bloomFilters,
    sizeBytes: file.sizeBytes,
    uploadedLocation: file.uploadedLocation,
  }
}

/**
 * A sidecar that does not read back is a broken local file. Recovery catches this and treats the
 * rotation as lost (its records are read again), so it never stops a worker from there.
 */
export function malformed(why: string, cause?: unknown): FloeError {
  return new FloeError('INVARIANT_BROKEN', `WAL sidecar is malformed: ${why}`, { cause, details: { reason: why } })
}

export interface DecodedSidecar {
  segment: Omit<ReadySegment, 'localPath' | 'jsonPath'>
  partitionType: StructType
}

export function decodeSidecar(text: string): DecodedSidecar {
  const json = sidecarObject(text, format, version)
  const { partitionType, ...file } = decodeFileFields(json)
  const segment: DecodedSidecar['segment'] = {
    uuid: string(json['uuid'], 'uuid'),
    topic: string(json['topic'], 'topic'),
    partition: integer(json['partition'], 'partition'),
    start: long(json['start'], 'start'),
    end: long(json['end'], 'end'),
    ...file,
  }
  return { segment, partitionType }
}

/** The sidecar's JSON object, once its format and version are the expected ones. */
export function sidecarObject(text: string, expectedFormat: string, expectedVersion: number): JsonObject {
  let root: JsonValue
  try {
    root = parseJson(text)
  } catch (error) {
    throw malformed('not JSON', error)
  }
  const json = object(root, 'sidecar')
  if (json['format'] !== expectedFormat || json['version'] !== expectedVersion) {
    throw malformed('unknown format or version')
  }
  return json
}

/** The data file's part of a sidecar, read back (the inverse of fileFields). */
export function decodeFileFields(json: JsonObject): SidecarFile & { partitionType: StructType } {
  const partitionType = object(json['partitionType'], 'partitionType') as unknown as StructType
  if (partitionType.type !== 'struct' || !Array.isArray(partitionType.fields)) {
    throw malformed('partitionType is not a struct')
  }
  let partitionValues: StructValue
  try {
    partitionValues = fromJsonSingleValue(partitionType, json['partitionValues']) as StructValue
  } catch (error) {
    throw malformed('partition values do not fit their type', error)
  }
  const dataFile: Omit<DataFile, 'filePath'> = {
    fileFormat: 'PARQUET',
    specId: integer(json['specId'], 'specId'),
    partition: partitionValues,
    recordCount: long(json['recordCount'], 'recordCount'),
    fileSizeInBytes: long(json['fileSizeInBytes'], 'fileSizeInBytes'),
    columnSizes: countsFromJson(json['columnSizes'], 'columnSizes'),
    valueCounts: countsFromJson(json['valueCounts'], 'valueCounts'),
    nullValueCounts: countsFromJson(json['nullValueCounts'], 'nullValueCounts'),
    nanValueCounts: countsFromJson(json['nanValueCounts'], 'nanValueCounts'),
    lowerBounds: boundsFromJson(json['lowerBounds'], 'lowerBounds'),
    upperBounds: boundsFromJson(json['upperBounds'], 'upperBounds'),
    splitOffsets: array(json['splitOffsets'], 'splitOffsets').map((value) => long(value, 'splitOffsets')),
  }
  if (json['sortOrderId'] !== undefined) dataFile.sortOrderId = integer(json['sortOrderId'], 'sortOrderId')
  const bloomFilters: BloomFilterLocation[] = array(json['bloomFilters'], 'bloomFilters').map((value) => {
    const location = object(value, 'bloomFilters')
    return {
      fieldId: integer(location['fieldId'], 'bloomFilters.fieldId'),
      rowGroup: integer(location['rowGroup'], 'bloomFilters.rowGroup'),
      offset: long(location['offset'], 'bloomFilters.offset'),
      length: integer(location['length'], 'bloomFilters.length'),
    }
  })
  const uploadedLocation = json['uploadedLocation']
  if (uploadedLocation !== undefined && typeof uploadedLocation !== 'string') {
    throw malformed('uploadedLocation is not a string')
  }
  return {
    partitionType,
    partitionValues,
    partitionPath: string(json['partitionPath'], 'partitionPath'),
    dataFile,
    bloomFilters,
    sizeBytes: integer(json['sizeBytes'], 'sizeBytes'),
    ...(uploadedLocation === undefined ? {} : { uploadedLocation }),
  }
}

function countsToJson(counts: ReadonlyMap<number, bigint> | undefined): Record<string, bigint> | undefined {
  return counts && Object.fromEntries([...counts].map(([id, count]) => [String(id), count]))
}

function boundsToJson(bounds: ReadonlyMap<number, Uint8Array> | undefined): Record<string, string> | undefined {
  return bounds && Object.fromEntries([...bounds].map(([id, bytes]) => [String(id), encodeBase64(bytes)]))
}

function countsFromJson(value: JsonValue | undefined, what: string): Map<number, bigint> | undefined {
  if (value === undefined) return undefined
  return new Map(Object.entries(object(value, what)).map(([id, count]) => [fieldId(id, what), long(count, what)]))
}

function boundsFromJson(value: JsonValue | undefined, what: string): Map<number, Uint8Array> | undefined {
  if (value === undefined) return undefined
  return new Map(
    Object.entries(object(value, what)).map(([id, text]) => {
      const bytes = typeof text === 'string' ? decodeBase64(text) : undefined
      if (!bytes) throw malformed(`${what}: not base64`)
      return [fieldId(id, what), bytes]
    }),
  )
}

function fieldId(text: string, what: string): number {
  const id = Number(text)
  if (!Number.isSafeInteger(id) || String(id) !== text) throw malformed(`${what}: key ${text} is no field id`)
  return id
}

export function object(value: JsonValue | undefined, what: string): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw malformed(`${what} is not an object`)
  }
  return value
}

export function array(value: JsonValue | undefined, what: string): JsonValue[] {
  if (!Array.isArray(value)) throw malformed(`${what} is not an array`)
  return value
}

export function string(value: JsonValue | undefined, what: string): string {
  if (typeof value !== 'string') throw malformed(`${what} is not a string`)
  return value
}

export function integer(value: JsonValue | undefined, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw malformed(`${what} is not an integer`)
  return value
}

export function long(value: JsonValue | undefined, what: string): bigint {
  if (typeof value === 'bigint') return value
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value)
  throw malformed(`${what} is not an integer`)
}
