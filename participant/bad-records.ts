// What a dataset does with the records its decoder refused, by `badRecords` (README "Bad input"):
// - dlq: to the dead-letter topic (DeadLetterSender). A record the topic refuses for good is
//   counted (floe_records_dropped_total, floe_dead_letter_refused_total) and logged, and the
//   partition goes on.
// - skip: each record's coordinates logged (rate-limited) and counted; nothing else.
// - stop: the worker stops (BAD_RECORD_STOP, fatal) at the first bad record it cannot keep: every
//   bad record without a dead-letter topic, one the dead-letter topic refuses with one.
// Nothing here is retried forever except an unavailable dead-letter topic, which holds the
// dataset's record loop (shown as the `dlq-wait` phase and floe_dead_letter_paused) until it is back.
import type { DatasetConfig } from '../shared/config/index.ts'
import { FloeError } from '../shared/index.ts'
import type { FloeMetrics, Logger, PhaseClock } from '../shared/telemetry/index.ts'
import { DeadLetterSender, type DeadLetterOptions as DeadLetterSenderOptions } from './dead-letter.ts'
import { dlqRecord } from './decode/index.ts'
import type { BadRecord } from './partition-ingest.ts'

/** What a dataset's dead-letter sender reports to, and how it waits. */
export interface DeadLetterWiring {
  producer: DeadLetterSenderOptions['producer']
  maxMessageBytes: number | undefined
  /** The topic exists (false: not yet created; undefined: cannot tell now). */
  topicExists(): Promise<boolean>
  running(): boolean
  /** The record loop's wait, which a stop or a change ends early. */
  wait(ms: number): Promise<void>
  labels: { dataset: string }
  logger: Logger
  metrics: FloeMetrics
  phases: PhaseClock
}

/**
 * While the dead-letter topic is unavailable the record loop holds here (nothing more is fetched,
 * so memory stays one fetch): the wait shows as the `dlq-wait` phase and floe_dead_letter_paused.
 */
export function deadLetterSenderFor(topic: string, wiring: DeadLetterWiring): DeadLetterSender {
  const { metrics, phases, logger, labels } = wiring
  return new DeadLetterSender({
    producer: wiring.producer,
    ...(wiring.maxMessageBytes === undefined ? {} : { maxMessageBytes: wiring.maxMessageBytes }),
    running: wiring.running,
    wait: wiring.wait,
    topicExists: wiring.topicExists,
    onSend: (outcome) => metrics.deadLetterSends.inc({ ...labels, outcome }),
    onWait: (error, attempt, waitMs) => {
      metrics.deadLetterPaused.set(labels, error ? 1 : 0)
      phases.switchTo(error ? 'dlq-wait' : 'dlq')
      if (error) logger.warn({ topic, attempt, waitMs, err: error.message }, 'dead-letter topic unavailable; holding')
      else logger.info({ topic, attempts: attempt }, 'dead-letter topic back')
    },
  })
}

/** A dataset's bad-record handling, with a dead-letter sender when it names a dead-letter topic. */
export function badRecordsOf(
  dataset: DatasetConfig,
  wiring: Omit<DeadLetterWiring, 'topicExists'> & { partitionCount(topic: string): Promise<number | undefined> },
): BadRecords {
  const topic = dataset.dlqTopic || undefined
  const { partitionCount, ...rest } = wiring
  return new BadRecords({
    dataset,
    sender:
      topic === undefined
        ? undefined
        : deadLetterSenderFor(topic, { ...rest, topicExists: async () => (await partitionCount(topic)) !== undefined }),
    logger: wiring.logger,
    metrics: wiring.metrics,
    phases: wiring.phases,
  })
}

export interface BadRecordsOptions {
  dataset: DatasetConfig
  /** Required when the dataset has a dead-letter topic. */
  sender: DeadLetterSender | undefined
  logger: Logger
  metrics: FloeMetrics
  phases: PhaseClock
  /** Least time between two log lines about skipped or refused records (default 1000 ms). */
  logIntervalMs?: number
  now?: () => number
}

/** Where a record was: enough to find it again with any Kafka tool. */
function coordinates({ record }: BadRecord): { topic: string; partition: number; offset: string } {
  return { topic: record.topic, partition: record.partition, offset: String(record.offset) }
}

function reasonOf({ error }: BadRecord): string {
  return String(error.details.reason ?? error.code)
}

