import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { StructValue } from '../../shared/iceberg/index.ts'
import { isFloeError } from '../../shared/index.ts'
import { compileDecoder, type DlqReason, dlqReasons } from './index.ts'
import { datasetOf } from './test-support.ts'

const mapping = {
  event_id: 'id',
  ts: 'timestamp',
  sent: 'sent_ms',
  user_id: 'user.id',
  kind: 'type',
  amount: 'details.amount',
  price: 'details.price',
  ok: 'details.ok',
  tags: 'user.tags',
  address: 'user.address',
  counts: 'counts',
  tag_count: 'length(user.tags || `[]`)',
  first_tag: 'user.tags[0]',
  depth: 'a.b.c.d',
}
const schema = {
  event_id: 'string not null',
  ts: 'timestamptz',
  sent: 'timestamptz',
  user_id: 'long',
  kind: 'string',
  amount: 'double',
  price: 'decimal(38, 2)',
  ok: 'boolean',
  tags: 'list<string>',
  address: 'struct<city: string, zip: string>',
  counts: 'map<string, long>',
  tag_count: 'int',
  first_tag: 'string',
  depth: 'long',
}
const dataset = datasetOf(mapping, schema)
const decoder = compileDecoder(dataset, { maxRecordBytes: 1024 })

const bytes = (json: unknown) => Buffer.from(JSON.stringify(json))
const nulls = Object.fromEntries(Object.keys(schema).map((column) => [column, null]))

describe('decoding a valid event', () => {
  const cases: { name: string; event: Buffer; row: Partial<StructValue> }[] = [
    {
      name: 'an event with only the required column gives nulls elsewhere',
      event: bytes({ id: 'e1' }),
      row: { ...nulls, event_id: 'e1', tag_count: 0 },
    },
    {
      name: 'a full event maps every column to its Iceberg value',
      event: bytes({
        id: 'e2',
        timestamp: '2024-03-01T12:00:00.123456+01:00',
        sent_ms: 1709290800123,
        user: { id: 42, tags: ['a', 'b'], address: { city: 'Zürich', zip: '8001', extra: true } },
        type: 'click',
        details: { amount: 1.5, price: 19.99, ok: true },
        counts: { views: 3, clicks: '9007199254740993' },
        a: { b: { c: { d: -7 } } },
      }),
      row: {
        event_id: 'e2',
        ts: 1709290800123456n,
        sent: 1709290800123000n,
        user_id: 42n,
        kind: 'click',
        amount: 1.5,
        price: 1999n,
        ok: true,
        tags: ['a', 'b'],
        address: { city: 'Zürich', zip: '8001' },
        counts: new Map<string, bigint>([
          ['views', 3n],
          ['clicks', 9007199254740993n],
        ]),
        tag_count: 2,
        first_tag: 'a',
        depth: -7n,
      },
    },
    {
      name: 'a long beyond 2^53 sent as a string keeps every digit',
      event: bytes({ id: 'e3', user: { id: '-9223372036854775808' } }),
      row: { user_id: -9223372036854775808n },
    },
    {
      name: 'a decimal sent as a string keeps every digit',
      event: bytes({ id: 'e4', details: { price: '123456789012345678901234567890.12' } }),
      row: { price: 12345678901234567890123456789012n },
    },
    {
      name: 'a decimal of 15 significant digits sent as a number is exact',
      event: bytes({ id: 'e5', details: { price: 1234567890123.45 } }),
      row: { price: 123456789012345n },
    },
    {
      name: 'explicit nulls are nulls and an empty list is an empty list',
      event: bytes({ id: 'e6', user: { id: null, tags: [] }, details: null, counts: null }),
      row: { user_id: null, tags: [], amount: null, counts: null, tag_count: 0, first_tag: null },
    },
    {
      name: 'a path through a non-object gives null, as JMESPath does',
      event: bytes({ id: 'e7', user: 'not an object', a: { b: [1, 2] } }),
      row: { user_id: null, tags: null, depth: null },
    },
    {
      name: 'unicode text survives, astral characters included',
      event: bytes({ id: 'ünï-😀', type: '日本語' }),
      row: { event_id: 'ünï-😀', kind: '日本語' },
    },
    {
      name: 'a leading UTF-8 byte-order mark is skipped',
      event: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes({ id: 'bom' })]),
      row: { event_id: 'bom' },
    },
    {
      name: 'whitespace around the object is allowed',
      event: Buffer.from('  \n{"id": "ws", "details": {"ok": false}}\n  '),
      row: { event_id: 'ws', ok: false },
    },
    {
      name: 'brackets inside strings do not count toward the nesting depth',
      event: bytes({ id: `${'['.repeat(100)}"\\${'{'.repeat(100)}`, tags: '[[[[' }),
      row: { event_id: `${'['.repeat(100)}"\\${'{'.repeat(100)}` },
    },
    {
      name: 'nesting of exactly 64 levels is accepted',
      event: Buffer.from(`{"id":"deep","x":${'['.repeat(63)}${']'.repeat(63)}}`),
      row: { event_id: 'deep' },
    },
    {
      name: 'epoch and ISO timestamps meet at the same instant',
      event: bytes({ id: 'e8', timestamp: '1970-01-01T00:00:01Z', sent_ms: 1000 }),
      row: { ts: 1_000_000n, sent: 1_000_000n },
    },
  ]
  for (const { name, event, row } of cases) {
    test(name, () => {
      const decoded = decoder.decode(event)
      for (const [column, expected] of Object.entries(row)) assert.deepEqual(decoded[column], expected, column)
    })
  }

  test('every row has the schema columns, in schema order', () => {
    const row = decoder.decode(bytes({ id: 'x', zzz: 1, user: { id: 1 } }))
    assert.deepEqual(Object.keys(row), Object.keys(schema))
    assert.deepEqual(decoder.columns, Object.keys(schema))
    assert.equal(decoder.dataset, 'events')
  })

  test('a record of exactly maxRecordBytes is accepted', () => {
    const event = padTo({ id: 'fits' }, 1024)
    assert.equal(event.length, 1024)
    assert.equal(decoder.decode(event).event_id, 'fits')
  })
})

