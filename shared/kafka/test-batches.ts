// Small fake record batches for the unit tests of aborted-transaction filtering and fetch
// responses: only the fields those read. Test support; not exported by the folder's index.
import type { RecordsBatch } from '@platformatic/kafka'

const IS_TRANSACTIONAL = 1 << 4
const IS_CONTROL = 1 << 5

function batch(producerId: bigint, firstOffset: bigint, count: number, attributes: number, key?: Buffer): RecordsBatch {
  const records = Array.from({ length: count }, (_, i) => ({
    length: 0,
    attributes: 0,
    timestampDelta: 0n,
    offsetDelta: i,
    key: key ?? Buffer.alloc(0),
    value: Buffer.from(`${firstOffset + BigInt(i)}`),
    headers: [],
  }))
  return {
    firstOffset,
    length: 0,
    partitionLeaderEpoch: 0,
    magic: 2,
    crc: 0,
    attributes,
    lastOffsetDelta: count - 1,
    firstTimestamp: 0n,
    maxTimestamp: 0n,
    producerId,
    producerEpoch: 0,
    firstSequence: 0,
    records,
  } as unknown as RecordsBatch
}

/** `count` records of a transaction of `producerId` starting at `firstOffset`. */
export function dataBatch(producerId: bigint, firstOffset: bigint, count: number): RecordsBatch {
  return batch(producerId, firstOffset, count, IS_TRANSACTIONAL)
}

/** `count` records outside any transaction (producer -1 unless given). */
export function plainBatch(firstOffset: bigint, count: number, producerId = -1n): RecordsBatch {
  return batch(producerId, firstOffset, count, 0)
}

function marker(producerId: bigint, offset: bigint, type: number): RecordsBatch {
  const key = Buffer.alloc(4)
  key.writeInt16BE(0, 0)
  key.writeInt16BE(type, 2)
  return batch(producerId, offset, 1, IS_TRANSACTIONAL | IS_CONTROL, key)
}

export const abortMarker = (producerId: bigint, offset: bigint) => marker(producerId, offset, 0)
export const commitMarker = (producerId: bigint, offset: bigint) => marker(producerId, offset, 1)

/** The offsets of every record of the batches, in order. */
export function offsetsOf(batches: readonly RecordsBatch[]): bigint[] {
  return batches.flatMap((b) => b.records.map((r) => b.firstOffset + BigInt(r.offsetDelta)))
}
