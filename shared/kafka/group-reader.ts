// Reading a dataset's topics as one member of a consumer group, with positions the caller owns. Built on the
// client's joinGroup() + fetch() rather than its stream (docs/decisions.md, bench/kafka-clients):
// the stream cannot seek a partition or pause one, while here a seek is writing the position the
// caller passes, and a paused partition is one the caller leaves out of the next fetch. The group
// only says which partitions are ours; Floe's progress lives in the Iceberg table.
import { Consumer, type RecordsBatch } from '@platformatic/kafka'
import { FloeError, messageOf } from '../errors.ts'
import type { OpenAborts } from './aborted-transactions.ts'
import { clientOptions, type KafkaConnection } from './connection.ts'
import { type FetchedPartition, readFetchResponse, responseOf } from './fetch-response.ts'

export type { FetchedPartition, RecordsBatch }

/**
 * Given to the client at construction as well as to join(): the client rejoins by itself (a commit
 * or heartbeat during a rebalance) with its constructor's protocols, and a rejoin with its default
 * (roundrobin) fails against the group's cooperative-sticky members, or switches a group of one.
 */
const PROTOCOLS = [{ name: 'cooperative-sticky', version: 3 }]

// Kafka's fetch isolation levels.
const READ_COMMITTED = 1

/**
 * The client retries a fetch whole when one partition answers with a retriable error (not leader,
 * …), and the other partitions of the request wait for it. Floe handles those per partition
 * itself once the client gives up, so a fetch's retries are quick; other operations keep the
 * client's pace.
 */
const retryDelayOf = (_client: unknown, operation: string): number => (operation === 'fetch' ? 50 : 1000)

/** The topic, or the topics, the member subscribes to (one membership reads them all). */
export type GroupReaderTopics = { topic: string } | { topics: readonly string[] }

export type GroupReaderSettings = GroupReaderTopics & GroupReaderTuning

export interface GroupReaderTuning {
  groupId: string
  sessionTimeoutMs?: number
  rebalanceTimeoutMs?: number
  heartbeatIntervalMs?: number
  /** Bytes one partition may return per fetch (the client's default lets one partition fill it all). */
  maxBytesPerPartition?: number
  /**
   * Bytes one fetch() may bring in, over every broker it asks (each request gets its share). What
   * a poll holds in memory (the responses, then their decoded rows) stays this size however many
   * partitions and brokers there are: past maxBytes / maxBytesPerPartition partitions, this is
   * the bound, not the per-partition one.
   */
  maxBytes?: number
  maxWaitMs?: number
}

/** What the reader tells its owner about, for the log. */
export interface GroupReaderEvents {
  /** The member is out of the group and joins again: why. */
  rejoining?: (reason: string) => void
  /** A rebalance took these partitions from the member, which joins again so the group hands them on. */
  handingOn?: (revoked: number[], topic: string) => void
}

/**
 * One topic of the member's subscription: what a topic's participant reads through. The
 * membership (join, leave) stays with the GroupReader that made it.
 */
export interface TopicReader {
  readonly topic: string
  readonly memberId: string
  readonly generation: number
  readonly partitionCount: number
  assigned(): number[]
  fetch(positions: ReadonlyMap<number, bigint>): Promise<FetchedPartition[]>
  commit(offsets: ReadonlyMap<number, bigint>): Promise<void>
  committed(partitions: number[]): Promise<Map<number, bigint>>
}

/** What the reader knows of one topic from the cluster's metadata. */
interface TopicMetadata {
  id: string
  partitionCount: number
  leaders: Map<number, number>
}

