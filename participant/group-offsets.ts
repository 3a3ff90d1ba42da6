// The Kafka group offsets of a dataset's partitions, committed after each ACK for lag monitoring
// and autoscaling only (invariant 6: the table, not the group, says where a partition resumes).
// The ACKs of one round arrive together: their offsets go in one request, on the next tick.
import { messageOf } from '../shared/index.ts'
import type { Logger } from '../shared/telemetry/index.ts'

export interface GroupOffsetsOptions {
  commit(offsets: ReadonlyMap<number, bigint>): Promise<void>
  logger: Logger
}

export class GroupOffsets {
  readonly #o: GroupOffsetsOptions
  readonly #pending = new Map<number, bigint>()

  constructor(options: GroupOffsetsOptions) {
    this.#o = options
  }

  /** The partition's offset goes with the others of this tick; a failure is logged, not retried. */
  commit(partition: number, offset: bigint): void {
    const first = this.#pending.size === 0
    this.#pending.set(partition, offset)
    if (!first) return
    setImmediate(() => {
      const offsets = new Map(this.#pending)
      this.#pending.clear()
      this.#o.commit(offsets).catch((error: unknown) => {
        this.#o.logger.warn({ err: messageOf(error) }, 'could not commit group offsets (lag metrics only)')
      })
    })
  }
}
