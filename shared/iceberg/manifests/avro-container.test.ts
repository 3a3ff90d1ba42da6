import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import avro from 'avsc'
import { isFloeError } from '../../errors.ts'
import {
  type AvroCodec,
  avroTypeOf,
  bigintToVarint,
  readContainer,
  varintToBigint,
  writeContainer,
} from './avro-container.ts'

const schema = {
  type: 'record',
  name: 'row',
  fields: [
    { name: 'id', type: 'long', 'field-id': 1 },
    { name: 'at', type: ['null', { type: 'long', logicalType: 'timestamp-micros' }], default: null, 'field-id': 2 },
    { name: 'text', type: 'string', 'field-id': 3 },
  ],
}
const type = avroTypeOf(schema)
const rows = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: 9_223_372_036_854_775_807n - BigInt(i),
    at: i % 3 === 0 ? null : -BigInt(i),
    text: 'x'.repeat(i % 50),
  }))

describe('Avro object container', () => {
  for (const codec of ['deflate', 'null'] as AvroCodec[]) {
    test(`records spanning many blocks read back exactly with the ${codec} codec`, () => {
      const written = rows(20_000)
      const bytes = writeContainer({ schema, type, metadata: { k: 'v' }, codec }, written)
      const read = readContainer(bytes)
      assert.equal(read.records.length, written.length)
      assert.deepEqual(
        read.records.map((r) => ({ ...(r as object) })),
        written,
      )
      assert.deepEqual(read.schema, schema)
      assert.equal(read.metadata.get('k'), 'v')
      assert.equal(read.metadata.get('avro.codec'), codec)
    })
  }

  test('a record larger than a block is encoded whole', () => {
    const big = [{ id: 1n, at: null, text: 'y'.repeat(300_000) }]
    const read = readContainer(writeContainer({ schema, type, metadata: {}, codec: 'null' }, big))
    assert.equal((read.records[0] as { text: string }).text.length, 300_000)
  })

  test('the same sync marker makes the same bytes', () => {
    const syncMarker = new Uint8Array(16).fill(7)
    const one = writeContainer({ schema, type, metadata: {}, codec: 'deflate', syncMarker }, rows(10))
    const two = writeContainer({ schema, type, metadata: {}, codec: 'deflate', syncMarker }, rows(10))
    assert.deepEqual(one, two)
  })

  const corruptions: [string, (bytes: Uint8Array) => Uint8Array][] = [
    ['a wrong magic', (b) => Uint8Array.from([0x4f, 0x62, 0x6a, 0x02, ...b.subarray(4)])],
    ['a truncated block', (b) => b.subarray(0, b.length - 20)],
    [
      'a damaged sync marker',
      (b) => {
        const copy = Uint8Array.from(b)
        copy[copy.length - 1] = (copy[copy.length - 1] as number) ^ 0xff
        return copy
      },
    ],
  ]
  for (const [what, corrupt] of corruptions) {
    test(`a file with ${what} is refused`, () => {
      const bytes = writeContainer({ schema, type, metadata: {}, codec: 'null' }, rows(5))
      assert.throws(
        () => readContainer(corrupt(bytes)),
        (e) => isFloeError(e, 'INVARIANT_BROKEN'),
      )
    })
  }

  test('a field name Avro cannot spell, as Java writes unicode partition names, still decodes', () => {
    const javaStyle = {
      type: 'record',
      name: 'r102',
      fields: [
        { name: 'ok', type: 'int', 'field-id': 1000 },
        { name: 'région', type: ['null', 'string'], default: null, 'field-id': 1001 },
      ],
    }
    const written = writeContainer(
      {
        schema: javaStyle,
        type: avroTypeOf({ ...javaStyle, fields: [javaStyle.fields[0], { ...javaStyle.fields[1], name: 'x' }] }),
        metadata: {},
        codec: 'null',
      },
      [{ ok: 1, x: 'eu' }],
    )
    const read = readContainer(written)
    assert.deepEqual({ ...(read.records[0] as object) }, { ok: 1, _field1: 'eu' })
    assert.deepEqual((read.schema as typeof javaStyle).fields[1], {
      name: '_field1',
      type: ['null', 'string'],
      default: null,
      'field-id': 1001,
      'iceberg-field-name': 'région',
    })
  })

  test('BigInt longs encode as avsc encodes safe integers and round trip over the 64-bit range', () => {
    const plainLong = avro.Type.forSchema('long')
    const values = [0n, 1n, -1n, 63n, -64n, 64n, 2n ** 48n, -(2n ** 48n) - 1n, 2n ** 52n - 1n, -(2n ** 52n) + 1n]
    values.push(2n ** 52n, -(2n ** 52n), 2n ** 53n + 1n, 3051729675574597004n, 2n ** 63n - 1n, -(2n ** 63n))
    for (const value of values) {
      const bytes = Buffer.from(bigintToVarint(value))
      assert.equal(varintToBigint(bytes), value)
      if (value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) {
        assert.deepEqual(bytes, plainLong.toBuffer(Number(value)), String(value))
      }
    }
    assert.equal(bigintToVarint(-(2n ** 63n)).length, 10)
  })
})
