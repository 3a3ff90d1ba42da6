// A dataset whose partition 0 no member of the Stable group holds has no coordinator, so no rounds:
// nothing then runs the coordinator's own guard against unheld partitions, and nothing in the group
// protocol changes it until some member joins again (seen on the real broker after every session
// expired at once behind a frozen broker: partitions 0 and 2 were read by no one for good). Every
// worker that does not coordinate the dataset therefore listens for its rounds: when no control
// message of the dataset came for two commit intervals, it counts partition 0 as missing from a
// round, and an UnheldPartitionGuard of its own asks the group after two session timeouts of that
// and makes it rebalance when partition 0 is held by no one.
import type { UnheldPartitionGuard } from '../coordinator/index.ts'

/** What the silence needs of a guard: a round's missing partitions, as the coordinator reports them. */
export type MissingPartitions = Pick<UnheldPartitionGuard, 'roundCollected'>

export class CoordinatorSilence {
  readonly #silenceMs: number
  readonly #now: () => number
  /** Per first topic of the dataset (a topicPattern's can change), the guard that asks its group. */
  readonly #guardOf: (topic: string) => MissingPartitions
  #heardAt: number

  /** `silenceMs`: how long without a control message of the dataset counts as no coordinator. */
  constructor(guardOf: (topic: string) => MissingPartitions, silenceMs: number, now: () => number = Date.now) {
    this.#guardOf = guardOf
    this.#silenceMs = silenceMs
    this.#now = now
    this.#heardAt = now()
  }

  /** A control message of the dataset came: some worker coordinates it. */
  heard(): void {
    this.#heardAt = this.#now()
  }

  /**
   * One look, on the worker's ownership tick. Returns the group's description when the guard starts
   * one (the caller does not wait for it); a worker that coordinates the dataset hears itself.
   */
  tick(firstTopic: string | undefined, coordinating: boolean): Promise<void> | undefined {
    if (coordinating) this.heard()
    if (firstTopic === undefined) return undefined
    const silent = this.#now() - this.#heardAt >= this.#silenceMs
    return this.#guardOf(firstTopic).roundCollected(silent ? [0] : [])
  }
}
