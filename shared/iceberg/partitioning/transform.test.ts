import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../errors.ts'
import type { IcebergValue, PrimitiveType } from '../types.ts'
import { compileConverter } from '../values/index.ts'
import {
  applyTransform,
  bucketHash,
  canTransform,
  compileTransform,
  murmur3Hash32,
  parseTransform,
  type Transform,
  transformResultType,
  transformToString,
} from './index.ts'

/** A value as the record path makes it: through the JSON converter. */
function value(type: PrimitiveType, json: unknown): IcebergValue {
  return compileConverter(type, 'test')(json)
}

const hex = (text: string) => Uint8Array.from(Buffer.from(text.replaceAll(' ', ''), 'hex'))

describe('the bucket hash', () => {
  // Every test value of the spec's Appendix B.
  const specVectors: [PrimitiveType, IcebergValue, number][] = [
    ['int', 34, 2017239379],
    ['long', 34n, 2017239379],
    ['decimal(4,2)', value('decimal(4,2)', '14.20'), -500754589],
    ['date', value('date', '2017-11-16'), -653330422],
    ['time', value('time', '22:31:08'), -662762989],
    ['timestamp', value('timestamp', '2017-11-16T22:31:08'), -2047944441],
    ['timestamp', value('timestamp', '2017-11-16T22:31:08.000001'), -1207196810],
    ['timestamptz', value('timestamptz', '2017-11-16T14:31:08-08:00'), -2047944441],
    ['timestamptz', value('timestamptz', '2017-11-16T14:31:08.000001-08:00'), -1207196810],
    ['string', 'iceberg', 1210000089],
    ['string', '34', -427558391],
    ['uuid', value('uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7'), 1488055340],
    ['fixed[4]', hex('00 01 02 03'), -188683207],
    ['binary', hex('00 01 02 03'), -188683207],
  ]
  for (const [type, input, expected] of specVectors) {
    test(`hashes ${type} ${typeof input === 'bigint' ? `${input}n` : String(input)} to the spec's ${expected}`, () => {
      assert.equal(bucketHash(type, input), expected)
    })
  }

  test('encodes the spec uuid as the big-endian bytes its note lists', () => {
    assert.deepEqual(
      value('uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7'),
      hex('F7 9C 3E 09 67 7C 4B BD A4 79 3F 34 9C B7 85 E7'),
    )
  })

  test('gives an int and the same long one hash, also beyond 2^53 and for negatives', () => {
    for (const n of [0, 1, -1, 2147483647, -2147483648, 123456789])
      assert.equal(bucketHash('int', n), bucketHash('long', BigInt(n)))
    // hashLong's float fast path and BigInt path agree at the boundary.
    const edge = 2n ** 53n
    const bytes = (v: bigint) => {
      const b = new Uint8Array(8)
      new DataView(b.buffer).setBigInt64(0, v, true)
      return b
    }
    for (const v of [edge - 1n, edge, edge + 1n, -edge, -(2n ** 63n), 2n ** 63n - 1n]) {
      assert.equal(bucketHash('long', v), murmur3Hash32(bytes(v)), String(v))
    }
  })

  test('matches murmur3 reference vectors for every tail length', () => {
    // Published MurmurHash3_x86_32 vectors (seed 0 unless given), as signed ints.
    const vectors: [string, number, number][] = [
      ['', 0, 0],
      ['', 1, 0x514e28b7],
      ['21', 0, 0x72661cf4],
      ['2143', 0, 0xa0f7b07a],
      ['214365', 0, 0x7e4a8634],
      ['21436587', 0, 0xf55b516b],
      ['21436587', 0x5082edee, 0x2362f9de],
    ]
    for (const [bytes, seed, expected] of vectors) assert.equal(murmur3Hash32(hex(bytes), seed), expected | 0, bytes)
  })

  test('hashes a decimal by its minimal two-s complement bytes, -128 as the one byte 80', () => {
    assert.equal(bucketHash('decimal(3,0)', -128n), murmur3Hash32(hex('80')))
    assert.equal(bucketHash('decimal(3,0)', 128n), murmur3Hash32(hex('00 80')))
    assert.equal(bucketHash('decimal(3,0)', 0n), murmur3Hash32(hex('00')))
  })

  test('refuses types the spec does not bucket', () => {
    for (const type of ['boolean', 'float', 'double'] as const) {
      assert.throws(
        () => bucketHash(type, 1),
        (e) => isFloeError(e, 'CONFIG_INVALID'),
      )
    }
  })
})

