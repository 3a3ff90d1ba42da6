// The 32-bit hash of a value by type, as the spec's Appendix B defines it for the bucket transform.
import type { IcebergValue, PrimitiveType } from '../types.ts'
import { decimalParams, fixedLength } from '../types.ts'
import { decimalToBytes } from '../values/index.ts'
import { hashInt, hashLong, murmur3Hash32 } from './murmur3.ts'

export type ValueHash = (value: IcebergValue) => number

const utf8 = new TextEncoder()
// Strings are encoded into one growing scratch buffer, so hashing a string allocates nothing.
let scratch = new Uint8Array(256)

function hashString(value: string): number {
  // UTF-8 needs at most 3 bytes per UTF-16 unit.
  if (value.length * 3 > scratch.length) scratch = new Uint8Array(Math.max(value.length * 3, scratch.length * 2))
  const { written } = utf8.encodeInto(value, scratch)
  return murmur3Hash32(scratch, 0, written)
}

/**
 * The hash function of a bucketable type: int, date and long as 8-byte little-endian longs (so an
 * int promoted to long keeps its bucket), time and timestamps as longs of
 * microseconds, decimal as the minimum two's-complement big-endian bytes of the unscaled value,
 * string as UTF-8, uuid as its 16 big-endian bytes, binary and fixed as they are.
 * undefined for a type the bucket transform does not take.
 */
export function compileHash(type: PrimitiveType): ValueHash | undefined {
  switch (type) {
    case 'int':
    case 'date':
      return (value) => hashInt(value as number)
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return (value) => hashLong(value as bigint)
    case 'string':
      return (value) => hashString(value as string)
    case 'uuid':
    case 'binary':
      return (value) => murmur3Hash32(value as Uint8Array)
    case 'boolean':
    case 'float':
    case 'double':
      return undefined
  }
  if (fixedLength(type) !== undefined) return (value) => murmur3Hash32(value as Uint8Array)
  if (decimalParams(type)) return (value) => murmur3Hash32(decimalToBytes(value as bigint))
  return undefined
}
