// The dead-letter path of one dataset: refused records to its dead-letter topic, in batches the
// topic accepts, without ever stalling ingestion on a record that can never land.
//
// - Batches: records are grouped so that one produce stays under the topic's `max.message.bytes`
//   (counted uncompressed, so it holds whatever the compression wins), one produce per group, not
//   one round trip per record. A record that alone is over the budget goes alone.
// - A record the topic refuses as too large (even compressed) is sent again with its payload cut
//   to an empty value; its coordinates, reason and original size stay in headers (dlqHeaders).
// - Refusals no retry fixes (KAFKA_REFUSED: still too large, topic missing, not authorized) are
//   reported per record as `refused`: the caller counts, logs, and goes on or stops the worker.
// - Anything else (the topic's brokers down or slow) is retried with a growing wait until it lands
//   or the participant stops. The caller's record loop holds meanwhile, so nothing more is fetched
//   and memory stays what one fetch holds; `onWait` lets it show the pause.
import { FloeError, isFloeError, messageOf } from '../shared/index.ts'
import type { OutgoingRecord } from '../shared/kafka/index.ts'
import { dlqHeaders } from './decode/index.ts'

export interface DeadLetterProducer {
  send(records: OutgoingRecord[]): Promise<void>
}

export interface DeadLetterOptions {
  producer: DeadLetterProducer
  /** The topic's `max.message.bytes` (default 1 MiB, Kafka's default). */
  maxMessageBytes?: number
  /** Whether to keep retrying an unavailable topic (false once the participant stops). */
  running: () => boolean
  /** Waits `ms` between retries (the participant's interruptible idle). */
  wait: (ms: number) => Promise<void>
  /** Called before each wait for an unavailable topic, with the error, and once it is over (undefined). */
  onWait?: (error: FloeError | undefined, attempt: number, waitMs: number) => void
  /**
   * Whether the dead-letter topic exists, asked of the broker after a failure that is not a
   * refusal: the Kafka client reports a missing topic as a plain usage error, so the broker is
   * asked rather than the message read. false: refused as topic-missing; true or undefined (the
   * broker did not answer): waited for.
   */
  topicExists?: () => Promise<boolean | undefined>
  /** Called once per produce request, for the sends metric. */
  onSend?: (outcome: 'ok' | 'retry' | 'refused') => void
  firstWaitMs?: number
  maxWaitMs?: number
}

/** What happened to one record: landed whole, landed with its payload cut, or refused for good. */
export type DeadLetterOutcome = { kind: 'sent' } | { kind: 'cut' } | { kind: 'refused'; error: FloeError }

const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024
// Kafka's record batch header (61 bytes) and per-record framing, with room to spare: the budget
// counts payloads, this keeps the framing of a full batch under the limit too.
const BATCH_OVERHEAD_BYTES = 1024
const RECORD_OVERHEAD_BYTES = 32

/** Header names added to a record whose payload was cut. */
export const cutHeaders = {
  cut: 'floe.dlq.cut',
  originalBytes: 'floe.dlq.original-bytes',
} as const

/** Bytes one record adds to a batch, uncompressed: payload, key, headers and framing. */
export function recordBytes(record: OutgoingRecord): number {
  let bytes = RECORD_OVERHEAD_BYTES + (record.value?.length ?? 0) + (record.key?.length ?? 0)
  for (const [name, value] of Object.entries(record.headers ?? {})) {
    bytes += name.length + (typeof value === 'string' ? Buffer.byteLength(value) : value.length) + 4
  }
  return bytes
}

/** Groups `records` in order so that each group's bytes stay within `budget`; a record over it is a group alone. */
export function batchesOf(records: readonly OutgoingRecord[], budget: number): OutgoingRecord[][] {
  const batches: OutgoingRecord[][] = []
  let current: OutgoingRecord[] = []
  let bytes = 0
  for (const record of records) {
    const size = recordBytes(record)
    if (current.length > 0 && bytes + size > budget) {
      batches.push(current)
      current = []
      bytes = 0
    }
    current.push(record)
    bytes += size
  }
  if (current.length > 0) batches.push(current)
  return batches
}

