// The hash a Parquet split-block bloom filter holds for a value: xxHash64 (seed 0) of the value's
// PLAIN encoding as its physical Parquet type, without the 4-byte length prefix of a BYTE_ARRAY
// (parquet-format BloomFilter.md). The physical type of each Iceberg type is the one
// shared/parquet writes (Iceberg's own Parquet mapping), so a probe hashes what the writer hashed.
//
// xxHash64 comes from hyparquet (already a dependency, and the implementation the writer's filters
// were built with); bloom-hash.test.ts holds it to the reference implementation's test vectors,
// and bloom-sidecar.test.ts to filters written by Arrow C++ (pyarrow), an independent writer.
import { xxhash64 } from 'hyparquet/src/xxhash.js'
import { decimalParams, fixedLength, type IcebergValue, type PrimitiveType } from '../../shared/iceberg/index.ts'
import { FloeError } from '../../shared/index.ts'

const utf8 = new TextEncoder()

function littleEndian(size: 4 | 8, write: (view: DataView) => void): Uint8Array {
  const bytes = new Uint8Array(size)
  write(new DataView(bytes.buffer))
  return bytes
}

/** Two's complement, big-endian, in exactly `length` bytes: Parquet's FIXED_LEN_BYTE_ARRAY decimal. */
function bigEndianTwosComplement(value: bigint, length: number): Uint8Array {
  const bytes = new Uint8Array(length)
  let rest = BigInt.asUintN(length * 8, value)
  for (let k = length - 1; k >= 0; k--) {
    bytes[k] = Number(rest & 0xffn)
    rest >>= 8n
  }
  return bytes
}

/** The fewest bytes whose two's complement holds every unscaled value of the precision (Iceberg's TypeUtil). */
function decimalBytes(precision: number): number {
  const largest = 10n ** BigInt(precision) - 1n
  let bytes = 1
  while (largest > 2n ** BigInt(8 * bytes - 1) - 1n) bytes++
  return bytes
}

function mismatch(value: IcebergValue, type: PrimitiveType): FloeError {
  return new FloeError('CONVERSION_FAILED', `a ${typeof value} is not a value of Iceberg type ${type}`, {
    details: { type, valueType: typeof value },
  })
}

function int32(value: IcebergValue, type: PrimitiveType): Uint8Array {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw mismatch(value, type)
  return littleEndian(4, (view) => view.setInt32(0, value, true))
}

function int64(value: IcebergValue, type: PrimitiveType): Uint8Array {
  if (typeof value !== 'bigint') throw mismatch(value, type)
  return littleEndian(8, (view) => view.setBigInt64(0, BigInt.asIntN(64, value), true))
}

function bytesOf(value: IcebergValue, type: PrimitiveType, length?: number): Uint8Array {
  if (!(value instanceof Uint8Array) || (length !== undefined && value.byteLength !== length)) {
    throw mismatch(value, type)
  }
  return value
}

/** The PLAIN bytes Parquet's bloom filter hashes for a non-null value of an Iceberg primitive type. */
export function plainEncoded(value: IcebergValue, type: PrimitiveType): Uint8Array {
  switch (type) {
    case 'boolean':
      // hyparquet-writer hashes a boolean as one byte; Parquet's spec leaves booleans out.
      if (typeof value !== 'boolean') throw mismatch(value, type)
      return Uint8Array.of(value ? 1 : 0)
    case 'int':
    case 'date':
      return int32(value, type)
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return int64(value, type)
    case 'float':
      if (typeof value !== 'number') throw mismatch(value, type)
      return littleEndian(4, (view) => view.setFloat32(0, value, true))
    case 'double':
      if (typeof value !== 'number') throw mismatch(value, type)
      return littleEndian(8, (view) => view.setFloat64(0, value, true))
    case 'string':
      if (typeof value !== 'string') throw mismatch(value, type)
      return utf8.encode(value)
    case 'uuid':
      return bytesOf(value, type, 16)
    case 'binary':
      return bytesOf(value, type)
  }
  const decimal = decimalParams(type)
  if (decimal) {
    if (typeof value !== 'bigint') throw mismatch(value, type)
    if (decimal.precision <= 9) return int32(Number(value), type)
    if (decimal.precision <= 18) return int64(value, type)
    return bigEndianTwosComplement(value, decimalBytes(decimal.precision))
  }
  const length = fixedLength(type)
  if (length !== undefined) return bytesOf(value, type, length)
  throw new FloeError('CONFIG_INVALID', `no bloom-filter hash for Iceberg type ${type}`, { details: { type } })
}

/** xxHash64, seed 0, of the value's PLAIN encoding: the hash a Parquet SBBF stores. */
export function bloomHash(value: IcebergValue, type: PrimitiveType): bigint {
  return xxhash64(plainEncoded(value, type))
}

export { xxhash64 }