describe('the transforms', () => {
  const cases: [string, PrimitiveType, IcebergValue, IcebergValue][] = [
    // The spec's truncate examples.
    ['truncate[10]', 'int', 1, 0],
    ['truncate[10]', 'int', -1, -10],
    ['truncate[10]', 'long', 1n, 0n],
    ['truncate[10]', 'long', -1n, -10n],
    ['truncate[50]', 'decimal(4,2)', value('decimal(4,2)', '10.65'), value('decimal(4,2)', '10.50')],
    ['truncate[3]', 'string', 'iceberg', 'ice'],
    ['truncate[4]', 'string', 'iceberg', 'iceb'],
    ['truncate[3]', 'binary', hex('01 02 03 04 05'), hex('01 02 03')],
    ['truncate[10]', 'int', 10, 10],
    ['truncate[10]', 'int', -10, -10],
    ['truncate[10]', 'int', -11, -20],
    ['truncate[50]', 'decimal(4,2)', value('decimal(4,2)', '-0.05'), value('decimal(4,2)', '-0.50')],
    // Strings truncate by code points, never splitting a surrogate pair.
    ['truncate[2]', 'string', 'a😀b', 'a😀'],
    ['truncate[1]', 'string', '测试', '测'],
    ['truncate[6]', 'string', '测试', '测试'],
    ['truncate[4]', 'binary', hex('01 02'), hex('01 02')],
    // (hash & MAX_INT) % N; both checked with pyiceberg 0.11.
    ['bucket[100]', 'long', 34n, 79],
    ['bucket[128]', 'string', 'abcd', 106],
    // Temporal transforms; pre-1970 values take the floor.
    ['year', 'date', value('date', '2017-11-16'), 47],
    ['month', 'date', value('date', '2017-11-16'), 574],
    ['day', 'date', value('date', '2017-11-16'), 17486],
    ['year', 'timestamp', value('timestamp', '2017-11-16T22:31:08'), 47],
    ['month', 'timestamp', value('timestamp', '2017-11-16T22:31:08'), 574],
    ['day', 'timestamp', value('timestamp', '2017-11-16T22:31:08'), 17486],
    ['hour', 'timestamp', value('timestamp', '2017-11-16T22:31:08'), 419686],
    ['hour', 'timestamptz', value('timestamptz', '2017-11-16T14:31:08-08:00'), 419686],
    ['year', 'date', value('date', '1969-12-31'), -1],
    ['month', 'date', value('date', '1969-12-31'), -1],
    ['day', 'date', value('date', '1969-12-31'), -1],
    ['year', 'date', value('date', '1969-01-01'), -1],
    ['year', 'date', value('date', '1968-12-31'), -2],
    ['month', 'date', value('date', '1969-01-01'), -12],
    ['year', 'timestamp', -1n, -1],
    ['month', 'timestamp', -1n, -1],
    ['day', 'timestamp', -1n, -1],
    ['hour', 'timestamp', -1n, -1],
    ['day', 'timestamp', -86_400_000_000n, -1],
    ['day', 'timestamp', -86_400_000_001n, -2],
    ['hour', 'timestamp', -3_600_000_000n, -1],
    ['hour', 'timestamp', -3_600_000_001n, -2],
    ['year', 'timestamptz', value('timestamptz', '1900-01-01T00:00:00Z'), -70],
    ['month', 'timestamptz', value('timestamptz', '1900-03-01T00:00:00Z'), -838],
    ['day', 'timestamptz', value('timestamptz', '0001-01-01T00:00:00Z'), -719162],
    ['year', 'timestamp', value('timestamp', '9999-12-31T23:59:59.999999'), 8029],
    ['hour', 'timestamp', value('timestamp', '9999-12-31T23:59:59.999999'), 70389527],
    ['identity', 'string', 'x', 'x'],
    ['void', 'long', 5n, null],
  ]
  for (const [transform, type, input, expected] of cases) {
    test(`${transform} of ${type} ${input instanceof Uint8Array ? Buffer.from(input).toString('hex') : String(input)} is ${String(expected)}`, () => {
      assert.deepEqual(applyTransform(parseTransform(transform), type, input), expected)
    })
  }

  test('turns null into null for every transform', () => {
    for (const [transform, type] of [
      ['identity', 'int'],
      ['year', 'date'],
      ['month', 'timestamp'],
      ['day', 'timestamptz'],
      ['hour', 'timestamp'],
      ['bucket[4]', 'string'],
      ['truncate[2]', 'binary'],
      ['void', 'uuid'],
    ] as const) {
      assert.equal(applyTransform(parseTransform(transform), type, null), null, transform)
    }
  })

  test('wraps truncate near the bottom of the int and long range as Java arithmetic does', () => {
    // Java's writers compute in int/long; a table written by both must get the same partition.
    assert.equal(applyTransform(parseTransform('truncate[10]'), 'int', -2147483648), 2147483646)
    assert.equal(applyTransform(parseTransform('truncate[10]'), 'long', -(2n ** 63n)), 2n ** 63n - 2n)
  })

  test('returns the source object unchanged for identity, and a copy for a truncated binary', () => {
    const bytes = hex('01 02 03')
    assert.equal(compileTransform({ kind: 'identity' }, 'binary')(bytes), bytes)
    assert.notEqual(compileTransform({ kind: 'truncate', width: 8 }, 'binary')(bytes), bytes)
  })
})

