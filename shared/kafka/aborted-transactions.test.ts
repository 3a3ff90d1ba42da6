import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { dropAborted } from './aborted-transactions.ts'
import { abortMarker, commitMarker, dataBatch, offsetsOf, plainBatch } from './test-batches.ts'

const P = 7n
const Q = 9n

describe('dropping aborted transactions from fetched batches', () => {
  test('several aborts by one producer in one response are all dropped, its committed one between them kept', () => {
    const batches = [
      dataBatch(P, 0n, 3), // aborted
      abortMarker(P, 3n),
      dataBatch(P, 4n, 2), // committed
      commitMarker(P, 6n),
      dataBatch(P, 7n, 2), // aborted
      abortMarker(P, 9n),
      plainBatch(10n, 1),
    ]
    const { kept, open } = dropAborted(batches, [
      { producerId: P, firstOffset: 0n },
      { producerId: P, firstOffset: 7n },
    ])
    assert.deepEqual(offsetsOf(kept), [4n, 5n, 10n])
    assert.equal(open.size, 0)
  })

  test('an aborted transaction larger than one response is dropped in each response until its marker', () => {
    const first = dropAborted([dataBatch(P, 0n, 10), dataBatch(P, 10n, 10)], [{ producerId: P, firstOffset: 0n }])
    assert.deepEqual(offsetsOf(first.kept), [])
    assert.deepEqual([...first.open], [P])

    // The broker lists the transaction again for the next response (its first offset is behind it).
    const second = dropAborted(
      [dataBatch(P, 20n, 10), abortMarker(P, 30n), dataBatch(P, 31n, 2), commitMarker(P, 33n)],
      [{ producerId: P, firstOffset: 0n }],
      first.open,
    )
    assert.deepEqual(offsetsOf(second.kept), [31n, 32n])
    assert.equal(second.open.size, 0)
  })

  test('an abort carried from the previous response is dropped even when the response does not list it again', () => {
    const middle = dropAborted([dataBatch(P, 20n, 10)], [], new Set([P]))
    assert.deepEqual(offsetsOf(middle.kept), [])
    assert.deepEqual([...middle.open], [P])
    const end = dropAborted([dataBatch(P, 30n, 5), abortMarker(P, 35n), plainBatch(36n, 2)], null, middle.open)
    assert.deepEqual(offsetsOf(end.kept), [36n, 37n])
    assert.equal(end.open.size, 0)
  })

  test('interleaved producers: only the aborting producer loses its batches', () => {
    const batches = [
      dataBatch(P, 0n, 2),
      dataBatch(Q, 2n, 2),
      plainBatch(4n, 1),
      dataBatch(P, 5n, 2),
      dataBatch(Q, 7n, 2),
      abortMarker(P, 9n),
      commitMarker(Q, 10n),
    ]
    const { kept } = dropAborted(batches, [{ producerId: P, firstOffset: 0n }])
    assert.deepEqual(offsetsOf(kept), [2n, 3n, 4n, 7n, 8n])
  })

  test('two producers aborting at once, one of them across responses', () => {
    const first = dropAborted(
      [dataBatch(P, 0n, 2), dataBatch(Q, 2n, 2), abortMarker(Q, 4n), dataBatch(P, 5n, 2)],
      [
        { producerId: P, firstOffset: 0n },
        { producerId: Q, firstOffset: 2n },
      ],
    )
    assert.deepEqual(offsetsOf(first.kept), [])
    assert.deepEqual([...first.open], [P])
    const second = dropAborted(
      [dataBatch(Q, 7n, 2), commitMarker(Q, 9n), abortMarker(P, 10n)],
      [{ producerId: P, firstOffset: 0n }],
      first.open,
    )
    assert.deepEqual(offsetsOf(second.kept), [7n, 8n])
  })

  test("a producer's committed transaction after its abort is kept, in the same response and in the next", () => {
    const same = dropAborted(
      [dataBatch(P, 0n, 3), abortMarker(P, 3n), dataBatch(P, 4n, 3), commitMarker(P, 7n)],
      [{ producerId: P, firstOffset: 0n }],
    )
    assert.deepEqual(offsetsOf(same.kept), [4n, 5n, 6n])

    const before = dropAborted([dataBatch(P, 0n, 3)], [{ producerId: P, firstOffset: 0n }])
    const after = dropAborted(
      [abortMarker(P, 3n), dataBatch(P, 4n, 3), commitMarker(P, 7n)],
      [{ producerId: P, firstOffset: 0n }],
      before.open,
    )
    assert.deepEqual(offsetsOf(after.kept), [4n, 5n, 6n])
  })

  test("a producer's committed transaction before its listed abort is kept", () => {
    const { kept } = dropAborted(
      [dataBatch(P, 0n, 2), commitMarker(P, 2n), dataBatch(P, 3n, 2), abortMarker(P, 5n)],
      [{ producerId: P, firstOffset: 3n }],
    )
    assert.deepEqual(offsetsOf(kept), [0n, 1n])
  })

  test('an abort listed out of order still applies from its first offset', () => {
    const { kept } = dropAborted(
      [dataBatch(Q, 0n, 1), abortMarker(Q, 1n), dataBatch(P, 2n, 1), abortMarker(P, 3n), plainBatch(4n, 1)],
      [
        { producerId: P, firstOffset: 2n },
        { producerId: Q, firstOffset: 0n },
      ],
    )
    assert.deepEqual(offsetsOf(kept), [4n])
  })

  test('control batches are never data, committed or not', () => {
    const { kept } = dropAborted([commitMarker(P, 0n), abortMarker(Q, 1n), plainBatch(2n, 1)], [])
    assert.deepEqual(offsetsOf(kept), [2n])
  })

  test('a non-transactional batch of a producer id that is aborting elsewhere is kept', () => {
    const { kept } = dropAborted(
      [dataBatch(P, 0n, 1), plainBatch(1n, 1, P), abortMarker(P, 2n)],
      [{ producerId: P, firstOffset: 0n }],
    )
    assert.deepEqual(offsetsOf(kept), [1n])
  })
})
