// Reading and writing a table metadata file. The lossless JSON layer keeps every digit; this
// layer gives the known int64 fields one type (bigint) whatever their size, fills what format v1
// files may leave out, and checks the fields every later step relies on. A file that fails these
// checks is refused with CATALOG_BAD_REQUEST: it is the catalog's answer that is unusable.
import { FloeError } from '../../errors.ts'
import { type JsonObject, type JsonValue, parseJson, parseJsonBytes, stringifyJson } from '../../json/index.ts'
import type { PartitionSpec, Schema, SortOrder } from '../types.ts'
import {
  mainBranch,
  partitionFieldIdStart,
  type Snapshot,
  type SnapshotLogEntry,
  type SnapshotRef,
  type TableMetadata,
} from './model.ts'

function invalid(path: string, problem: string): FloeError {
  return new FloeError('CATALOG_BAD_REQUEST', `table metadata: ${path} ${problem}`, { details: { path } })
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function object(value: unknown, path: string): JsonObject {
  if (!isObject(value)) throw invalid(path, 'is not an object')
  return value
}

function array(value: unknown, path: string): JsonValue[] {
  if (!Array.isArray(value)) throw invalid(path, 'is not an array')
  return value
}

function string(value: unknown, path: string): string {
  if (typeof value !== 'string') throw invalid(path, 'is not a string')
  return value
}

function int(value: unknown, path: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value
  throw invalid(path, 'is not an integer that fits a JS number')
}

function long(value: unknown, path: string): bigint {
  if (typeof value === 'bigint') return value
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value)
  throw invalid(path, 'is not an integer')
}

function optionalLong(value: unknown, path: string): bigint | undefined {
  return value === undefined || value === null ? undefined : long(value, path)
}

function strings(value: unknown, path: string): Record<string, string> {
  const result: Record<string, string> = {}
  for (const [key, entry] of Object.entries(object(value, path))) result[key] = string(entry, `${path}.${key}`)
  return result
}

function withLongs<T extends JsonObject>(source: T, keys: readonly string[], path: string): JsonObject {
  const result: JsonObject = { ...source }
  for (const key of keys) {
    if (source[key] !== undefined && source[key] !== null) result[key] = long(source[key], `${path}.${key}`)
  }
  return result
}

function snapshotFrom(value: unknown, path: string, formatVersion: number): Snapshot {
  const raw = object(value, path)
  const summary = raw.summary === undefined && formatVersion === 1 ? { operation: 'append' } : raw.summary
  const snapshot = {
    ...withLongs(raw, ['first-row-id', 'added-rows'], path),
    'snapshot-id': long(raw['snapshot-id'], `${path}.snapshot-id`),
    'sequence-number':
      raw['sequence-number'] === undefined && formatVersion === 1
        ? 0n
        : long(raw['sequence-number'], `${path}.sequence-number`),
    'timestamp-ms': int(raw['timestamp-ms'], `${path}.timestamp-ms`),
    summary: strings(summary, `${path}.summary`),
  } as JsonObject
  const parent = optionalLong(raw['parent-snapshot-id'], `${path}.parent-snapshot-id`)
  if (parent === undefined) delete snapshot['parent-snapshot-id']
  else snapshot['parent-snapshot-id'] = parent
  if (raw['manifest-list'] !== undefined || formatVersion >= 2) string(raw['manifest-list'], `${path}.manifest-list`)
  if (typeof (snapshot.summary as JsonObject).operation !== 'string')
    throw invalid(`${path}.summary.operation`, 'is missing')
  return snapshot as unknown as Snapshot
}

function refFrom(value: unknown, path: string): SnapshotRef {
  const raw = object(value, path)
  if (raw.type !== 'branch' && raw.type !== 'tag') throw invalid(`${path}.type`, 'is neither branch nor tag')
  const ref = withLongs(raw, ['snapshot-id', 'max-ref-age-ms', 'max-snapshot-age-ms'], path)
  long(raw['snapshot-id'], `${path}.snapshot-id`)
  for (const key of ['max-ref-age-ms', 'max-snapshot-age-ms', 'min-snapshots-to-keep']) {
    if (ref[key] === null) delete ref[key]
  }
  return ref as unknown as SnapshotRef
}

function statisticsFrom(value: unknown, path: string): JsonObject {
  const raw = object(value, path)
  const result = withLongs(raw, ['snapshot-id', 'file-size-in-bytes', 'file-footer-size-in-bytes'], path)
  if (raw['blob-metadata'] !== undefined) {
    result['blob-metadata'] = array(raw['blob-metadata'], `${path}.blob-metadata`).map((blob, i) =>
      withLongs(
        object(blob, `${path}.blob-metadata[${i}]`),
        ['snapshot-id', 'sequence-number'],
        `${path}.blob-metadata[${i}]`,
      ),
    )
  }
  return result
}