/** A JSON event padded with a `pad` string to exactly `size` bytes. */
function padTo(event: Record<string, unknown>, size: number): Buffer {
  const empty = Buffer.byteLength(JSON.stringify({ ...event, pad: '' }))
  return bytes({ ...event, pad: 'x'.repeat(size - empty) })
}

function reasonOf(decode: () => unknown): unknown {
  try {
    decode()
  } catch (error) {
    assert.ok(isFloeError(error, 'RECORD_MALFORMED'), String(error))
    return error.details.reason
  }
  return assert.fail('the record was accepted')
}

interface MalformedCase {
  name: string
  event: Buffer | undefined
  reason: DlqReason
  column?: string
  /** Text the message must contain (besides the column, which is always checked). */
  says?: RegExp
}

describe('refusing a malformed record', () => {
  const cases: MalformedCase[] = [
    { name: 'a tombstone (no value)', event: undefined, reason: 'empty' },
    { name: 'a value of zero bytes', event: Buffer.alloc(0), reason: 'empty' },
    { name: 'a record one byte over maxRecordBytes', event: padTo({ id: 'big' }, 1025), reason: 'too-large' },
    { name: 'a byte that is never UTF-8', event: Buffer.from('{"id":"\xff"}', 'latin1'), reason: 'invalid-utf8' },
    { name: 'an overlong UTF-8 encoding', event: Buffer.from([0x7b, 0xc0, 0xaf, 0x7d]), reason: 'invalid-utf8' },
    {
      name: 'a surrogate encoded in UTF-8',
      event: Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
      reason: 'invalid-utf8',
    },
    {
      name: 'a multi-byte character cut short',
      event: Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xe2, 0x82]), Buffer.from('"}')]),
      reason: 'invalid-utf8',
    },
    { name: 'truncated JSON', event: Buffer.from('{"id":"e1","user":{"id":4'), reason: 'not-json' },
    { name: 'JSON with trailing garbage', event: Buffer.from('{"id":"e1"} x'), reason: 'not-json' },
    { name: 'plain text', event: Buffer.from('hello'), reason: 'not-json' },
    { name: 'whitespace only', event: Buffer.from('  '), reason: 'not-json' },
    { name: 'single-quoted JSON', event: Buffer.from("{'id':'e1'}"), reason: 'not-json' },
    { name: 'a top-level array', event: bytes([{ id: 'e1' }]), reason: 'not-object', says: /array/ },
    { name: 'a top-level string', event: bytes('e1'), reason: 'not-object', says: /string/ },
    { name: 'a top-level null', event: Buffer.from('null'), reason: 'not-object', says: /null/ },
    {
      name: 'nesting of 65 levels',
      event: Buffer.from(`{"id":"deep","x":${'['.repeat(64)}${']'.repeat(64)}}`),
      reason: 'too-deep',
    },
    { name: 'nesting of 1,000 levels', event: Buffer.from(`${'['.repeat(1_000)}`), reason: 'too-deep' },
    {
      name: 'a missing field for a required column',
      event: bytes({ user: { id: 1 } }),
      reason: 'conversion-failed',
      column: 'event_id',
      says: /required/,
    },
    {
      name: 'a JSON null for a required column',
      event: bytes({ id: null }),
      reason: 'conversion-failed',
      column: 'event_id',
    },
    {
      name: 'an object where a string column is mapped',
      event: bytes({ id: 'e1', type: { name: 'click' } }),
      reason: 'conversion-failed',
      column: 'kind',
      says: /expected string, got object/,
    },
    {
      name: 'a string where a long column is mapped',
      event: bytes({ id: 'e1', user: { id: 'forty-two' } }),
      reason: 'conversion-failed',
      column: 'user_id',
      says: /expected long, got string "forty-two"/,
    },
    {
      name: 'a number where a boolean column is mapped',
      event: bytes({ id: 'e1', details: { ok: 1 } }),
      reason: 'conversion-failed',
      column: 'ok',
    },
    {
      name: 'a long beyond the 64-bit range sent as a number (12345678901234567890)',
      event: Buffer.from('{"id":"e1","user":{"id":12345678901234567890}}'),
      reason: 'conversion-failed',
      column: 'user_id',
      says: /expected long/,
    },
    {
      name: 'a long beyond 2^53 sent as a number, which JSON.parse would round',
      event: Buffer.from('{"id":"e1","user":{"id":9007199254740993}}'),
      reason: 'conversion-failed',
      column: 'user_id',
      says: /2\^53/,
    },
    {
      name: 'a decimal of 20 digits sent as a number, which JSON.parse would round',
      event: Buffer.from('{"id":"e1","details":{"price":12345678901234567890}}'),
      reason: 'conversion-failed',
      column: 'price',
      says: /significant digits/,
    },
    {
      name: 'a double that overflows to Infinity in JSON.parse',
      event: Buffer.from('{"id":"e1","details":{"amount":1e400}}'),
      reason: 'conversion-failed',
      column: 'amount',
      says: /out of range for a double/,
    },
    {
      name: 'a decimal with more fraction digits than its scale',
      event: bytes({ id: 'e1', details: { price: 1.005 } }),
      reason: 'conversion-failed',
      column: 'price',
    },
    {
      name: 'a list element of the wrong type, named by its index',
      event: bytes({ id: 'e1', user: { tags: ['a', 2] } }),
      reason: 'conversion-failed',
      column: 'tags[1]',
    },
    {
      name: 'a struct field of the wrong type, named by its path',
      event: bytes({ id: 'e1', user: { address: { city: 5 } } }),
      reason: 'conversion-failed',
      column: 'address.city',
    },
    {
      name: 'a timestamp without a zone for a timestamptz column',
      event: bytes({ id: 'e1', timestamp: '2024-03-01T12:00:00' }),
      reason: 'conversion-failed',
      column: 'ts',
    },
    {
      name: 'a JMESPath function given the wrong type',
      event: bytes({ id: 'e1', user: { tags: 5 } }),
      reason: 'mapping-failed',
      column: 'tag_count',
      says: /length/,
    },
  ]
  for (const { name, event, reason, column, says } of cases) {
    test(`${name} is refused as ${reason}${column ? ` naming ${column}` : ''}`, () => {
      assert.throws(
        () => decoder.decode(event),
        (error: unknown) => {
          assert.ok(isFloeError(error, 'RECORD_MALFORMED'), String(error))
          assert.equal(error.details.reason, reason)
          assert.ok(dlqReasons.includes(reason))
          assert.doesNotMatch(error.message, /\n/, 'one line')
          if (column !== undefined) {
            assert.equal(error.details.column, column)
            assert.ok(error.message.startsWith(`column ${column}: `), error.message)
          }
          if (says) assert.match(error.message, says)
          return true
        },
      )
    })
  }

  test('the conversion error keeps the converter error as its cause and its facts in details', () => {
    try {
      decoder.decode(bytes({ id: 'e1', amount: 1, details: { amount: 'lots' } }))
      assert.fail('accepted')
    } catch (error) {
      assert.ok(isFloeError(error, 'RECORD_MALFORMED'))
      assert.ok(isFloeError(error.cause, 'CONVERSION_FAILED'))
      assert.equal(error.message, error.cause.message)
      assert.equal(error.details.expected, 'double')
      assert.equal(error.details.found, 'string "lots"')
    }
  })

  test('the too-large check looks at bytes, not characters', () => {
    // 400 three-byte characters: 1200 bytes in 400 characters.
    assert.equal(
      reasonOf(() => decoder.decode(bytes({ id: '€'.repeat(400) }))),
      'too-large',
    )
  })

  test('a smaller maxDepth refuses what the default accepts', () => {
    const shallow = compileDecoder(dataset, { maxRecordBytes: 1024, maxDepth: 2 })
    assert.equal(shallow.decode(bytes({ id: 'e1', user: { id: 1 } })).user_id, 1n)
    assert.equal(
      reasonOf(() => shallow.decode(bytes({ id: 'e1', a: { b: {} } }))),
      'too-deep',
    )
  })
})
