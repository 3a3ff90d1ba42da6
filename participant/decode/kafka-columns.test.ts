import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../shared/index.ts'
import type { RecordsBatch } from '../../shared/kafka/index.ts'
import { BatchCoordinates, compileDecoder, type RecordCoordinates } from './index.ts'
import { datasetOf } from './test-support.ts'

const value = Buffer.from(JSON.stringify({ id: 'e-1' }))

function coordinates(overrides: Partial<RecordCoordinates> = {}): RecordCoordinates {
  return {
    topic: 'orders.eu',
    partition: 7,
    offset: 9_007_199_254_740_993n,
    timestampMs: 1_764_547_200_123n,
    timestampType: 'CreateTime',
    key: Buffer.from('user-42'),
    value,
    headers: [
      [Buffer.from('trace'), Buffer.from('t-1')],
      [Buffer.from('source'), Buffer.from('app')],
      [Buffer.from('trace'), Buffer.from('t-2')],
      [Buffer.from('empty'), null],
    ],
    ...overrides,
  }
}

function decoderOf(mapping: Record<string, string>, schema: Record<string, string>) {
  return compileDecoder(datasetOf({ id: 'id', ...mapping }, { id: 'string', ...schema }), { maxRecordBytes: 1 << 20 })
}

/** The RECORD_MALFORMED a decode is refused with. */
function refusedWith(decode: () => unknown): { message: string; column: unknown } {
  try {
    decode()
  } catch (error) {
    assert.ok(isFloeError(error, 'RECORD_MALFORMED'), String(error))
    return { message: error.message, column: error.details.column }
  }
  assert.fail('the record was accepted')
}