/** Turns parsed metadata JSON into the model: int64 fields as bigint, v1 gaps filled. */
export function tableMetadataFromJson(value: JsonValue): TableMetadata {
  const raw = object(value, '$')
  const formatVersion = int(raw['format-version'], 'format-version')
  if (formatVersion < 1 || formatVersion > 3) throw invalid('format-version', `is ${formatVersion}, not 1, 2 or 3`)

  const schemas =
    raw.schemas === undefined && formatVersion === 1
      ? [{ ...object(raw.schema, 'schema'), 'schema-id': 0 }]
      : array(raw.schemas, 'schemas').map((schema, i) => object(schema, `schemas[${i}]`))
  const specs =
    raw['partition-specs'] === undefined && formatVersion === 1
      ? [{ 'spec-id': 0, fields: array(raw['partition-spec'], 'partition-spec') }]
      : array(raw['partition-specs'], 'partition-specs').map((spec, i) => object(spec, `partition-specs[${i}]`))
  const partitionFieldIds = specs.flatMap((spec) =>
    Array.isArray(spec.fields) ? spec.fields.map((field) => (isObject(field) ? Number(field['field-id']) : 0)) : [],
  )

  const formatIsV1 = formatVersion === 1
  const snapshots = (
    raw.snapshots === undefined || raw.snapshots === null ? [] : array(raw.snapshots, 'snapshots')
  ).map((snapshot, i) => snapshotFrom(snapshot, `snapshots[${i}]`, formatVersion))
  const currentRaw = raw['current-snapshot-id']
  const current = currentRaw === undefined || currentRaw === null ? null : long(currentRaw, 'current-snapshot-id')
  const currentSnapshotId = current === -1n ? null : current

  const refs: Record<string, SnapshotRef> = {}
  for (const [name, ref] of Object.entries(raw.refs === undefined ? {} : object(raw.refs, 'refs'))) {
    refs[name] = refFrom(ref, `refs.${name}`)
  }
  // Files written before refs existed name the current snapshot only; Iceberg reads that as main.
  if (refs[mainBranch] === undefined && currentSnapshotId !== null) {
    refs[mainBranch] = { type: 'branch', 'snapshot-id': currentSnapshotId }
  }

  const snapshotLog = (raw['snapshot-log'] === undefined ? [] : array(raw['snapshot-log'], 'snapshot-log')).map(
    (entry, i): SnapshotLogEntry => {
      const e = object(entry, `snapshot-log[${i}]`)
      return {
        ...e,
        'snapshot-id': long(e['snapshot-id'], `snapshot-log[${i}].snapshot-id`),
        'timestamp-ms': int(e['timestamp-ms'], `snapshot-log[${i}].timestamp-ms`),
      }
    },
  )
  const metadataLog = (raw['metadata-log'] === undefined ? [] : array(raw['metadata-log'], 'metadata-log')).map(
    (entry, i) => {
      const e = object(entry, `metadata-log[${i}]`)
      return {
        ...e,
        'metadata-file': string(e['metadata-file'], `metadata-log[${i}].metadata-file`),
        'timestamp-ms': int(e['timestamp-ms'], `metadata-log[${i}].timestamp-ms`),
      }
    },
  )

  const sortOrders =
    raw['sort-orders'] === undefined && formatIsV1
      ? [{ 'order-id': 0, fields: [] }]
      : array(raw['sort-orders'], 'sort-orders').map((order, i) => object(order, `sort-orders[${i}]`))

  const metadata = {
    ...raw,
    'format-version': formatVersion,
    'table-uuid': string(raw['table-uuid'], 'table-uuid'),
    location: string(raw.location, 'location'),
    'last-sequence-number':
      raw['last-sequence-number'] === undefined && formatIsV1
        ? 0n
        : long(raw['last-sequence-number'], 'last-sequence-number'),
    'last-updated-ms': int(raw['last-updated-ms'], 'last-updated-ms'),
    'last-column-id': int(raw['last-column-id'], 'last-column-id'),
    schemas: schemas as unknown as Schema[],
    'current-schema-id':
      raw['current-schema-id'] === undefined && formatIsV1 ? 0 : int(raw['current-schema-id'], 'current-schema-id'),
    'partition-specs': specs as unknown as PartitionSpec[],
    'default-spec-id':
      raw['default-spec-id'] === undefined && formatIsV1 ? 0 : int(raw['default-spec-id'], 'default-spec-id'),
    'last-partition-id':
      raw['last-partition-id'] === undefined && formatIsV1
        ? Math.max(partitionFieldIdStart - 1, ...partitionFieldIds)
        : int(raw['last-partition-id'], 'last-partition-id'),
    properties: raw.properties === undefined || raw.properties === null ? {} : strings(raw.properties, 'properties'),
    'current-snapshot-id': currentSnapshotId,
    snapshots,
    'snapshot-log': snapshotLog,
    'metadata-log': metadataLog,
    'sort-orders': sortOrders as unknown as SortOrder[],
    'default-sort-order-id':
      raw['default-sort-order-id'] === undefined && formatIsV1
        ? 0
        : int(raw['default-sort-order-id'], 'default-sort-order-id'),
    refs,
    statistics: (raw.statistics === undefined ? [] : array(raw.statistics, 'statistics')).map((s, i) =>
      statisticsFrom(s, `statistics[${i}]`),
    ),
    'partition-statistics': (raw['partition-statistics'] === undefined
      ? []
      : array(raw['partition-statistics'], 'partition-statistics')
    ).map((s, i) => statisticsFrom(s, `partition-statistics[${i}]`)),
  }
  return metadata as unknown as TableMetadata
}

/** Parses a metadata file's text or bytes. */
export function parseTableMetadata(source: string | Uint8Array): TableMetadata {
  let value: JsonValue
  try {
    value = typeof source === 'string' ? parseJson(source) : parseJsonBytes(source)
  } catch (error) {
    throw new FloeError('CATALOG_BAD_REQUEST', 'table metadata is not valid JSON', { cause: error })
  }
  return tableMetadataFromJson(value)
}

/** The metadata as the spec's JSON object (what a file or a REST body holds), bigints intact. */
export function tableMetadataToJson(metadata: TableMetadata): JsonObject {
  // Iceberg's Java writer says "no current snapshot" with -1; every reader accepts it.
  return { ...metadata, 'current-snapshot-id': metadata['current-snapshot-id'] ?? -1n } as unknown as JsonObject
}

/** The metadata file's text: compact JSON, as Iceberg writes it. */
export function serializeTableMetadata(metadata: TableMetadata): string {
  return stringifyJson(tableMetadataToJson(metadata))
}
