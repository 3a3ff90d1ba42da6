// MurmurHash3, x86 32-bit variant, the hash behind Iceberg's bucket transform (spec, Appendix B).
// Written out rather than taken from npm: the popular packages hash JS strings (UTF-16 units or
// their own encoding) rather than bytes, or return unsigned results; the algorithm is short and the
// spec's test vectors pin it. The int and long forms hash their little-endian bytes without
// materializing them, so bucketing an int or a timestamp allocates nothing.

const C1 = 0xcc9e2d51
const C2 = 0x1b873593

function mixKey(k: number): number {
  k = Math.imul(k, C1)
  k = (k << 15) | (k >>> 17)
  return Math.imul(k, C2)
}

function mixHash(h: number, k: number): number {
  h ^= mixKey(k)
  h = (h << 13) | (h >>> 19)
  return (Math.imul(h, 5) + 0xe6546b64) | 0
}

function finalize(h: number, length: number): number {
  h ^= length
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h | 0
}

/** murmur3_x86_32 of the first `length` bytes (default all), as a signed 32-bit integer. */
export function murmur3Hash32(bytes: Uint8Array, seed = 0, length = bytes.length): number {
  let h = seed | 0
  const blocks = length & ~3
  for (let i = 0; i < blocks; i += 4) {
    h = mixHash(h, bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24))
  }
  const tail = length & 3
  if (tail > 0) {
    let k = bytes[blocks]!
    if (tail > 1) k |= bytes[blocks + 1]! << 8
    if (tail > 2) k |= bytes[blocks + 2]! << 16
    h ^= mixKey(k)
  }
  return finalize(h, length)
}

/** The hash of an 8-byte little-endian long given as its low and high 32 bits (the spec's hashLong). */
function hashLongParts(low: number, high: number): number {
  return finalize(mixHash(mixHash(0, low | 0), high | 0), 8)
}

/**
 * The spec's hashInt, for int, date (and boolean, were it bucketable): hashLong of the value widened
 * to a long, so int 34 and long 34 share a bucket (2017239379), and 2017-11-16 hashes to -653330422.
 * It is not a 4-byte hash, whatever the name suggests; the spec's test vectors settle it.
 */
export function hashInt(value: number): number {
  return hashLongParts(value, value < 0 ? -1 : 0)
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** hashLong of a 64-bit bigint. */
export function hashLong(value: bigint): number {
  if (value <= SAFE && value >= -SAFE) {
    // Exact in float: ToInt32 takes the low 32 bits, and dividing by 2^32 is exact.
    const n = Number(value)
    return hashLongParts(n | 0, Math.floor(n / 4294967296) | 0)
  }
  return hashLongParts(Number(BigInt.asIntN(32, value)), Number(BigInt.asIntN(32, value >> 32n)))
}
