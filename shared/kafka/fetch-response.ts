// One fetch response, partition by partition (docs/design.md invariants 9 and 10): each partition's
// error code is that partition's alone, and each partition's batches are filtered for aborted
// transactions here. The client library throws for the whole response when any one partition has
// an error code (its fetch() does not return the others' records); the response still rides on the
// error, and responseOf() gets it back. Pure; internal to shared/kafka.
import { protocolErrorsCodesById, type RecordsBatch } from '@platformatic/kafka'
import { type AbortedTransaction, dropAborted, type OpenAborts } from './aborted-transactions.ts'

export interface FetchedPartition {
  partition: number
  /** The position asked for; records before it in the first batch are to be skipped. */
  from: bigint
  /** Data batches (transaction markers and aborted transactions removed); their records from `from` on are new. */
  batches: RecordsBatch[]
  /** Where the next fetch of this partition starts: past every batch returned, markers and aborted ones included. */
  next: bigint
  /** The broker's log start and high watermark; -1 when the partition answered with an error. */
  logStartOffset: bigint
  highWatermark: bigint
  /** The position is outside the log (e.g. deleted by retention): the caller decides where to go. */
  outOfRange: boolean
  /** The Kafka error this partition answered with (none: undefined); nothing was read. */
  error?: string
}

/** The parts of a fetch response this reads (the client's FetchResponse has this shape). */
export interface FetchResponseLike {
  errorCode: number
  responses: ReadonlyArray<{
    partitions: ReadonlyArray<{
      partitionIndex: number
      errorCode: number
      highWatermark: bigint
      logStartOffset: bigint
      abortedTransactions: readonly AbortedTransaction[] | null
      records?: readonly RecordsBatch[] | null
    }>
  }>
}

// Kafka error codes a fetch answers per partition.
const NONE = 0
const OFFSET_OUT_OF_RANGE = 1

export interface ReadFetch {
  partitions: FetchedPartition[]
  /** A partition answered with an error other than out-of-range (not leader, unknown leader epoch, …): learn the cluster again. */
  staleMetadata: boolean
}

/**
 * The partitions of a response that were asked for (`positions`: partition -> position). `open`
 * holds, per partition, the aborts the previous response left open; it is updated in place.
 */
export function readFetchResponse(
  response: FetchResponseLike,
  positions: ReadonlyMap<number, bigint>,
  open: Map<number, OpenAborts>,
): ReadFetch {
  const out: FetchedPartition[] = []
  let staleMetadata = false
  for (const topic of response.responses) {
    for (const p of topic.partitions) {
      const from = positions.get(p.partitionIndex)
      // An incremental fetch session may answer for partitions not asked for this time.
      if (from === undefined) continue
      const base = {
        partition: p.partitionIndex,
        from,
        logStartOffset: p.logStartOffset,
        highWatermark: p.highWatermark,
      }
      if (p.errorCode !== NONE) {
        open.delete(p.partitionIndex)
        const outOfRange = p.errorCode === OFFSET_OUT_OF_RANGE
        if (!outOfRange) staleMetadata = true
        out.push({ ...base, batches: [], next: from, outOfRange, error: errorName(p.errorCode) })
        continue
      }
      let next = from
      const fresh: RecordsBatch[] = []
      for (const batch of p.records ?? []) {
        const end = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n
        if (end <= from) continue
        if (end > next) next = end
        fresh.push(batch)
      }
      const previous = open.get(p.partitionIndex)
      const carried = previous && previous.at === from ? previous.producers : undefined
      const { kept, open: stillOpen } = dropAborted(fresh, p.abortedTransactions, carried)
      if (stillOpen.size > 0) open.set(p.partitionIndex, { at: next, producers: stillOpen })
      else open.delete(p.partitionIndex)
      out.push({ ...base, batches: kept, next, outOfRange: false })
    }
  }
  return { partitions: out, staleMetadata }
}

/**
 * The fetch response a client error carries when the request itself went through and only
 * partitions answered with errors; undefined for any other failure (connection, whole-request
 * error), which fails the fetch as a whole.
 */
export function responseOf(error: unknown): FetchResponseLike | undefined {
  const candidates: unknown[] = [error]
  // After retries the client wraps each attempt's error; the last attempt's response is the newest.
  const nested = (error as { errors?: unknown } | null | undefined)?.errors
  if (Array.isArray(nested)) candidates.push(...[...nested].reverse())
  for (const candidate of candidates) {
    const response = (candidate as { response?: unknown } | null)?.response as FetchResponseLike | undefined
    if (response && Array.isArray(response.responses) && response.errorCode === NONE) return response
  }
  return undefined
}

function errorName(code: number): string {
  return protocolErrorsCodesById[code] ?? `KAFKA_ERROR_${code}`
}