describe('$kafka.* columns', () => {
  test('fill each column with the record coordinate it names, in the column type', () => {
    const decoder = decoderOf(
      {
        topic: '$kafka.topic',
        part: '$kafka.partition',
        part_long: '$kafka.partition',
        offset: '$kafka.offset',
        at: '$kafka.timestamp',
        at_ms: '$kafka.timestamp',
        key_text: '$kafka.key',
        key_bytes: '$kafka.key',
        trace: '$kafka.headers.trace',
        missing_header: '$kafka.headers.nope',
        headers: '$kafka.headers',
      },
      {
        topic: 'string',
        part: 'int',
        part_long: 'long',
        offset: 'long',
        at: 'timestamptz',
        at_ms: 'long',
        key_text: 'string',
        key_bytes: 'binary',
        trace: 'string',
        missing_header: 'binary',
        headers: 'map<string, string>',
      },
    )
    assert.equal(decoder.readsCoordinates, true)
    const row = decoder.decode(value, coordinates())
    assert.deepEqual(row, {
      id: 'e-1',
      topic: 'orders.eu',
      part: 7,
      part_long: 7n,
      // beyond 2^53: an offset is never a JSON number on its way in
      offset: 9_007_199_254_740_993n,
      at: 1_764_547_200_123_000n,
      at_ms: 1_764_547_200_123n,
      key_text: 'user-42',
      key_bytes: Buffer.from('user-42'),
      // a repeated header: its last value
      trace: 't-2',
      missing_header: null,
      headers: new Map([
        ['trace', 't-2'],
        ['source', 'app'],
        ['empty', ''],
      ]),
    })
  })

  test('a dataset that maps none does not read the coordinates', () => {
    assert.equal(decoderOf({}, {}).readsCoordinates, false)
  })

  test('a null key is null, or refused for a required column', () => {
    const optional = decoderOf({ key: '$kafka.key' }, { key: 'string' })
    assert.equal(optional.decode(value, coordinates({ key: undefined })).key, null)
    const required = decoderOf({ key: '$kafka.key' }, { key: 'string not null' })
    const { message, column } = refusedWith(() => required.decode(value, coordinates({ key: undefined })))
    assert.equal(column, 'key')
    assert.match(message, /required/)
  })

  test('bytes that are not UTF-8 are refused for a string column and kept whole for a binary one', () => {
    const bad = Buffer.from([0x66, 0xff, 0xfe])
    const text = decoderOf({ key: '$kafka.key' }, { key: 'string' })
    const refused = refusedWith(() => text.decode(value, coordinates({ key: bad })))
    assert.equal(refused.column, 'key')
    assert.match(refused.message, /not UTF-8/)
    const bytes = decoderOf({ key: '$kafka.key', h: '$kafka.headers' }, { key: 'binary', h: 'map<string, binary>' })
    const row = bytes.decode(value, coordinates({ key: bad, headers: [[Buffer.from('raw'), bad]] }))
    assert.deepEqual(row.key, bad)
    assert.deepEqual(row.h, new Map([['raw', bad]]))
  })

  test('a list of headers keeps every header in order, a repeated name and a missing value', () => {
    const decoder = decoderOf(
      { h: '$kafka.headers', t: '$kafka.headers' },
      {
        h: 'list<struct<key: string, value: binary>>',
        t: 'list<struct<key: string, value: string>>',
      },
    )
    const row = decoder.decode(value, coordinates())
    assert.deepEqual(row.h, [
      { key: 'trace', value: Buffer.from('t-1') },
      { key: 'source', value: Buffer.from('app') },
      { key: 'trace', value: Buffer.from('t-2') },
      { key: 'empty', value: null },
    ])
    assert.deepEqual(
      (row.t as { value: unknown }[]).map((header) => header.value),
      ['t-1', 'app', 't-2', null],
    )
    const badName = coordinates({ headers: [[Buffer.from([0xc3, 0x28]), Buffer.from('v')]] })
    assert.equal(refusedWith(() => decoder.decode(value, badName)).column, 'h.key')
  })

  test('$kafka.value and $kafka.timestampType', () => {
    const decoder = decoderOf(
      { raw: '$kafka.value', text: '$kafka.value', kind: '$kafka.timestampType' },
      { raw: 'binary', text: 'string', kind: 'string not null' },
    )
    const row = decoder.decode(value, coordinates({ timestampType: 'LogAppendTime' }))
    assert.deepEqual(row.raw, value)
    assert.equal(row.text, '{"id":"e-1"}')
    assert.equal(row.kind, 'LogAppendTime')
  })

  test('binary columns hold copies, not views that keep the whole fetched batch alive', () => {
    // a fetched batch of 16 KiB, a key somewhere in it
    const fetched = Buffer.alloc(16_384)
    fetched.write('user-42', 4_000)
    const key = fetched.subarray(4_000, 4_007)
    const row = decoderOf({ key: '$kafka.key' }, { key: 'binary' }).decode(value, coordinates({ key }))
    assert.deepEqual(row.key, Buffer.from('user-42'))
    assert.notEqual((row.key as Buffer).buffer, fetched.buffer)
  })

  test('a dataset of coordinates only never parses the value: a tombstone, empty bytes or non-JSON are rows', () => {
    const decoder = decoderOf({}, {})
    assert.throws(() => decoder.decode(undefined, coordinates()), /tombstone/)
    const archive = compileDecoder(
      datasetOf({ offset: '$kafka.offset', value: '$kafka.value' }, { offset: 'long not null', value: 'binary' }),
      { maxRecordBytes: 8 },
    )
    const invalidUtf8 = Buffer.from([0xff, 0xfe, 0x00])
    for (const bytes of [undefined, Buffer.alloc(0), invalidUtf8, Buffer.from('not json')]) {
      assert.deepEqual(archive.decode(bytes, coordinates({ value: bytes })).value, bytes === undefined ? null : bytes)
    }
    const large = Buffer.alloc(9)
    assert.match(refusedWith(() => archive.decode(large, coordinates({ value: large }))).message, /maxRecordBytes/)
  })

  test('BatchCoordinates reads a fetched batch record by record', () => {
    const batch = {
      attributes: 0,
      firstOffset: 100n,
      firstTimestamp: 1_000n,
      records: [
        { offsetDelta: 0, timestampDelta: 0n, key: Buffer.from('a'), value: value, headers: [] },
        {
          offsetDelta: 2,
          timestampDelta: 5n,
          key: null,
          value: value,
          headers: [[Buffer.from('h'), Buffer.from('v')]],
        },
      ],
    } as unknown as RecordsBatch
    const decoder = decoderOf(
      { offset: '$kafka.offset', at: '$kafka.timestamp', key: '$kafka.key', h: '$kafka.headers.h' },
      { offset: 'long', at: 'long', key: 'string', h: 'string' },
    )
    const at = new BatchCoordinates('events', 3)
    const rows = batch.records.map((record) => decoder.decode(value, at.at(batch, record)))
    assert.deepEqual(
      rows.map(({ offset, at: ms, key, h }) => ({ offset, ms, key, h })),
      [
        { offset: 100n, ms: 1_000n, key: 'a', h: null },
        { offset: 102n, ms: 1_005n, key: null, h: 'v' },
      ],
    )
    assert.equal(at.at(batch, batch.records[0]!).timestampType, 'CreateTime')
  })

  test('in a batch the broker stamped (LogAppendTime) every record has the batch time', () => {
    const batch = {
      attributes: 0x08,
      firstOffset: 0n,
      firstTimestamp: 1_000n,
      maxTimestamp: 9_000n,
      records: [
        { offsetDelta: 0, timestampDelta: 0n, key: null, value, headers: [] },
        { offsetDelta: 1, timestampDelta: 7n, key: null, value, headers: [] },
      ],
    } as unknown as RecordsBatch
    const at = new BatchCoordinates('events', 0)
    assert.deepEqual(
      batch.records.map((record) => [at.at(batch, record).timestampMs, at.timestampType]),
      [
        [9_000n, 'LogAppendTime'],
        [9_000n, 'LogAppendTime'],
      ],
    )
  })
})