/** The record with an empty payload and the facts of the cut in headers (the key stays: it places it). */
export function cutRecord(record: OutgoingRecord, budget: number): OutgoingRecord {
  const headers: Record<string, string | Buffer> = {}
  // Original headers can be what is too large; Floe's own (coordinates, reason) always stay.
  const floeNames: ReadonlySet<string> = new Set(Object.values(dlqHeaders))
  let bytes = 0
  for (const [name, value] of Object.entries(record.headers ?? {})) {
    const size = name.length + (typeof value === 'string' ? Buffer.byteLength(value) : value.length)
    if (floeNames.has(name) || bytes + size <= budget / 4) {
      headers[name] = value
      bytes += size
    }
  }
  headers[cutHeaders.cut] = 'true'
  headers[cutHeaders.originalBytes] = String(record.value?.length ?? 0)
  const key = record.key && record.key.length <= budget / 4 ? record.key : undefined
  const cut: OutgoingRecord = { topic: record.topic, value: Buffer.alloc(0), headers }
  if (key) cut.key = key
  return cut
}

export class DeadLetterSender {
  readonly #o: DeadLetterOptions
  readonly #budget: number

  constructor(options: DeadLetterOptions) {
    this.#o = options
    this.#budget = Math.max(4096, (options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES) - BATCH_OVERHEAD_BYTES)
  }

  /** Bytes of payload one produce carries at most. */
  get budget(): number {
    return this.#budget
  }

  /**
   * Sends every record; resolves with each one's outcome, in order. Rejects only when the
   * participant stops while the topic is unavailable (nothing is then known to have landed).
   */
  async send(records: readonly OutgoingRecord[]): Promise<DeadLetterOutcome[]> {
    const outcomes: DeadLetterOutcome[] = []
    for (const batch of batchesOf(records, this.#budget)) await this.#deliver(batch, outcomes)
    return outcomes
  }

  async #deliver(batch: OutgoingRecord[], outcomes: DeadLetterOutcome[]): Promise<void> {
    const error = await this.#produce(batch)
    if (!error) {
      for (let i = 0; i < batch.length; i++) outcomes.push({ kind: 'sent' })
    } else if (error.details.reason !== 'too-large') {
      for (let i = 0; i < batch.length; i++) outcomes.push({ kind: 'refused', error })
    } else if (batch.length > 1) {
      // The topic's limit is below what we were told: halves, until the record at fault is alone.
      const half = Math.ceil(batch.length / 2)
      await this.#deliver(batch.slice(0, half), outcomes)
      await this.#deliver(batch.slice(half), outcomes)
    } else {
      const cutError = await this.#produce([cutRecord(batch[0]!, this.#budget)])
      outcomes.push(cutError ? { kind: 'refused', error: cutError } : { kind: 'cut' })
    }
  }

  /** Produces once it can: undefined when it landed, the KAFKA_REFUSED error when it never will. */
  async #produce(batch: OutgoingRecord[]): Promise<FloeError | undefined> {
    const { producer, running, wait, onWait, onSend } = this.#o
    const first = this.#o.firstWaitMs ?? 200
    const max = this.#o.maxWaitMs ?? 10_000
    for (let attempt = 1; ; attempt++) {
      try {
        await producer.send(batch)
        onSend?.('ok')
        if (attempt > 1) onWait?.(undefined, attempt, 0)
        return undefined
      } catch (thrown) {
        if (isFloeError(thrown, 'KAFKA_REFUSED')) {
          onSend?.('refused')
          if (attempt > 1) onWait?.(undefined, attempt, 0)
          return thrown
        }
        // Not a refusal: the topic's brokers are away or slow, or the topic is gone. A non-Floe
        // error here is the producer's own bug; it is not a reason to lose the records either.
        const error = isFloeError(thrown)
          ? thrown
          : new FloeError('KAFKA_UNAVAILABLE', messageOf(thrown), { cause: thrown })
        if ((await this.#o.topicExists?.().catch(() => undefined)) === false) {
          onSend?.('refused')
          if (attempt > 1) onWait?.(undefined, attempt, 0)
          const topics = [...new Set(batch.map((r) => r.topic))]
          return new FloeError('KAFKA_REFUSED', `the dead-letter topic ${topics.join(', ')} does not exist`, {
            cause: error,
            details: { reason: 'topic-missing', topics },
          })
        }
        onSend?.('retry')
        if (!running()) throw error
        const waitMs = Math.min(max, first * 2 ** Math.min(attempt - 1, 16))
        onWait?.(error, attempt, waitMs)
        await wait(waitMs)
        if (!running()) throw error
      }
    }
  }
}
