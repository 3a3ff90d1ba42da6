// Test support for this folder's tests only (not exported from index.ts): a small stand-in for
// the value layer's single-value serializer, a table and entries to write.
import type { IcebergValue, PartitionSpec, PrimitiveType, Schema, StructValue } from '../types.ts'
import type { ContentFile, ManifestFile, SerializeBound } from './model.ts'

/** Spec Appendix D for the types the tests partition by; a test double, not the product's. */
export const serializeBoundForTests: SerializeBound = (type: PrimitiveType, value: IcebergValue): Uint8Array => {
  const buffer = Buffer.alloc(8)
  switch (type) {
    case 'boolean':
      return Uint8Array.of(value ? 1 : 0)
    case 'int':
    case 'date':
      buffer.writeInt32LE(value as number)
      return new Uint8Array(buffer.subarray(0, 4))
    case 'float':
      buffer.writeFloatLE(value as number)
      return new Uint8Array(buffer.subarray(0, 4))
    case 'double':
      buffer.writeDoubleLE(value as number)
      return new Uint8Array(buffer)
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      buffer.writeBigInt64LE(value as bigint)
      return new Uint8Array(buffer)
    case 'string':
      return new TextEncoder().encode(value as string)
  }
  if (type.startsWith('decimal')) {
    // Minimum two's-complement bytes, big-endian.
    let unscaled = value as bigint
    const bytes: number[] = []
    do {
      bytes.unshift(Number(BigInt.asUintN(8, unscaled)))
      unscaled >>= 8n
    } while (!(unscaled === 0n && (bytes[0] as number) < 0x80) && !(unscaled === -1n && (bytes[0] as number) >= 0x80))
    return Uint8Array.from(bytes)
  }
  return value as Uint8Array
}

export const tableSchema: Schema = {
  type: 'struct',
  'schema-id': 3,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'category', required: false, type: 'string' },
    { id: 4, name: 'shard', required: false, type: 'int' },
    { id: 5, name: 'amount', required: false, type: 'decimal(10,2)' },
    { id: 6, name: 'device', required: false, type: 'uuid' },
    { id: 7, name: 'flag', required: false, type: 'boolean' },
    { id: 8, name: 'payload', required: false, type: 'binary' },
    { id: 9, name: 'score', required: false, type: 'double' },
    { id: 10, name: 'code', required: false, type: 'fixed[4]' },
    {
      id: 11,
      name: 'meta',
      required: false,
      type: { type: 'struct', fields: [{ id: 12, name: 'region', required: false, type: 'string' }] },
    },
  ],
}

/** Every transform result type Floe may meet, including a name Avro cannot spell. */
export const wideSpec: PartitionSpec = {
  'spec-id': 2,
  fields: [
    { 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' },
    { 'source-id': 2, 'field-id': 1001, name: 'ts_hour', transform: 'hour' },
    { 'source-id': 3, 'field-id': 1002, name: 'category', transform: 'identity' },
    { 'source-id': 1, 'field-id': 1003, name: 'id_bucket', transform: 'bucket[16]' },
    { 'source-id': 1, 'field-id': 1004, name: 'id', transform: 'identity' },
    { 'source-id': 5, 'field-id': 1005, name: 'amount', transform: 'identity' },
    { 'source-id': 6, 'field-id': 1006, name: 'device', transform: 'identity' },
    { 'source-id': 7, 'field-id': 1007, name: 'flag', transform: 'identity' },
    { 'source-id': 8, 'field-id': 1008, name: 'payload_trunc', transform: 'truncate[2]' },
    { 'source-id': 9, 'field-id': 1009, name: 'score', transform: 'identity' },
    { 'source-id': 10, 'field-id': 1010, name: 'code', transform: 'identity' },
    { 'source-id': 12, 'field-id': 1011, name: 'meta.region', transform: 'identity' },
    { 'source-id': 2, 'field-id': 1012, name: 'ts', transform: 'identity' },
  ],
}

/** One value for every field of wideSpec, each at an edge of its type. */
export const widePartition: StructValue = {
  ts_day: 19_723,
  ts_hour: 473_352,
  category: 'ünïcode ✓',
  id_bucket: 7,
  id: -9_223_372_036_854_775_808n,
  amount: -12_345n,
  device: Uint8Array.from(Buffer.from('123e4567e89b12d3a456426614174000', 'hex')),
  flag: true,
  payload_trunc: Uint8Array.of(0xff, 0x00),
  score: 2.5,
  code: Uint8Array.of(1, 2, 3, 4),
  'meta.region': 'eu-west',
  ts: 1_704_067_200_000_000n,
}

export const daySpec: PartitionSpec = {
  'spec-id': 0,
  fields: [
    { 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' },
    { 'source-id': 3, 'field-id': 1002, name: 'category', transform: 'identity' },
  ],
}

export const bigSnapshotId = 3051729675574597004n

export function dataFile(n: number, partition: ContentFile['partition'], specId = 0): ContentFile {
  return {
    filePath: `file:///warehouse/db/t/data/${n}.parquet`,
    fileFormat: 'PARQUET',
    specId,
    partition,
    recordCount: BigInt(100 + n),
    fileSizeInBytes: BigInt(4096 + n),
  }
}

/** A manifest_file record for planning tests; only the fields planning looks at matter. */
/**
 * A data file with every statistics map filled and a sort order: what Floe writes, so the
 * readers under test see each field. Split offsets are the caller's (they must fit its file size).
 */
export function fullStatisticsFile(n: number, partition: ContentFile['partition'], specId = 0): ContentFile {
  return {
    ...dataFile(n, partition, specId),
    columnSizes: new Map([
      [1, 123n],
      [2, 9_007_199_254_740_993n],
    ]),
    valueCounts: new Map([[1, 10n]]),
    nullValueCounts: new Map([[2, 0n]]),
    nanValueCounts: new Map([[9, 1n]]),
    lowerBounds: new Map([[1, Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0)]]),
    upperBounds: new Map([[3, new TextEncoder().encode('zz')]]),
    sortOrderId: 0,
  }
}

export function listed(name: string, length: number, extra: Partial<ManifestFile> = {}): ManifestFile {
  return {
    manifestPath: name,
    manifestLength: BigInt(length),
    partitionSpecId: 0,
    content: 'data',
    sequenceNumber: 1n,
    minSequenceNumber: 1n,
    addedSnapshotId: 1n,
    addedFilesCount: 1,
    existingFilesCount: 0,
    deletedFilesCount: 0,
    addedRowsCount: 1n,
    existingRowsCount: 0n,
    deletedRowsCount: 0n,
    partitions: [],
    keyMetadata: null,
    ...extra,
  }
}
