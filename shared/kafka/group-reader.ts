// Reading one topic as a member of a consumer group, with positions the caller owns. Built on the
// client's joinGroup() + fetch() rather than its stream (docs/decisions.md, bench/kafka-clients):
// the stream cannot seek a partition or pause one, while here a seek is writing the position the
// caller passes, and a paused partition is one the caller leaves out of the next fetch. The group
// only says which partitions are ours; Floe's progress lives in the Iceberg table.
import { Consumer, type RecordsBatch } from '@platformatic/kafka'
import { FloeError } from '../errors.ts'
import { clientOptions, type KafkaConnection } from './connection.ts'

export type { RecordsBatch }

/**
 * Given to the client at construction as well as to join(): the client rejoins by itself (a commit
 * or heartbeat during a rebalance) with its constructor's protocols, and a rejoin with its default
 * (roundrobin) fails against the group's cooperative-sticky members, or switches a group of one.
 */
const PROTOCOLS = [{ name: 'cooperative-sticky', version: 3 }]

/** Bit 5 of a record batch's attributes: a transaction marker, not data. */
const IS_CONTROL = 1 << 5
// Kafka's fetch isolation levels.
const READ_COMMITTED = 1
// Kafka error codes a fetch answers per partition.
const OFFSET_OUT_OF_RANGE = 1

export interface FetchedPartition {
  partition: number
  /** The position asked for; records before it in the first batch are to be skipped. */
  from: bigint
  /** Data batches (transaction markers removed); their records from `from` on are new. */
  batches: RecordsBatch[]
  /** Where the next fetch of this partition starts: past every batch returned, markers included. */
  next: bigint
  logStartOffset: bigint
  highWatermark: bigint
  /** The position is outside the log (e.g. deleted by retention): the caller decides where to go. */
  outOfRange: boolean
}

export interface GroupReaderSettings {
  groupId: string
  topic: string
  sessionTimeoutMs?: number
  rebalanceTimeoutMs?: number
  heartbeatIntervalMs?: number
  /** Bytes one partition may return per fetch (the client's default lets one partition fill it all). */
  maxBytesPerPartition?: number
  maxBytes?: number
  maxWaitMs?: number
}

export class GroupReader {
  readonly #consumer: Consumer<Buffer, Buffer, Buffer, Buffer>
  readonly #settings: Required<GroupReaderSettings>
  #topicId: string | undefined
  #leaders = new Map<number, number>()
  #partitionCount = 0
  /** Set when the client's own rejoin failed: this member is out of the group until join works. */
  #lost: Error | undefined
  #rejoining = false

