// The Kafka group offsets of a dataset's partitions, committed after each ACK for lag monitoring
// and autoscaling (invariant 6: the table, not the group, says where a partition resumes), and for
// the operator who moves a dataset to a new table, which starts where the group's offsets are.
// The ACKs of one round arrive together: their offsets go in one request, on the next tick.
// A request the broker refuses (a rebalance in progress, the group coordinator moving) is tried
// again while the partitions are still held, backing off: otherwise a worker whose last round with
// records met a rebalance would leave the group's offsets behind the table for as long as no new
// records come. A drain waits for the last of them (settle).
import { messageOf } from '../shared/index.ts'
import type { Logger } from '../shared/telemetry/index.ts'

export interface GroupOffsetsOptions {
  commit(offsets: ReadonlyMap<number, bigint>): Promise<void>
  /** Whether this member still holds the partition: a revoked one's offset is the new owner's. */
  holds(partition: number): boolean
  logger: Logger
  /** The first retry's delay; each failure in a row doubles it, up to `maxRetryMs`. */
  retryMs?: number
  maxRetryMs?: number
}

export class GroupOffsets {
  readonly #o: GroupOffsetsOptions
  readonly #pending = new Map<number, bigint>()
  #sending: Promise<void> | undefined
  #retry: NodeJS.Timeout | undefined
  #scheduled = false
  #failures = 0
  #settled = false

  constructor(options: GroupOffsetsOptions) {
    this.#o = options
  }

  /** The partition's offset goes with the others of this tick (or after the request in flight). */
  commit(partition: number, offset: bigint): void {
    this.#pending.set(partition, offset)
    if (this.#sending || this.#retry || this.#scheduled || this.#settled) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      this.#send()
    })
  }

  /**
   * Waits for the request in flight, then tries once more what is still pending and held; no retry
   * after this. A member calls it before it leaves the group. At most `timeoutMs`: a broker that
   * does not answer must not hold a stopping worker.
   */
  async settle(timeoutMs = 5000): Promise<void> {
    this.#settled = true
    clearTimeout(this.#retry)
    this.#retry = undefined
    const last = (async () => {
      await this.#sending
      this.#send()
      await this.#sending
    })()
    let timer: NodeJS.Timeout | undefined
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs)
    })
    await Promise.race([last, waited])
    clearTimeout(timer)
  }

  #send(): void {
    const offsets = new Map([...this.#pending].filter(([partition]) => this.#o.holds(partition)))
    this.#pending.clear()
    if (offsets.size === 0) return
    this.#sending = this.#o.commit(offsets).then(
      () => {
        if (this.#failures > 0) {
          this.#o.logger.info({ attempts: this.#failures + 1 }, 'group offsets committed after a retry')
        }
        this.#failures = 0
      },
      (error: unknown) => {
        // A newer offset of the partition, come meanwhile, wins over the one that failed.
        for (const [partition, offset] of offsets)
          if (!this.#pending.has(partition)) this.#pending.set(partition, offset)
        if (this.#failures++ === 0) {
          this.#o.logger.warn(
            { err: messageOf(error), partitions: [...offsets.keys()] },
            'could not commit group offsets: trying again while the partitions are held',
          )
        }
      },
    )
    void this.#sending.then(() => {
      this.#sending = undefined
      if (this.#pending.size === 0 || this.#settled) return
      if (this.#failures === 0) {
        this.#send()
        return
      }
      const first = this.#o.retryMs ?? 1000
      const delay = Math.min(first * 2 ** (this.#failures - 1), this.#o.maxRetryMs ?? 30_000)
      this.#retry = setTimeout(() => {
        this.#retry = undefined
        this.#send()
      }, delay)
      this.#retry.unref()
    })
  }
}