describe('transform strings and result types', () => {
  const parsed: [string, Transform][] = [
    ['identity', { kind: 'identity' }],
    ['year', { kind: 'year' }],
    ['month', { kind: 'month' }],
    ['day', { kind: 'day' }],
    ['hour', { kind: 'hour' }],
    ['void', { kind: 'void' }],
    ['bucket[16]', { kind: 'bucket', buckets: 16 }],
    ['truncate[20]', { kind: 'truncate', width: 20 }],
  ]
  for (const [text, transform] of parsed) {
    test(`parses ${text} and prints it back`, () => {
      assert.deepEqual(parseTransform(text), transform)
      assert.equal(transformToString(transform), text)
    })
  }

  for (const text of [
    'days',
    'bucket[0]',
    'bucket[-1]',
    'bucket[x]',
    'truncate',
    'bucket[2147483648]',
    'Identity',
    '',
  ]) {
    test(`refuses the transform string ${JSON.stringify(text)} as invalid configuration`, () => {
      assert.throws(
        () => parseTransform(text),
        (e) => isFloeError(e, 'CONFIG_INVALID'),
      )
    })
  }

  const resultTypes: [string, PrimitiveType, PrimitiveType][] = [
    ['identity', 'decimal(9,2)', 'decimal(9,2)'],
    ['bucket[8]', 'string', 'int'],
    ['truncate[4]', 'string', 'string'],
    ['truncate[4]', 'decimal(9,2)', 'decimal(9,2)'],
    ['year', 'timestamptz', 'int'],
    ['month', 'date', 'int'],
    ['day', 'timestamp', 'date'],
    ['day', 'date', 'date'],
    ['hour', 'timestamptz', 'int'],
    ['void', 'long', 'long'],
  ]
  for (const [text, source, result] of resultTypes) {
    test(`gives ${text} of ${source} the result type ${result}`, () => {
      assert.equal(transformResultType(parseTransform(text), source), result)
    })
  }

  const refused: [string, PrimitiveType][] = [
    ['bucket[4]', 'boolean'],
    ['bucket[4]', 'double'],
    ['truncate[4]', 'fixed[8]'],
    ['truncate[4]', 'uuid'],
    ['truncate[4]', 'date'],
    ['hour', 'date'],
    ['year', 'time'],
    ['day', 'long'],
  ]
  for (const [text, source] of refused) {
    test(`refuses ${text} on ${source}`, () => {
      assert.equal(canTransform(parseTransform(text), source), false)
      assert.throws(
        () => compileTransform(parseTransform(text), source),
        (e) => isFloeError(e, 'CONFIG_INVALID'),
      )
      assert.throws(
        () => transformResultType(parseTransform(text), source),
        (e) => isFloeError(e, 'CONFIG_INVALID'),
      )
    })
  }
})
