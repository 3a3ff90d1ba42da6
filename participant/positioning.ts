// Where a partition's consumer starts (invariant 2): the table's next offset for it; for a
// partition the table has never seen, the group's committed offset, else `auto.offset.reset`
// (default earliest: a sink starting at latest would lose what arrived before its first commit).

import type { RangeOrigin } from '../protocol/index.ts'
import type { KafkaAdmin, TopicReader } from '../shared/kafka/index.ts'

export interface StartingPoint {
  /** The first offset of the new chain of ranges, before recovery or the log start move it. */
  start: bigint
  origin: RangeOrigin
  /** The table's next offset for the partition; undefined when it never saw it. */
  tableOffset: bigint | undefined
  /** The broker's log start: records before it are gone (retention). */
  logStart: bigint
}

/** The broker's side of a partition's starting point, one partition at a time. */
export interface BrokerPositionLookup {
  logStart(partition: number): Promise<bigint>
  logEnd(partition: number): Promise<bigint | undefined>
  /** The group's committed offset; undefined when it has none. */
  committed(partition: number): Promise<bigint | undefined>
}

export interface PositionSources {
  table: { offsets(): Promise<ReadonlyMap<number, bigint>> }
  broker: BrokerPositionLookup
  autoOffsetReset: 'earliest' | 'latest'
}

/**
 * The starting point once the table's offset is known, from the log start asked beside it: the
 * group's offset only for a partition the table never saw, the log end only past that too.
 */
export async function startingPointAfter(
  sources: Omit<PositionSources, 'table'>,
  partition: number,
  tableOffset: bigint | undefined,
  logStartAsked: Promise<bigint>,
): Promise<StartingPoint> {
  const logStart = await logStartAsked
  if (tableOffset !== undefined) return { start: tableOffset, origin: 'table', tableOffset, logStart }
  const group = await sources.broker.committed(partition)
  if (group !== undefined) return { start: group, origin: 'group-offset', tableOffset, logStart }
  const reset = sources.autoOffsetReset === 'earliest' ? logStart : await sources.broker.logEnd(partition)
  return { start: reset ?? 0n, origin: 'offset-reset', tableOffset, logStart }
}

export async function startingPoint(sources: PositionSources, partition: number): Promise<StartingPoint> {
  const logStart = sources.broker.logStart(partition)
  // Both asked at once; a failed table read must not leave the broker's rejection unhandled.
  logStart.catch(() => {})
  const tableOffset = (await sources.table.offsets()).get(partition)
  return startingPointAfter(sources, partition, tableOffset, logStart)
}

/**
 * The broker lookups of every partition that asks in the same turn of the event loop, in one
 * request per kind: an assignment of 1,000 partitions asks for 1,000 starting points at once,
 * and one ListOffsets (with its metadata request) and one OffsetFetch each cost seconds of CPU
 * before the first fetch. A value may be a few milliseconds older than a lone request's; the log
 * start only moves forward, and a fetch below it is answered out of range and the partition is
 * positioned again, as when retention moves between the lookup and the fetch.
 */
export class BrokerPositions implements BrokerPositionLookup {
  readonly #logStarts: Gathered<bigint>
  readonly #logEnds: Gathered<bigint>
  readonly #committed: Gathered<bigint>

  constructor(
    topic: string,
    admin: Pick<KafkaAdmin, 'startOffsets' | 'endOffsets'>,
    reader: Pick<TopicReader, 'committed'>,
  ) {
    this.#logStarts = new Gathered((partitions) => admin.startOffsets(topic, partitions))
    this.#logEnds = new Gathered((partitions) => admin.endOffsets(topic, partitions))
    this.#committed = new Gathered((partitions) => reader.committed(partitions))
  }

  async logStart(partition: number): Promise<bigint> {
    return (await this.#logStarts.get(partition)) ?? 0n
  }
  logEnd(partition: number): Promise<bigint | undefined> {
    return this.#logEnds.get(partition)
  }
  committed(partition: number): Promise<bigint | undefined> {
    return this.#committed.get(partition)
  }
}

interface Waiter<V> {
  resolve(value: V | undefined): void
  reject(error: unknown): void
}

/**
 * Calls for single partitions gathered until `schedule` runs the batch (by default when the event
 * loop turns), then answered by one `askMany` of them all; a call made once the batch has begun
 * waits for the next one. A failed `askMany` fails every call it carried.
 */
export class Gathered<V> {
  readonly #askMany: (partitions: number[]) => Promise<ReadonlyMap<number, V>>
  readonly #schedule: (run: () => Promise<void>) => void
  #waiting = new Map<number, Waiter<V>[]>()

  constructor(
    askMany: (partitions: number[]) => Promise<ReadonlyMap<number, V>>,
    schedule: (run: () => Promise<void>) => void = (run) => setImmediate(run),
  ) {
    this.#askMany = askMany
    this.#schedule = schedule
  }

  get(partition: number): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      if (this.#waiting.size === 0) this.#schedule(() => this.#ask())
      const waiters = this.#waiting.get(partition) ?? []
      waiters.push({ resolve, reject })
      this.#waiting.set(partition, waiters)
    })
  }

  async #ask(): Promise<void> {
    const batch = this.#waiting
    this.#waiting = new Map()
    try {
      const found = await this.#askMany([...batch.keys()])
      for (const [partition, waiters] of batch) for (const waiter of waiters) waiter.resolve(found.get(partition))
    } catch (error) {
      for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error)
    }
  }
}

/** `load` once for every caller of the same turn of the event loop; no caller shares a load begun before it called. */
export function gatheredLoad<T>(load: () => Promise<T>): () => Promise<T> {
  const gathered = new Gathered<T>(async () => new Map([[0, await load()]]))
  return async () => (await gathered.get(0)) as T
}
