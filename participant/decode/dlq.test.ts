import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { FloeError, isFloeError } from '../../shared/index.ts'
import type { IncomingRecord } from '../../shared/kafka/index.ts'
import { compileDecoder, dlqHeaders, dlqRecord, MAX_ERROR_HEADER_BYTES } from './index.ts'
import { datasetOf } from './test-support.ts'

const decoder = compileDecoder(datasetOf({ user_id: 'user.id' }, { user_id: 'long' }), { maxRecordBytes: 1024 })

function incoming(overrides: Partial<IncomingRecord> = {}): IncomingRecord {
  return {
    topic: 'events',
    partition: 3,
    offset: 9_007_199_254_740_993n,
    timestamp: 1_709_290_800_123n,
    key: Buffer.from('user-42'),
    value: Buffer.from('{"user":{"id":"x"}}'),
    headers: new Map([
      [Buffer.from('trace-id'), Buffer.from('abc')],
      [Buffer.from('floe.dataset'), Buffer.from('spoofed')],
    ]),
    ...overrides,
  }
}

function refusal(record: IncomingRecord): FloeError {
  try {
    decoder.decode(record.value)
  } catch (error) {
    if (isFloeError(error)) return error
    throw error
  }
  return assert.fail('the record was accepted')
}

describe('the dead-letter record', () => {
  test('carries the payload and key as they arrived, and the source coordinates in headers', () => {
    const record = incoming()
    const dead = dlqRecord(record, 'events-dlq', 'events', refusal(record))
    assert.equal(dead.topic, 'events-dlq')
    assert.equal(dead.value, record.value)
    assert.equal(dead.key, record.key)
    assert.equal(dead.partition, undefined, 'the producer partitions by the original key')
    assert.equal(dead.timestamp, undefined)
    assert.deepEqual(dead.headers, {
      'trace-id': Buffer.from('abc'),
      'floe.dataset': 'events',
      'floe.dlq.reason': 'conversion-failed',
      'floe.dlq.error': 'column user_id: expected long, got string "x" (not an integer)',
      'floe.dlq.column': 'user_id',
      'floe.source.topic': 'events',
      'floe.source.partition': '3',
      'floe.source.offset': '9007199254740993',
      'floe.source.timestamp': '1709290800123',
    })
  })

  const cases: { name: string; record: IncomingRecord; reason: string }[] = [
    { name: 'a tombstone', record: incoming({ value: undefined }), reason: 'empty' },
    {
      name: 'a record without a key',
      record: incoming({ key: undefined, value: Buffer.from('[1]') }),
      reason: 'not-object',
    },
    { name: 'truncated JSON', record: incoming({ value: Buffer.from('{"user":') }), reason: 'not-json' },
    { name: 'bytes that are not UTF-8', record: incoming({ value: Buffer.from([0xff]) }), reason: 'invalid-utf8' },
  ]
  for (const { name, record, reason } of cases) {
    test(`of ${name} says ${reason} and keeps what arrived`, () => {
      const dead = dlqRecord(record, 'dlq', 'events', refusal(record))
      assert.equal(dead.headers?.[dlqHeaders.reason], reason)
      assert.deepEqual(dead.value, record.value ?? Buffer.alloc(0))
      assert.equal(dead.key, record.key)
      assert.equal('key' in dead, record.key !== undefined, 'no key property for a record without one')
    })
  }

  test('cuts a long error message to 1 KiB without splitting a character', () => {
    const error = new FloeError('RECORD_MALFORMED', `column x: ${'€'.repeat(600)}`, { details: { reason: 'not-json' } })
    const header = dlqRecord(incoming(), 'dlq', 'events', error).headers?.[dlqHeaders.error]
    assert.equal(typeof header, 'string')
    const text = header as string
    assert.ok(Buffer.byteLength(text) <= MAX_ERROR_HEADER_BYTES, `${Buffer.byteLength(text)} bytes`)
    assert.ok(Buffer.byteLength(text) > MAX_ERROR_HEADER_BYTES - 4)
    assert.ok(text.endsWith('€…'))
    assert.doesNotMatch(text, /\uFFFD/)
  })

  test('names the error code as the reason of an error that is not the decoder`s', () => {
    const error = new FloeError('STORAGE_UNAVAILABLE', 'down')
    const dead = dlqRecord(incoming(), 'dlq', 'events', error)
    assert.equal(dead.headers?.[dlqHeaders.reason], 'STORAGE_UNAVAILABLE')
    assert.equal(dead.headers?.[dlqHeaders.column], undefined)
  })
})
