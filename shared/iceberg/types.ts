// Iceberg's schema and partition-spec model, shaped exactly like the spec's JSON (format v2), so
// metadata files and REST payloads need no translation. Also the in-memory representation of a
// value of each type, which the converter produces and the Parquet writer, the statistics and
// the partition transforms consume.

export type PrimitiveTypeName =
  | 'boolean'
  | 'int'
  | 'long'
  | 'float'
  | 'double'
  | 'date'
  | 'time'
  | 'timestamp'
  | 'timestamptz'
  | 'string'
  | 'uuid'
  | 'binary'

/** `decimal(P,S)` and `fixed[L]` carry parameters in the spec's string form. */
export type PrimitiveType =
  | PrimitiveTypeName
  | `decimal(${number},${number})`
  | `decimal(${number}, ${number})`
  | `fixed[${number}]`

export interface NestedField {
  id: number
  name: string
  required: boolean
  type: IcebergType
  doc?: string
}

export interface StructType {
  type: 'struct'
  fields: NestedField[]
}

export interface ListType {
  type: 'list'
  'element-id': number
  element: IcebergType
  'element-required': boolean
}

export interface MapType {
  type: 'map'
  'key-id': number
  key: IcebergType
  'value-id': number
  value: IcebergType
  'value-required': boolean
}

export type IcebergType = PrimitiveType | StructType | ListType | MapType

export interface Schema extends StructType {
  'schema-id': number
  'identifier-field-ids'?: number[]
}

export interface PartitionField {
  'source-id': number
  'field-id': number
  name: string
  /** identity, year, month, day, hour, bucket[N], truncate[W], void */
  transform: string
}

export interface PartitionSpec {
  'spec-id': number
  fields: PartitionField[]
}

export interface SortOrder {
  'order-id': number
  fields: {
    transform: string
    'source-id': number
    direction: 'asc' | 'desc'
    'null-order': 'nulls-first' | 'nulls-last'
  }[]
}

/**
 * A value in memory, by Iceberg type:
 *
 * | type                         | JS value                                          |
 * | ---------------------------- | ------------------------------------------------- |
 * | boolean                      | boolean                                           |
 * | int                          | number (32-bit integer)                           |
 * | long                         | bigint                                            |
 * | float, double                | number                                            |
 * | decimal(P,S)                 | bigint, the unscaled value                        |
 * | date                         | number, days since 1970-01-01                     |
 * | time                         | bigint, microseconds since midnight               |
 * | timestamp, timestamptz       | bigint, microseconds since 1970-01-01T00:00 UTC   |
 * | string                       | string                                            |
 * | uuid                         | Uint8Array of 16 bytes (big-endian, RFC 4122)     |
 * | binary, fixed[L]             | Uint8Array                                        |
 * | struct                       | StructValue: field name -> value                  |
 * | list                         | IcebergValue[]                                    |
 * | map                          | Map<IcebergValue, IcebergValue>                   |
 * | null / missing               | null                                              |
 */
export type IcebergValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | IcebergValue[]
  | Map<IcebergValue, IcebergValue>
  | StructValue

export interface StructValue {
  [field: string]: IcebergValue
}

export function isPrimitive(type: IcebergType): type is PrimitiveType {
  return typeof type === 'string'
}

export function decimalParams(type: string): { precision: number; scale: number } | undefined {
  const match = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(type)
  return match ? { precision: Number(match[1]), scale: Number(match[2]) } : undefined
}

export function fixedLength(type: string): number | undefined {
  const match = /^fixed\[(\d+)\]$/.exec(type)
  return match ? Number(match[1]) : undefined
}

/**
 * One data file as a manifest entry records it (the spec's `data_file` struct, content = data).
 * Statistics are keyed by field id; bounds are already in the spec's single-value binary
 * serialization.
 */
export interface DataFile {
  filePath: string
  fileFormat: 'PARQUET'
  specId: number
  /** Partition field name -> transformed value (the transform's result type, see IcebergValue). */
  partition: StructValue
  recordCount: bigint
  fileSizeInBytes: bigint
  columnSizes?: Map<number, bigint>
  valueCounts?: Map<number, bigint>
  nullValueCounts?: Map<number, bigint>
  nanValueCounts?: Map<number, bigint>
  lowerBounds?: Map<number, Uint8Array>
  upperBounds?: Map<number, Uint8Array>
  splitOffsets?: bigint[]
  sortOrderId?: number
}
