// LZ4_RAW page compression: Parquet's LZ4_RAW is the bare LZ4 block format (no frame, no size
// prefix). lz4-napi (lz4_flex, prebuilt N-API binaries from the npm registry) compresses blocks
// with a 4-byte little-endian size in front, which is dropped here. lz4js, the pure-JS option,
// was tried first: its blocks start matches closer to the block end than the format allows, and
// pyarrow refused them as corrupt.
import { compressSync, uncompressSync } from 'lz4-napi'

const SIZE_PREFIX = 4

export function lz4RawCompress(input: Uint8Array): Uint8Array {
  const prefixed = compressSync(Buffer.from(input.buffer, input.byteOffset, input.byteLength))
  return prefixed.subarray(SIZE_PREFIX)
}

/** The reverse: lz4-napi wants the size in front, which Parquet keeps in the page header instead. */
export function lz4RawDecompress(input: Uint8Array, outputLength: number): Uint8Array {
  const prefixed = Buffer.alloc(SIZE_PREFIX + input.byteLength)
  prefixed.writeUInt32LE(outputLength, 0)
  prefixed.set(input, SIZE_PREFIX)
  return uncompressSync(prefixed)
}