/** One log line per interval at most; the lines held back are counted in the next one. */
class RateLimitedLog {
  readonly #intervalMs: number
  readonly #now: () => number
  #last = Number.NEGATIVE_INFINITY
  #held = 0

  constructor(intervalMs: number, now: () => number) {
    this.#intervalMs = intervalMs
    this.#now = now
  }

  /** Runs `log` with the count of lines held back since the last one, or holds it back. */
  write(log: (heldBack: number) => void): void {
    const now = this.#now()
    if (now - this.#last < this.#intervalMs) {
      this.#held++
      return
    }
    log(this.#held)
    this.#last = now
    this.#held = 0
  }
}

export class BadRecords {
  readonly #o: BadRecordsOptions
  readonly #labels: { dataset: string }
  readonly #skipLog: RateLimitedLog
  readonly #refusedLog: RateLimitedLog

  constructor(options: BadRecordsOptions) {
    const { dataset } = options
    if (dataset.badRecords === 'dlq' && !dataset.dlqTopic) {
      throw new FloeError('CONFIG_INVALID', `dataset ${dataset.name}: badRecords: dlq needs a dlqTopic`)
    }
    if (dataset.dlqTopic && !options.sender) {
      throw new FloeError('INVARIANT_BROKEN', `dataset ${dataset.name}: a dead-letter topic without a sender`)
    }
    this.#o = options
    this.#labels = { dataset: dataset.name }
    const now = options.now ?? Date.now
    this.#skipLog = new RateLimitedLog(options.logIntervalMs ?? 1000, now)
    this.#refusedLog = new RateLimitedLog(options.logIntervalMs ?? 1000, now)
  }

  /**
   * Handles one fetched batch's refused records, before the append that moves the range past them.
   * Throws BAD_RECORD_STOP under `badRecords: stop` when one cannot be kept.
   */
  async handle(bad: readonly BadRecord[]): Promise<void> {
    if (bad.length === 0) return
    const { dataset } = this.#o
    const topic = dataset.dlqTopic
    if (!topic) {
      if (dataset.badRecords === 'stop') throw this.#stop(bad[0]!, `it is ${reasonOf(bad[0]!)}`)
      for (const one of bad) this.#skip(one)
      return
    }
    const sender = this.#o.sender!
    const records = bad.map(({ record, error }) => dlqRecord(record, topic, dataset.name, error))
    const outcomes = await sender.send(records)
    const { metrics } = this.#o
    for (let i = 0; i < bad.length; i++) {
      const one = bad[i]!
      const outcome = outcomes[i]!
      if (outcome.kind === 'refused') {
        const why = String(outcome.error.details.reason ?? outcome.error.code)
        metrics.recordsDropped.inc({ ...this.#labels, reason: reasonOf(one) })
        metrics.deadLetterRefused.inc({ ...this.#labels, error: why })
        if (dataset.badRecords === 'stop') {
          throw this.#stop(one, `the dead-letter topic ${topic} refused it (${why}: ${outcome.error.message})`)
        }
        this.#refusedLog.write((heldBack) =>
          this.#o.logger.error(
            { ...coordinates(one), reason: reasonOf(one), dlqTopic: topic, error: why, heldBack },
            'dead-letter topic refused a bad record; counted and dropped',
          ),
        )
        continue
      }
      metrics.recordsDeadLettered.inc({ ...this.#labels, reason: reasonOf(one) })
      if (outcome.kind === 'cut') metrics.deadLetterCut.inc(this.#labels)
    }
  }

  #skip(one: BadRecord): void {
    this.#o.metrics.recordsDropped.inc({ ...this.#labels, reason: reasonOf(one) })
    this.#skipLog.write((heldBack) =>
      this.#o.logger.warn(
        { ...coordinates(one), reason: reasonOf(one), error: one.error.message, skippedWithoutLine: heldBack },
        'skipped a bad record (badRecords: skip)',
      ),
    )
  }

  #stop(one: BadRecord, why: string): FloeError {
    const { topic, partition, offset } = coordinates(one)
    return new FloeError(
      'BAD_RECORD_STOP',
      `dataset ${this.#o.dataset.name}: stopping on the bad record at ${topic}/${partition}@${offset} (badRecords: stop): ${why}`,
      { cause: one.error, details: { topic, partition, offset, reason: reasonOf(one) } },
    )
  }
}
