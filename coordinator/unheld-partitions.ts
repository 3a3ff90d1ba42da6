// Partitions that no member of the dataset's group holds while the group is Stable: nobody reads
// them, and nothing in the group protocol changes that until some member joins again. Seen on the
// real broker after cooperative rebalances (a revoked partition's hand-over never happened), for
// minutes, until the next worker came or went. The coordinator sees such a partition first, as one
// that stops answering its rounds. UnheldPartitionWatch is the bookkeeping of when to ask the group
// about it (pure); UnheldPartitionGuard asks, and makes the coordinator's own member join again,
// which makes the broker rebalance: every member keeps its partitions, the leader assigns the rest.
import type { ControlLogger } from '../protocol/index.ts'
import { messageOf } from '../shared/index.ts'
import type { GroupAssignment, KafkaAdmin } from '../shared/kafka/index.ts'
import type { FloeMetrics } from '../shared/telemetry/index.ts'

export class UnheldPartitionWatch {
  readonly #afterMs: number
  /** Partition -> when it was first missing from a round, while it stays missing. */
  readonly #missingSince = new Map<number, number>()
  #lookedAt = Number.NEGATIVE_INFINITY

  /** `afterMs`: how long a partition stays missing before the group is asked, and how often at most. */
  constructor(afterMs: number) {
    this.#afterMs = afterMs
  }

  /**
   * A round closed without these partitions. Returns those missing for `afterMs` or longer when
   * the group should be asked about them now (empty: not yet, or asked too recently).
   */
  collected(missing: readonly number[], now: number): number[] {
    for (const partition of this.#missingSince.keys()) {
      if (!missing.includes(partition)) this.#missingSince.delete(partition)
    }
    for (const partition of missing) {
      if (!this.#missingSince.has(partition)) this.#missingSince.set(partition, now)
    }
    if (now - this.#lookedAt < this.#afterMs) return []
    const overdue = missing.filter((partition) => now - (this.#missingSince.get(partition) ?? now) >= this.#afterMs)
    if (overdue.length > 0) this.#lookedAt = now
    return overdue
  }

  /** The coordinator stopped: what it saw is stale when it starts again. */
  reset(): void {
    this.#missingSince.clear()
    this.#lookedAt = Number.NEGATIVE_INFINITY
  }
}

/**
 * Of `partitions`, those held by no member of a Stable group. A group in any other state is
 * rebalancing (or empty, or gone): its assignment is about to change, so none is reported.
 */
export function unheldIn(group: GroupAssignment, partitions: readonly number[]): number[] {
  if (group.state.toLowerCase() !== 'stable') return []
  const held = new Set(group.members.flatMap((member) => member.partitions))
  return partitions.filter((partition) => !held.has(partition))
}

export interface UnheldPartitionGuardOptions {
  dataset: string
  topic: string
  group: string
  admin: KafkaAdmin
  logger: ControlLogger
  metrics: FloeMetrics
  /** Makes the group rebalance (this worker's member joins again); nothing is done when absent. */
  rebalance?: (reason: string) => void
  /** The group's session timeout (default 30 s): a dead member holds its partitions this long. */
  sessionTimeoutMs?: number
  now: () => number
}

export class UnheldPartitionGuard {
  readonly #o: UnheldPartitionGuardOptions
  readonly #watch: UnheldPartitionWatch
  #looking = false

  constructor(options: UnheldPartitionGuardOptions) {
    this.#o = options
    // Two session timeouts: a dead member's partitions are its own for one, then a rebalance moves them.
    this.#watch = new UnheldPartitionWatch(2 * (options.sessionTimeoutMs ?? 30_000))
  }

  /**
   * A round closed without these partitions. Returns the look at the group when one starts (off
   * the round's path: the caller only tracks it); a failed look is logged, and the next is later.
   */
  roundCollected(missing: readonly number[]): Promise<void> | undefined {
    const overdue = this.#watch.collected(missing, this.#o.now())
    if (overdue.length === 0 || this.#looking || !this.#o.rebalance) return undefined
    this.#looking = true
    return this.#look(overdue, this.#o.rebalance).finally(() => {
      this.#looking = false
    })
  }

  reset(): void {
    this.#watch.reset()
  }

  async #look(missing: number[], rebalance: (reason: string) => void): Promise<void> {
    const { admin, dataset, group, topic, logger } = this.#o
    try {
      const unheld = unheldIn(await admin.groupAssignment(group, topic), missing)
      if (unheld.length === 0) return
      logger.warn(
        { dataset, group, unheld },
        'partitions held by no member of the Stable group: joining again so that the group assigns them',
      )
      this.#o.metrics.unheldPartitionRebalances.inc({ dataset })
      rebalance(`partitions [${unheld.join(', ')}] were held by no member`)
    } catch (error) {
      logger.warn({ dataset, group, error: messageOf(error) }, 'could not describe the consumer group')
    }
  }
}

/**
 * A dataset's guards, one per topic, each made when its topic is first looked at (a topicPattern's
 * topics change while the worker runs).
 */
export class UnheldPartitionGuards {
  readonly #options: Omit<UnheldPartitionGuardOptions, 'topic'>
  readonly #byTopic = new Map<string, UnheldPartitionGuard>()

  constructor(options: Omit<UnheldPartitionGuardOptions, 'topic'>) {
    this.#options = options
  }

  of(topic: string): UnheldPartitionGuard {
    let guard = this.#byTopic.get(topic)
    if (!guard) {
      guard = new UnheldPartitionGuard({ ...this.#options, topic })
      this.#byTopic.set(topic, guard)
    }
    return guard
  }

  /** The topics looked at so far. */
  topics(): string[] {
    return [...this.#byTopic.keys()]
  }

  reset(): void {
    for (const guard of this.#byTopic.values()) guard.reset()
  }
}
