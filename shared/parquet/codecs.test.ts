import assert from 'node:assert/strict'
import { test } from 'node:test'
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from 'node:zlib'
import { isFloeError } from '../errors.ts'
import { type DataFileCodec, pageCompressionFor } from './codecs.ts'

const page = new TextEncoder().encode('event,event,event,purchase,'.repeat(1000))

test('zstd, gzip and brotli pages round-trip through node:zlib at every accepted level', () => {
  const cases: [DataFileCodec, number | undefined, (bytes: Uint8Array) => Uint8Array][] = [
    ['zstd', undefined, zstdDecompressSync],
    ['zstd', 1, zstdDecompressSync],
    ['zstd', 22, zstdDecompressSync],
    ['gzip', undefined, gunzipSync],
    ['gzip', 0, gunzipSync],
    ['brotli', 11, brotliDecompressSync],
  ]
  for (const [codec, level, decompress] of cases) {
    const { codec: parquetCodec, compressors } = pageCompressionFor(codec, level)
    const compress = compressors[parquetCodec]
    assert.ok(compress, codec)
    assert.deepEqual(new Uint8Array(decompress(compress(page))), page, `${codec} ${level}`)
  }
})

test('a higher zstd level is honoured', () => {
  const size = (level: number) => {
    const { compressors } = pageCompressionFor('zstd', level)
    return compressors.ZSTD!(page).byteLength
  }
  assert.ok(size(19) <= size(1))
})

test('snappy and uncompressed use what hyparquet-writer has built in', () => {
  assert.deepEqual(pageCompressionFor('snappy'), { codec: 'SNAPPY', compressors: {} })
  assert.deepEqual(pageCompressionFor('uncompressed'), { codec: 'UNCOMPRESSED', compressors: {} })
})

test('lz4 compresses pages into bare LZ4 blocks that decompress to the input', async () => {
  const { uncompressSync } = await import('lz4-napi')
  const { compressors, codec } = pageCompressionFor('lz4')
  assert.equal(codec, 'LZ4_RAW')
  const samples = [
    new Uint8Array(0),
    Uint8Array.of(7),
    new TextEncoder().encode('no repeats here!'),
    new TextEncoder().encode('abcabcabcabcabcabcabcabcabcabcabcabcabcabc'.repeat(50)),
    Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 251),
  ]
  for (const input of samples) {
    const block = compressors.LZ4_RAW?.(input)
    assert.ok(block)
    // lz4-napi reads a block behind its little-endian size: give it the size Parquet keeps apart
    const size = Buffer.alloc(4)
    size.writeUInt32LE(input.length)
    assert.deepEqual(new Uint8Array(uncompressSync(Buffer.concat([size, block]))), input)
  }
})

test('unsupported codecs and levels are configuration errors', () => {
  const cases: [string, number | undefined][] = [
    ['lz4', 3],
    ['lzo', undefined],
    ['zstd', 23],
    ['zstd', 1.5],
    ['gzip', -1],
    ['brotli', 12],
    ['snappy', 3],
    ['uncompressed', 0],
  ]
  for (const [codec, level] of cases) {
    assert.throws(
      () => pageCompressionFor(codec as DataFileCodec, level),
      (error) => isFloeError(error, 'CONFIG_INVALID'),
      `${codec} ${level}`,
    )
  }
})
