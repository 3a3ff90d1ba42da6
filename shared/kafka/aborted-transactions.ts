// Read-committed filtering of fetched record batches (docs/design.md invariant 9), done here the way
// Kafka's Java consumer does it instead of trusting the client library's filter: that one keeps
// one aborted range per producer per response (a second abort by the same producer in one
// response lands) and leaves an aborted transaction alone when its abort marker is not in the same
// response (a transaction larger than one fetch lands). Pure; internal to shared/kafka.
//
// The broker's fetch response lists, per partition, the aborted transactions that overlap the
// records it returns: producer id and the offset of the transaction's first record. Walking the
// batches in log order, a producer becomes "aborting" at the first batch that reaches its listed
// first offset, and stops at its next transaction marker. Its transactional data batches in
// between are dropped. Control batches (markers) are never data. Positions are the caller's
// business: dropped batches still occupy offsets.
import type { RecordsBatch } from '@platformatic/kafka'

export interface AbortedTransaction {
  producerId: bigint
  firstOffset: bigint
}

/** What one partition's batches leave behind. */
export interface AbortFilterResult {
  /** Data batches of committed transactions and of non-transactional producers, in log order. */
  kept: RecordsBatch[]
  /**
   * Producers whose aborted transaction is still open after the last batch (its marker lies in a
   * later response). Valid only at the offset right after the last batch.
   */
  open: Set<bigint>
}

// Bits of a record batch's attributes.
const IS_TRANSACTIONAL = 1 << 4
const IS_CONTROL = 1 << 5

/** The producers with an aborted transaction open at a position, as the previous response of the partition left them. */
export interface OpenAborts {
  at: bigint
  producers: ReadonlySet<bigint>
}

/**
 * Drops the data batches of aborted transactions. `carried` are the producers a previous response
 * of the same partition left aborting, when this response starts exactly where that one ended
 * (the broker lists such a transaction again, but nothing is lost by remembering it).
 */
export function dropAborted(
  batches: readonly RecordsBatch[],
  aborted: readonly AbortedTransaction[] | null | undefined,
  carried: ReadonlySet<bigint> = new Set(),
): AbortFilterResult {
  const pending = [...(aborted ?? [])].sort((a, b) => compare(a.firstOffset, b.firstOffset))
  let nextPending = 0
  const open = new Set(carried)
  const kept: RecordsBatch[] = []
  for (const batch of batches) {
    const last = batch.firstOffset + BigInt(batch.lastOffsetDelta)
    for (; nextPending < pending.length; nextPending++) {
      const transaction = pending[nextPending] as AbortedTransaction
      if (transaction.firstOffset > last) break
      open.add(transaction.producerId)
    }
    if ((batch.attributes & IS_CONTROL) !== 0) {
      // Any marker ends its producer's transaction: an abort marker the aborted one, and a commit
      // marker cannot follow an open abort of the same producer in a consistent log, so a stale
      // "aborting" can never outlive it and swallow the producer's next committed transaction.
      open.delete(batch.producerId)
      continue
    }
    if ((batch.attributes & IS_TRANSACTIONAL) !== 0 && open.has(batch.producerId)) continue
    kept.push(batch)
  }
  return { kept, open }
}

function compare(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0
}