  constructor(connection: KafkaConnection, settings: GroupReaderSettings) {
    const sessionTimeoutMs = settings.sessionTimeoutMs ?? 30_000
    this.#settings = {
      sessionTimeoutMs,
      rebalanceTimeoutMs: 60_000,
      // Three heartbeats per session: one lost or late heartbeat never costs the partitions.
      heartbeatIntervalMs: Math.min(3_000, Math.floor(sessionTimeoutMs / 3)),
      maxBytesPerPartition: 1024 * 1024,
      maxBytes: 50 * 1024 * 1024,
      maxWaitMs: 500,
      ...settings,
    }
    this.#consumer = new Consumer({
      ...clientOptions(connection, 'reader'),
      groupId: settings.groupId,
      autocommit: false,
      sessionTimeout: this.#settings.sessionTimeoutMs,
      heartbeatInterval: this.#settings.heartbeatIntervalMs,
      rebalanceTimeout: this.#settings.rebalanceTimeoutMs,
      protocols: PROTOCOLS,
    })
    // The client rejoins by itself when a heartbeat says the group moved on; when that rejoin
    // fails (the broker restarted, or was unreachable past the client's retries) it emits
    // 'error', which with no listener ends the process. The member is then out of the group:
    // assigned() says so and joins again.
    this.#consumer.on('error', (error: Error) => {
      this.#lost = error
    })
  }

  get memberId(): string {
    return this.#consumer.memberId ?? ''
  }

  get generation(): number {
    return this.#consumer.generationId
  }

  get partitionCount(): number {
    return this.#partitionCount
  }

  /** Joins the group (cooperative-sticky: a rebalance moves only the partitions that must move). */
  async join(): Promise<void> {
    await this.#refreshMetadata()
    this.#consumer.topics.track(this.#settings.topic)
    await this.#consumer.joinGroup({
      sessionTimeout: this.#settings.sessionTimeoutMs,
      heartbeatInterval: this.#settings.heartbeatIntervalMs,
      rebalanceTimeout: this.#settings.rebalanceTimeoutMs,
      protocols: PROTOCOLS,
    })
  }

  /**
   * The partitions of the topic this member owns now. Read it before every fetch: the client
   * updates it as heartbeats bring a new assignment, before any event says so.
   */
  assigned(): number[] {
    if (this.#lost) {
      this.#rejoin()
      return []
    }
    const assignment = this.#consumer.assignments?.find((a) => a.topic === this.#settings.topic)
    return assignment ? [...assignment.partitions].sort((a, b) => a - b) : []
  }

  /** Out of the group since a failed rejoin: no partition is ours until a join succeeds. */
  get lost(): Error | undefined {
    return this.#lost
  }

  // One join at a time; a failed one leaves #lost set, so the next assigned() tries again (the
  // client's own retries space the attempts).
  #rejoin(): void {
    if (this.#rejoining) return
    this.#rejoining = true
    this.join().then(
      () => {
        this.#lost = undefined
        this.#rejoining = false
      },
      (error: unknown) => {
        this.#lost = error instanceof Error ? error : new Error(String(error))
        this.#rejoining = false
      },
    )
  }

  async #refreshMetadata(): Promise<void> {
    const metadata = await this.#consumer.metadata({ topics: [this.#settings.topic], forceUpdate: true })
    const topic = metadata.topics.get(this.#settings.topic)
    if (!topic) throw new FloeError('KAFKA_UNAVAILABLE', `topic ${this.#settings.topic} does not exist`)
    this.#topicId = topic.id
    this.#partitionCount = topic.partitionsCount
    this.#leaders = new Map(topic.partitions.map((p, index) => [index, p.leader]))
  }

  /**
   * Fetches from each partition of `positions` at its position, in one request per leader.
   * Partitions the caller leaves out are not read (that is how a partition is paused).
   */
  async fetch(positions: ReadonlyMap<number, bigint>): Promise<FetchedPartition[]> {
    if (positions.size === 0) return []
    if (!this.#topicId) await this.#refreshMetadata()
    const byLeader = new Map<number, number[]>()
    for (const partition of positions.keys()) {
      const leader = this.#leaders.get(partition)
      if (leader === undefined) {
        await this.#refreshMetadata()
        break
      }
      byLeader.set(leader, [...(byLeader.get(leader) ?? []), partition])
    }
    const results: FetchedPartition[] = []
    await Promise.all(
      [...byLeader].map(async ([node, partitions]) => {
        try {
          results.push(...(await this.#fetchFrom(node, partitions, positions)))
        } catch (error) {
          // A leader moved or a connection broke: learn the cluster again, the caller retries.
          await this.#refreshMetadata().catch(() => {})
          if (!(error instanceof Error)) throw error
          throw new FloeError('KAFKA_UNAVAILABLE', `fetch from broker ${node} failed: ${error.message}`, {
            cause: error,
          })
        }
      }),
    )
    return results
  }

  async #fetchFrom(
    node: number,
    partitions: number[],
    positions: ReadonlyMap<number, bigint>,
  ): Promise<FetchedPartition[]> {
    const response = await this.#consumer.fetch({
      node,
      maxWaitTime: this.#settings.maxWaitMs,
      maxBytes: this.#settings.maxBytes,
      isolationLevel: READ_COMMITTED,
      topics: [
        {
          topicId: this.#topicId ?? '',
          partitions: partitions.map((partition) => ({
            partition,
            fetchOffset: positions.get(partition) ?? 0n,
            partitionMaxBytes: this.#settings.maxBytesPerPartition,
            currentLeaderEpoch: -1,
            lastFetchedEpoch: -1,
          })),
        },
      ],
    })
    const out: FetchedPartition[] = []
    for (const topic of response.responses) {
      for (const p of topic.partitions) {
        const from = positions.get(p.partitionIndex)
        // An incremental fetch session may answer for partitions not asked for this time.
        if (from === undefined || !partitions.includes(p.partitionIndex)) continue
        let next = from
        const batches: RecordsBatch[] = []
        for (const batch of p.records ?? []) {
          const end = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n
          if (end <= from) continue
          if (end > next) next = end
          if ((batch.attributes & IS_CONTROL) === 0) batches.push(batch)
        }
        out.push({
          partition: p.partitionIndex,
          from,
          batches,
          next,
          logStartOffset: p.logStartOffset,
          highWatermark: p.highWatermark,
          outOfRange: p.errorCode === OFFSET_OUT_OF_RANGE,
        })
      }
    }
    return out
  }

  /** Commits the group's offsets (partition -> next offset to read): lag monitoring only. */
  async commit(offsets: ReadonlyMap<number, bigint>): Promise<void> {
    if (offsets.size === 0) return
    await this.#consumer.commit({
      offsets: [...offsets].map(([partition, offset]) => ({
        topic: this.#settings.topic,
        partition,
        offset,
        leaderEpoch: -1,
      })),
    })
  }

  /** The group's committed offsets for the topic's partitions (positions for partitions the table never saw). */
  async committed(partitions: number[]): Promise<Map<number, bigint>> {
    const offsets = await this.#consumer.listCommittedOffsets({ topics: [{ topic: this.#settings.topic, partitions }] })
    const list = offsets.get(this.#settings.topic) ?? []
    const result = new Map<number, bigint>()
    for (const partition of partitions) {
      const offset = list[partition]
      if (offset !== undefined && offset >= 0n) result.set(partition, offset)
    }
    return result
  }

  /** Leaves the group at once, so the partitions move to the other members without a session timeout. */
  async leave(): Promise<void> {
    try {
      await this.#consumer.leaveGroup()
    } finally {
      await this.#consumer.close(true)
    }
  }
}
