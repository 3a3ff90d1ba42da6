// The participant side of one dataset on one worker: one member of the dataset's consumer group,
// subscribed to every topic the dataset reads, and one TopicParticipant per topic that ingests the
// topic's assigned partitions and answers the coordinator's rounds for them. A topic's partitions,
// WAL and WRITE-STATUS are its own, so a dataset of one topic runs as it always did; what the
// topics share is the membership (one join, one rebalance, one leave), the dataset's backpressure
// and its gauges, which count every topic's WAL together.
import type { ControlMessage } from '../protocol/index.ts'
import { type TopicDataset, topicDatasets } from '../shared/config/index.ts'
import { GroupReader } from '../shared/kafka/index.ts'
import type { DatasetParticipantOptions } from './participant-options.ts'
import { TopicParticipant } from './topic-participant.ts'
import { reportWalPressure, type WalGaugeTargets } from './wal-gauges.ts'

export class DatasetParticipant {
  readonly #o: DatasetParticipantOptions
  readonly #reader: GroupReader
  /** In name order: the first topic's partition 0 says who coordinates. */
  #topics: TopicParticipant[]
  /**
   * The topics the dataset reads now, in name order: a topic a topicPattern no longer matches
   * (deleted) keeps its participant, idle without partitions, but no longer names the
   * coordinator's partition 0.
   */
  #matched: readonly string[]
  #running = false
  /** Where the WAL's memory and files are reported (wal-gauges.ts). */
  readonly #gauges: WalGaugeTargets

  constructor(options: DatasetParticipantOptions) {
    this.#o = options
    const { dataset, logger } = options
    const { backpressure, metrics, uploads } = options
    this.#gauges = {
      backpressure,
      reporter: `${dataset.name}/${options.group}`,
      labels: { dataset: dataset.name },
      metrics,
      uploads,
    }
    this.#reader = new GroupReader(
      options.connection,
      {
        groupId: options.group,
        topics: dataset.topics,
        sessionTimeoutMs: options.sessionTimeoutMs ?? 30_000,
      },
      {
        rejoining: (reason) => logger.warn({ reason }, 'joining the consumer group again'),
        handingOn: (revoked, topic) => logger.info({ topic, revoked }, 'partitions revoked: the group hands them on'),
      },
    )
    this.#topics = topicDatasets(dataset).map((topicDataset) => this.#topicParticipant(topicDataset))
    this.#matched = dataset.topics
  }

  #topicParticipant(topicDataset: TopicDataset): TopicParticipant {
    const { logger } = this.#o
    return new TopicParticipant({
      ...this.#o,
      dataset: topicDataset,
      reader: this.#reader.topicReader(topicDataset.topic),
      // one topic: the lines it always wrote; several: each line says which topic
      logger: topicDataset.severalTopics ? logger.child({ topic: topicDataset.topic }) : logger,
      reportWal: () => this.#reportWal(),
    })
  }

  /**
   * The topics a topicPattern matches now. A new one is read from now on: the member subscribes
   * to it and joins again, and it gets a TopicParticipant of its own, started at once.
   */
  follow(topics: readonly string[]): void {
    this.#matched = topics
    this.#reader.subscribe(topics)
    const known = new Set(this.#topics.map((participant) => participant.topic))
    const added = topics.filter((topic) => !known.has(topic))
    if (added.length === 0) return
    const participants = added.map((topic) => this.#topicParticipant({ ...this.#o.dataset, topic }))
    if (this.#running) for (const participant of participants) participant.start()
    this.#topics = [...this.#topics, ...participants].sort((a, b) => (a.topic < b.topic ? -1 : 1))
  }

  /** Joined the group and running every topic's record loop. */
  get ready(): boolean {
    return this.#topics.every((topic) => topic.ready)
  }

  /** The member id and group generation of this moment, as every WRITE-STATUS states them. */
  membership(): { memberId: string; generation: number } {
    return { memberId: this.#reader.memberId, generation: this.#reader.generation }
  }

  /** Makes the dataset's group rebalance; this member keeps its partitions (GroupReader.rebalance). */
  rebalance(reason: string): void {
    this.#reader.rebalance(reason)
  }

  /**
   * Partitions of the dataset's first topic (name order) this member ingests now: the one that
   * holds partition 0 runs the dataset's coordinator.
   */
  get assigned(): number[] {
    return this.#topics.find((participant) => this.#matched.includes(participant.topic))?.assigned ?? []
  }

  /** The topics the dataset reads now, in name order (a topicPattern's change as it is followed). */
  get topics(): readonly string[] {
    return this.#matched
  }

  async start(): Promise<void> {
    await this.#reader.join()
    this.#running = true
    for (const topic of this.#topics) topic.start()
  }

  /** A control message: START, END and ACK of this dataset and group go to every topic's partitions. */
  async receive(message: ControlMessage): Promise<void> {
    for (const topic of this.#topics) await topic.receive(message)
  }

  /**
   * Stops every topic's record loop and partitions: open segments rotate into ready files that a
   * restart reuses (docs/design.md "Rotate ... shutdown"). With `leave`, the group is left at once so
   * the partitions move to other members; without, the membership lasts until the process ends
   * and its session times out (the Kafka client leaves whenever it closes its consumer).
   */
  async stop(options: { leave: boolean }): Promise<void> {
    this.#running = false
    await Promise.all(this.#topics.map((topic) => topic.stop()))
    if (options.leave) await this.#reader.leave().catch(() => {})
  }

  /** Tells the backpressure monitor the dataset's share, and the gauges: every topic's WAL together. */
  #reportWal(): void {
    reportWalPressure(
      this.#topics.flatMap((topic) => [...topic.walHolders()]),
      this.#gauges,
    )
  }
}