export class GroupReader {
  readonly #consumer: Consumer<Buffer, Buffer, Buffer, Buffer>
  readonly #settings: Required<GroupReaderTuning>
  /** The subscription, in the order given (a topicPattern's new topics at the end). */
  readonly #topics: string[]
  readonly #metadata = new Map<string, TopicMetadata>()
  /** Per topic and partition: producers whose aborted transaction the last response left open, and where. */
  readonly #openAborts = new Map<string, Map<number, OpenAborts>>()
  readonly #events: GroupReaderEvents
  /** Set when the client's own rejoin failed: this member is out of the group until join works. */
  #lost: Error | undefined
  #rejoining = false
  /** Between a join that worked and leave(): the member should be heartbeating. */
  #member = false
  /** When the client was first seen neither heartbeating nor joining, while a member. */
  #silentSince: number | undefined
  /** Per topic, the partitions assigned() answered last. */
  readonly #held = new Map<string, readonly number[]>()
  /** Set while revoked partitions wait for the group to hand them on (#handOn). */
  #handOnCheck: NodeJS.Timeout | undefined
  /** The generation of the last join that ended without taking partitions (the client's event). */
  #settledGeneration: number | undefined

  constructor(connection: KafkaConnection, settings: GroupReaderSettings, events: GroupReaderEvents = {}) {
    this.#events = events
    this.#topics = 'topics' in settings ? [...settings.topics] : [settings.topic]
    if (this.#topics.length === 0) throw new FloeError('INVARIANT_BROKEN', 'a group reader needs a topic')
    for (const topic of this.#topics) this.#openAborts.set(topic, new Map())
    const sessionTimeoutMs = settings.sessionTimeoutMs ?? 30_000
    this.#settings = {
      sessionTimeoutMs,
      rebalanceTimeoutMs: 60_000,
      // Three heartbeats per session: one lost or late heartbeat never costs the partitions.
      heartbeatIntervalMs: Math.min(3_000, Math.floor(sessionTimeoutMs / 3)),
      maxBytesPerPartition: 1024 * 1024,
      // Counted compressed: a fetch of lz4- or zstd-compressed JSON holds 3-5 times this once its
      // batches are decompressed, then its decoded rows. 8 MiB keeps that under about 100 MiB and
      // still brings thousands of records per poll (measured at 256 partitions: 50 MiB here held
      // 268 MiB of Buffers at the peak).
      maxBytes: 8 * 1024 * 1024,
      maxWaitMs: 500,
      ...withoutTopics(settings),
    }
    this.#consumer = new Consumer({
      ...clientOptions(connection, 'reader'),
      groupId: settings.groupId,
      autocommit: false,
      sessionTimeout: this.#settings.sessionTimeoutMs,
      heartbeatInterval: this.#settings.heartbeatIntervalMs,
      rebalanceTimeout: this.#settings.rebalanceTimeoutMs,
      protocols: PROTOCOLS,
      retryDelay: retryDelayOf,
    })
    // The client rejoins by itself when a heartbeat says the group moved on; when that rejoin
    // fails (the broker restarted, or was unreachable past the client's retries) it emits
    // 'error', which with no listener ends the process. The member is then out of the group:
    // assigned() says so and joins again.
    this.#consumer.on('error', (error: Error) => {
      this.#lost = error
    })
    // A join whose assignment took partitions away is followed by the client's own join, not by
    // this event; so a generation it names is one in which the group handed revoked partitions on.
    this.#consumer.on('consumer:group:join', (joined: { generationId?: number }) => {
      this.#settledGeneration = joined.generationId
    })
  }

  get memberId(): string {
    return this.#consumer.memberId ?? ''
  }

  get generation(): number {
    return this.#consumer.generationId
  }

  /** The partition count of the topic (of the only one when no topic is named), as last learnt. */
  partitionCount(topic = this.#only()): number {
    return this.#metadata.get(topic)?.partitionCount ?? 0
  }

  get topics(): readonly string[] {
    return this.#topics
  }

  /**
   * Reads these topics too (a topicPattern matches them now). One the group does not assign yet
   * (new, or deleted and made again) makes the member join again, so the group's leader assigns its
   * partitions; every member keeps the ones it has.
   */
  subscribe(topics: readonly string[]): void {
    for (const topic of topics) {
      if (this.#topics.includes(topic)) continue
      this.#topics.push(topic)
      this.#openAborts.set(topic, new Map())
    }
    const untracked = topics.filter((topic) => !this.#consumer.topics.has(topic))
    if (untracked.length > 0) this.rebalance(`subscribed to ${untracked.join(', ')}`)
  }

  /** One topic of the subscription, to read through. */
  topicReader(topic: string): TopicReader {
    if (!this.#topics.includes(topic)) throw new FloeError('INVARIANT_BROKEN', `topic ${topic} is not subscribed`)
    const reader = this
    return {
      topic,
      get memberId() {
        return reader.memberId
      },
      get generation() {
        return reader.generation
      },
      get partitionCount() {
        return reader.partitionCount(topic)
      },
      assigned: () => this.assigned(topic),
      fetch: (positions) => this.fetch(positions, topic),
      commit: (offsets) => this.commit(offsets, topic),
      committed: (partitions) => this.committed(partitions, topic),
    }
  }

  /** The topic a call without one means: a reader of several topics is always told which. */
  #only(): string {
    const [first] = this.#topics
    if (first === undefined || this.#topics.length > 1)
      throw new FloeError('INVARIANT_BROKEN', 'a reader of several topics was not told which one')
    return first
  }

  /** Joins the group (cooperative-sticky: a rebalance moves only the partitions that must move). */
  async join(): Promise<void> {
    const found = await this.#refreshMetadata()
    if (found === 0) throw new FloeError('KAFKA_UNAVAILABLE', `topic ${this.#topics.join(', ')} does not exist`)
    // The subscription is the topics that exist now: a deleted one (a topicPattern's) is left out
    // until it is made again, as the group's assignor has no partitions to give of it.
    const subscribed = this.#consumer.topics
    for (const topic of this.#topics) {
      if (this.#metadata.has(topic)) {
        if (!subscribed.has(topic)) subscribed.track(topic)
      } else {
        while (subscribed.has(topic)) subscribed.untrack(topic)
      }
    }
    try {
      await this.#consumer.joinGroup({
        sessionTimeout: this.#settings.sessionTimeoutMs,
        heartbeatInterval: this.#settings.heartbeatIntervalMs,
        rebalanceTimeout: this.#settings.rebalanceTimeoutMs,
        protocols: PROTOCOLS,
      })
      this.#member = true
    } catch (error) {
      // The client gives up after its own retries with a code of its own: to the operator that is
      // a broker out of reach, in our taxonomy like every other.
      throw new FloeError('KAFKA_UNAVAILABLE', `join group ${this.#settings.groupId}: ${messageOf(error)}`, {
        cause: error,
      })
    }
  }

  /**
   * The partitions of the topic this member owns now. Read it before every fetch: the client
   * updates it as heartbeats bring a new assignment, before any event says so.
   */
  assigned(topic = this.#only()): number[] {
    if (this.#lost) {
      this.#rejoin(`the client's own rejoin failed: ${this.#lost.message}`)
      this.#held.set(topic, [])
      return []
    }
    this.#watchMembership()
    const assignment = this.#consumer.assignments?.find((a) => a.topic === topic)
    const partitions = assignment ? [...assignment.partitions].sort((a, b) => a - b) : []
    this.#handOn(topic, partitions)
    this.#held.set(topic, partitions)
    return partitions
  }

  /**
   * A cooperative rebalance moves a partition in two: the first takes it from its owner and gives
   * it to no one, and the owner, once it let go, joins again so that a second hands it on. The
   * client does not always send that second join: on the real broker a group was seen Stable with
   * the partitions a new member should have had assigned to no member, for as long as nothing else
   * made the group rebalance (minutes: no one read them). So the member that lost partitions joins
   * again itself when the group has not moved on from the generation that revoked them two
   * heartbeat intervals later (the others join at their next heartbeat). Not at once: a join of
   * ours after the client's own made the broker rebalance once more, and the assignment then
   * moved partitions no member had to give up, each move a generation of its own (a second
   * member joining settled at generation 5 after 5.6-5.7 s, against 3 and one heartbeat interval
   * without it: docs/decisions.md).
   */
  #handOn(topic: string, now: readonly number[]): void {
    const revoked = (this.#held.get(topic) ?? []).filter((partition) => !now.includes(partition))
    if (revoked.length === 0 || !this.#member || this.#rejoining) return
    this.#events.handingOn?.(revoked, topic)
    const generation = this.generation
    // seen late, after the client's own join settled: handed on already
    if (this.#handOnCheck || this.#settledGeneration === generation) return
    this.#handOnCheck = setTimeout(() => {
      this.#handOnCheck = undefined
      if (this.#member && this.generation === generation) {
        this.#rejoin(`the group did not hand on revoked partitions from generation ${generation}`)
      }
    }, 2 * this.#settings.heartbeatIntervalMs)
    this.#handOnCheck.unref()
  }

  /** Out of the group since a failed rejoin: no partition is ours until a join succeeds. */
  get lost(): Error | undefined {
    return this.#lost
  }

  /**
   * The client can fall out of the group without a word: when an offset commit finds the member
   * expired (every session timed out at once behind a frozen broker), it rejoins on its own, and
   * when that rejoin fails the error goes to the commit alone. The member is then without
   * partitions and without heartbeats, so nothing would bring it back. A member whose client has
   * not been heartbeating for a session timeout joins again; should the client's own join still be
   * under way, the two share its JoinGroup request (the client sends one at a time), at worst
   * costing the group one more rebalance.
   */
  #watchMembership(): void {
    if (!this.#member || this.#rejoining || this.#consumer.isActive()) {
      this.#silentSince = undefined
      return
    }
    const now = Date.now()
    this.#silentSince ??= now
    if (now - this.#silentSince < this.#settings.sessionTimeoutMs) return
    this.#silentSince = undefined
    this.#rejoin(`the client has not heartbeated for a session timeout (${this.#settings.sessionTimeoutMs} ms)`)
  }

  /**
   * Makes the group rebalance by joining again (the broker rebalances on it: the subscription
   * states the generation the member last synced, so it differs from the one the group holds);
   * the assignment is sticky, so this member keeps its partitions, and the leader assigns those
   * that no member holds. A join already under way is shared instead.
   */
  rebalance(reason: string): void {
    if (this.#member) this.#rejoin(reason)
  }

  // One join at a time; a failed one leaves #lost set, so the next assigned() tries again (the
  // client's own retries space the attempts).
  #rejoin(reason?: string): void {
    if (this.#rejoining) return
    this.#rejoining = true
    if (reason !== undefined) this.#events.rejoining?.(reason)
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

  /**
   * Learns every subscribed topic's partitions and leaders; returns how many exist. A topic that
   * does not (deleted since it matched a topicPattern) is forgotten: a fetch of it fails, the
   * others' go on.
   */
  async #refreshMetadata(): Promise<number> {
    let answers: { topics: Map<string, { id: string; partitionsCount: number; partitions: { leader: number }[] }> }[]
    try {
      answers = [await this.#consumer.metadata({ topics: [...this.#topics], forceUpdate: true })]
    } catch (error) {
      // One unknown topic fails the whole request: with several, each is asked alone.
      if (this.#topics.length === 1) throw error
      const each = await Promise.allSettled(
        this.#topics.map((topic) => this.#consumer.metadata({ topics: [topic], forceUpdate: true })),
      )
      answers = each.flatMap((answer) => (answer.status === 'fulfilled' ? [answer.value] : []))
      if (answers.length === 0) throw error
    }
    for (const name of this.#topics) {
      const topic = answers.map((answer) => answer.topics.get(name)).find((found) => found !== undefined)
      if (!topic) {
        this.#metadata.delete(name)
        continue
      }
      this.#metadata.set(name, {
        id: topic.id,
        partitionCount: topic.partitionsCount,
        leaders: new Map(topic.partitions.map((p, index) => [index, p.leader])),
      })
    }
    return this.#metadata.size
  }

  /**
   * Fetches from each partition of `positions` at its position, in one request per leader.
   * Partitions the caller leaves out are not read (that is how a partition is paused). A partition
   * that answers with an error comes back with that error and nothing read (out of range: flagged
   * for the caller; not leader and the like: the cluster is learned again for the next fetch);
   * the other partitions of the same request are read as usual (docs/design.md invariant 10).
   */
  async fetch(positions: ReadonlyMap<number, bigint>, topic = this.#only()): Promise<FetchedPartition[]> {
    if (positions.size === 0) return []
    const known = this.#metadata.get(topic)
    if (!known || [...positions.keys()].some((p) => !known.leaders.has(p))) await this.#refreshMetadata()
    const metadata = this.#metadata.get(topic)
    if (!metadata) throw new FloeError('KAFKA_UNAVAILABLE', `topic ${topic} does not exist`)
    const openAborts = this.#openAborts.get(topic) ?? new Map<number, OpenAborts>()
    const byLeader = new Map<number, Map<number, bigint>>()
    for (const [partition, position] of positions) {
      const leader = metadata.leaders.get(partition)
      // No leader now (an election is under way): left out until the metadata names one.
      if (leader === undefined || leader < 0) continue
      const asked = byLeader.get(leader) ?? new Map<number, bigint>()
      asked.set(partition, position)
      byLeader.set(leader, asked)
    }
    const results: FetchedPartition[] = []
    let staleMetadata = false
    await Promise.all(
      [...byLeader].map(async ([node, asked]) => {
        try {
          const response = await this.#fetchFrom(node, metadata.id, asked, byLeader.size)
          const read = readFetchResponse(response, asked, openAborts)
          results.push(...read.partitions)
          staleMetadata ||= read.staleMetadata
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
    if (staleMetadata) await this.#refreshMetadata().catch(() => {})
    return results
  }

  /** One fetch request to one broker; a response whose only errors are per partition is returned, not thrown. */
  async #fetchFrom(node: number, topicId: string, asked: ReadonlyMap<number, bigint>, leaders: number) {
    try {
      return await this.#consumer.fetch({
        node,
        maxWaitTime: this.#settings.maxWaitMs,
        maxBytes: Math.max(this.#settings.maxBytesPerPartition, Math.floor(this.#settings.maxBytes / leaders)),
        isolationLevel: READ_COMMITTED,
        topics: [
          {
            topicId,
            partitions: [...asked].map(([partition, fetchOffset]) => ({
              partition,
              fetchOffset,
              partitionMaxBytes: this.#settings.maxBytesPerPartition,
              currentLeaderEpoch: -1,
              lastFetchedEpoch: -1,
            })),
          },
        ],
      })
    } catch (error) {
      const response = responseOf(error)
      if (!response) throw error
      return response
    }
  }

  /** Commits the group's offsets (partition -> next offset to read): lag monitoring only. */
  async commit(offsets: ReadonlyMap<number, bigint>, topic = this.#only()): Promise<void> {
    if (offsets.size === 0) return
    await this.#consumer.commit({
      offsets: [...offsets].map(([partition, offset]) => ({
        topic,
        partition,
        offset,
        leaderEpoch: -1,
      })),
    })
  }

  /** The group's committed offsets for the topic's partitions (positions for partitions the table never saw). */
  async committed(partitions: number[], topic = this.#only()): Promise<Map<number, bigint>> {
    const offsets = await this.#consumer.listCommittedOffsets({ topics: [{ topic, partitions }] })
    const list = offsets.get(topic) ?? []
    const result = new Map<number, bigint>()
    for (const partition of partitions) {
      const offset = list[partition]
      if (offset !== undefined && offset >= 0n) result.set(partition, offset)
    }
    return result
  }

  /** Leaves the group at once, so the partitions move to the other members without a session timeout. */
  async leave(): Promise<void> {
    this.#member = false
    clearTimeout(this.#handOnCheck)
    this.#handOnCheck = undefined
    try {
      await this.#consumer.leaveGroup()
    } finally {
      await this.#consumer.close(true)
    }
  }
}

function withoutTopics(settings: GroupReaderSettings): GroupReaderTuning {
  const {
    topic: _topic,
    topics: _topics,
    ...tuning
  } = settings as GroupReaderTuning & { topic?: string; topics?: string[] }
  return tuning
}
