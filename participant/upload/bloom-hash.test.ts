import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../shared/errors.ts'
import type { IcebergValue, PrimitiveType } from '../../shared/iceberg/index.ts'
import { bloomHash, plainEncoded, xxhash64 } from './bloom-hash.ts'

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

describe('xxHash64', () => {
  // The reference implementation's sanity buffer (xxhsum's BMK_sanityCheck): byte i is the top
  // byte of PRIME32 * PRIME64^i, and the expected values are the ones xxhsum checks itself with.
  const sanityBuffer = new Uint8Array(256)
  let generator = 2654435761n
  for (let i = 0; i < sanityBuffer.length; i++) {
    sanityBuffer[i] = Number(generator >> 56n)
    generator = (generator * 11400714785074694797n) & 0xffffffffffffffffn
  }
  const prime32 = 2654435761n
  const sanity = [
    { length: 0, seed: 0n, hash: 0xef46db3751d8e999n },
    { length: 1, seed: 0n, hash: 0xe934a84adb052768n },
    { length: 1, seed: prime32, hash: 0x5014607643a9b4c3n },
    { length: 14, seed: 0n, hash: 0x8282dcc4994e35c8n },
    { length: 14, seed: prime32, hash: 0xc3bd6bf63deb6df0n },
    { length: 222, seed: 0n, hash: 0xb641ae8cb691c174n },
    { length: 222, seed: prime32, hash: 0x20cb8ab7ae10c14an },
  ]
  for (const { length, seed, hash } of sanity) {
    test(`hashes ${length} bytes of the sanity buffer with seed ${seed} as xxhsum does`, () => {
      assert.equal(xxhash64(sanityBuffer.subarray(0, length), seed), hash)
    })
  }

  const texts = [
    { text: 'a', hash: 0xd24ec4f1a98c6e5bn },
    { text: 'abc', hash: 0x44bc2cf5ad770999n },
    { text: 'Nobody inspects the spammish repetition', hash: 0xfbcea83c8a378bf1n },
  ]
  for (const { text, hash } of texts) {
    test(`hashes "${text}" to ${hash.toString(16)}`, () => {
      assert.equal(xxhash64(new TextEncoder().encode(text)), hash)
    })
  }
})

describe('the PLAIN bytes a bloom filter hashes', () => {
  const cases: { type: PrimitiveType; value: IcebergValue; bytes: string }[] = [
    { type: 'boolean', value: true, bytes: '01' },
    { type: 'int', value: -2, bytes: 'feffffff' },
    { type: 'date', value: 20_000, bytes: '204e0000' },
    { type: 'long', value: 1n, bytes: '0100000000000000' },
    { type: 'long', value: -1n, bytes: 'ffffffffffffffff' },
    { type: 'timestamptz', value: 1_700_000_000_000_000n, bytes: '00401e18240a0600' },
    { type: 'time', value: 1_000_000n, bytes: '40420f0000000000' },
    { type: 'float', value: 1.5, bytes: '0000c03f' },
    { type: 'double', value: 1.5, bytes: '000000000000f83f' },
    { type: 'string', value: 'héllo', bytes: '68c3a96c6c6f' },
    { type: 'binary', value: Uint8Array.of(1, 2), bytes: '0102' },
    { type: 'uuid', value: new Uint8Array(16).fill(0xab), bytes: 'ab'.repeat(16) },
    { type: 'fixed[3]', value: Uint8Array.of(9, 8, 7), bytes: '090807' },
    { type: 'decimal(9,2)', value: 301n, bytes: '2d010000' },
    { type: 'decimal(18,2)', value: -301n, bytes: 'd3feffffffffffff' },
    // 13 bytes hold every 30-digit unscaled value; big-endian two's complement
    { type: 'decimal(30,2)', value: -2n, bytes: `${'ff'.repeat(12)}fe` },
  ]
  for (const { type, value, bytes } of cases) {
    test(`encodes ${String(value)} of type ${type} as ${bytes}`, () => {
      assert.equal(hex(plainEncoded(value, type)), bytes)
      assert.equal(bloomHash(value, type), xxhash64(Buffer.from(bytes, 'hex')))
    })
  }

  const wrong: { type: PrimitiveType; value: IcebergValue }[] = [
    { type: 'long', value: 1 },
    { type: 'int', value: 1.5 },
    { type: 'string', value: Uint8Array.of(1) },
    { type: 'uuid', value: new Uint8Array(15) },
    { type: 'decimal(9,2)', value: 3 },
  ]
  for (const { type, value } of wrong) {
    test(`refuses ${String(value)} as a value of type ${type}`, () => {
      assert.throws(
        () => plainEncoded(value, type),
        (e) => isFloeError(e, 'CONVERSION_FAILED'),
      )
    })
  }
})
