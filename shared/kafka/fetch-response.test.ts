import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { RecordsBatch } from '@platformatic/kafka'
import type { OpenAborts } from './aborted-transactions.ts'
import { type FetchResponseLike, readFetchResponse, responseOf } from './fetch-response.ts'
import { abortMarker, commitMarker, dataBatch, offsetsOf, plainBatch } from './test-batches.ts'

const P = 5n

function partition(
  partitionIndex: number,
  records: RecordsBatch[],
  options: { errorCode?: number; aborted?: Array<{ producerId: bigint; firstOffset: bigint }> } = {},
) {
  const failed = (options.errorCode ?? 0) !== 0
  return {
    partitionIndex,
    errorCode: options.errorCode ?? 0,
    highWatermark: failed ? -1n : 100n,
    logStartOffset: failed ? -1n : 0n,
    abortedTransactions: options.aborted ?? null,
    records,
  }
}

const response = (...partitions: ReturnType<typeof partition>[]): FetchResponseLike => ({
  errorCode: 0,
  responses: [{ partitions }],
})

const positions = (entries: Record<number, bigint>) => new Map(Object.entries(entries).map(([p, o]) => [Number(p), o]))

describe('reading a fetch response partition by partition', () => {
  test('an out-of-range partition is flagged while the other partition of the same response is read', () => {
    const read = readFetchResponse(
      response(partition(0, [plainBatch(0n, 3)]), partition(1, [], { errorCode: 1 })),
      positions({ 0: 0n, 1: 0n }),
      new Map(),
    )
    const [zero, one] = read.partitions
    assert.deepEqual(offsetsOf(zero?.batches ?? []), [0n, 1n, 2n])
    assert.equal(zero?.next, 3n)
    assert.equal(zero?.outOfRange, false)
    assert.equal(one?.outOfRange, true)
    assert.equal(one?.error, 'OFFSET_OUT_OF_RANGE')
    assert.equal(one?.next, 0n)
    assert.equal(read.staleMetadata, false)
  })

  test('a not-leader partition reads nothing and asks for the cluster to be learned again', () => {
    const read = readFetchResponse(
      response(partition(0, [plainBatch(10n, 2)]), partition(1, [], { errorCode: 6 })),
      positions({ 0: 10n, 1: 40n }),
      new Map(),
    )
    assert.equal(read.staleMetadata, true)
    assert.deepEqual(
      read.partitions.map((p) => [p.partition, p.next, p.outOfRange, p.error]),
      [
        [0, 12n, false, undefined],
        [1, 40n, false, 'NOT_LEADER_OR_FOLLOWER'],
      ],
    )
  })

  test('partitions not asked for are ignored, and a batch wholly before the position is skipped', () => {
    const read = readFetchResponse(
      response(partition(0, [plainBatch(0n, 5), plainBatch(5n, 5)]), partition(3, [plainBatch(0n, 1)])),
      positions({ 0: 5n }),
      new Map(),
    )
    assert.equal(read.partitions.length, 1)
    assert.deepEqual(offsetsOf(read.partitions[0]?.batches ?? []), [5n, 6n, 7n, 8n, 9n])
  })

  test('the position moves past aborted batches and markers, though nothing is left to read', () => {
    const read = readFetchResponse(
      response(
        partition(0, [dataBatch(P, 0n, 4), abortMarker(P, 4n)], { aborted: [{ producerId: P, firstOffset: 0n }] }),
      ),
      positions({ 0: 0n }),
      new Map(),
    )
    assert.deepEqual(read.partitions[0]?.batches, [])
    assert.equal(read.partitions[0]?.next, 5n)
  })

  test('an abort left open by one response is carried into the next response from where it ended', () => {
    const open = new Map<number, OpenAborts>()
    const aborted = [{ producerId: P, firstOffset: 0n }]
    readFetchResponse(response(partition(0, [dataBatch(P, 0n, 10)], { aborted })), positions({ 0: 0n }), open)
    assert.deepEqual(open.get(0), { at: 10n, producers: new Set([P]) })
    // This response does not list the abort again: the carried state still drops its batches.
    const next = readFetchResponse(
      response(partition(0, [dataBatch(P, 10n, 5), abortMarker(P, 15n), dataBatch(P, 16n, 2), commitMarker(P, 18n)])),
      positions({ 0: 10n }),
      open,
    )
    assert.deepEqual(offsetsOf(next.partitions[0]?.batches ?? []), [16n, 17n])
    assert.equal(open.has(0), false)
  })

  test('a carried abort does not apply after a seek elsewhere', () => {
    const open = new Map<number, OpenAborts>([[0, { at: 10n, producers: new Set([P]) }]])
    // Seeked back to 0: the committed transaction of the same producer there is read.
    const read = readFetchResponse(
      response(partition(0, [dataBatch(P, 0n, 3), commitMarker(P, 3n)])),
      positions({ 0: 0n }),
      open,
    )
    assert.deepEqual(offsetsOf(read.partitions[0]?.batches ?? []), [0n, 1n, 2n])
  })

  test('an error on the partition forgets what it carried', () => {
    const open = new Map<number, OpenAborts>([[0, { at: 10n, producers: new Set([P]) }]])
    readFetchResponse(response(partition(0, [], { errorCode: 1 })), positions({ 0: 10n }), open)
    assert.equal(open.has(0), false)
  })
})

describe('the response a client error carries', () => {
  const inner = response(partition(0, [plainBatch(0n, 1)]), partition(1, [], { errorCode: 1 }))

  test('is taken from an error that carries one', () => {
    assert.equal(responseOf({ response: inner }), inner)
  })

  test('is taken from the newest attempt of a retried fetch', () => {
    const older = response(partition(0, []))
    assert.equal(responseOf({ errors: [{ response: older }, { response: inner }] }), inner)
  })

  test('is none for an error without a response or with a whole-request error', () => {
    assert.equal(responseOf(new Error('connection closed')), undefined)
    assert.equal(responseOf({ response: { ...inner, errorCode: 70 } }), undefined)
    assert.equal(responseOf(undefined), undefined)
  })
})
