// Topic and offset administration: what the stack, the coordinator and `floe status` ask of Kafka.
import { setTimeout as sleep } from 'node:timers/promises'
import { Admin } from '@platformatic/kafka'
import { FloeError } from '../errors.ts'
import { clientOptions, type KafkaConnection } from './connection.ts'

/** Partition -> offset. Offsets are bigint: Kafka offsets are int64. */
export type PartitionOffsets = Map<number, bigint>

/** A consumer group's state and who holds which partitions of one topic (KafkaAdmin.groupAssignment). */
export interface GroupAssignment {
  state: string
  members: { memberId: string; clientId: string; partitions: number[] }[]
}

// ListOffsets timestamps with special meaning in the Kafka protocol.
const LATEST = -1n
const EARLIEST = -2n
// DescribeConfigs resource type of a topic.
const TOPIC_RESOURCE = 2

export class KafkaAdmin {
  readonly #admin: Admin

  constructor(connection: KafkaConnection) {
    this.#admin = new Admin({ ...clientOptions(connection, 'admin'), retries: 3 })
  }

  /** Creates the topic when missing. Returns its partition count (the existing one if it was there). */
  async ensureTopic(
    topic: string,
    partitions: number,
    configs: Record<string, string> = {},
  ): Promise<{ created: boolean; partitions: number }> {
    const existing = await this.partitionCount(topic)
    if (existing !== undefined) return { created: false, partitions: existing }
    try {
      await this.#admin.createTopics({
        topics: [topic],
        partitions,
        replicas: -1,
        configs: Object.entries(configs).map(([name, value]) => ({ name, value })),
      })
      return { created: true, partitions }
    } catch (error) {
      // Another worker may have created it between our look and our create; the broker may not
      // list it (or know its partitions) for a moment after, so look a few times before failing.
      for (const waitMs of [0, 100, 200, 400, 800, 1600]) {
        if (waitMs > 0) await sleep(waitMs)
        const now = await this.partitionCount(topic)
        if (now !== undefined) return { created: false, partitions: now }
      }
      throw new FloeError('KAFKA_UNAVAILABLE', `could not create topic ${topic}`, { cause: error })
    }
  }

  /** The names of the cluster's topics (a topicPattern's candidates). */
  async topicNames(): Promise<string[]> {
    return this.#admin.listTopics({ includeInternals: false })
  }

  /** The topic's partition count, or undefined when the topic does not exist. */
  async partitionCount(topic: string): Promise<number | undefined> {
    // A topic being deleted can still be listed and already be unknown to the metadata request
    // (the client says so only in an error's text): it is looked for again, and gone is undefined.
    let failure: unknown
    for (const waitMs of [0, 100, 200, 400, 800]) {
      if (waitMs > 0) await sleep(waitMs)
      const topics = await this.#admin.listTopics()
      if (!topics.includes(topic)) return undefined
      try {
        const metadata = await this.#admin.metadata({ topics: [topic], forceUpdate: true })
        return metadata.topics.get(topic)?.partitionsCount
      } catch (error) {
        failure = error
      }
    }
    throw failure
  }

  /**
   * The largest record batch the topic accepts (`max.message.bytes`, which inherits the broker's
   * `message.max.bytes`), or undefined when the broker does not say (no such topic, no rights).
   */
  async maxMessageBytes(topic: string): Promise<number | undefined> {
    try {
      const described = await this.#admin.describeConfigs({
        resources: [{ resourceType: TOPIC_RESOURCE, resourceName: topic, configurationKeys: ['max.message.bytes'] }],
      })
      const value = described[0]?.configs.find((c) => c.name === 'max.message.bytes')?.value
      const bytes = Number(value)
      return value && Number.isInteger(bytes) && bytes > 0 ? bytes : undefined
    } catch {
      return undefined
    }
  }

  async deleteTopic(topic: string): Promise<void> {
    await this.#admin.deleteTopics({ topics: [topic] })
  }

  /** The next offset to be written, per partition (the log end offset). */
  endOffsets(topic: string, partitions: number[]): Promise<PartitionOffsets> {
    return this.#listOffsets(topic, partitions, LATEST)
  }

  /** The first offset still in the log, per partition (moves forward with retention). */
  startOffsets(topic: string, partitions: number[]): Promise<PartitionOffsets> {
    return this.#listOffsets(topic, partitions, EARLIEST)
  }

  /**
   * Per partition, the offset of the first record whose timestamp is at or after `timestampMs`
   * (the broker's ListOffsets by timestamp); undefined for a partition holding no such record.
   */
  async offsetsForTimestamp(
    topic: string,
    partitions: number[],
    timestampMs: number,
  ): Promise<Map<number, bigint | undefined>> {
    const found = await this.#listOffsets(topic, partitions, BigInt(timestampMs))
    const result = new Map<number, bigint | undefined>()
    // The broker answers -1 when no record is that recent.
    for (const partition of partitions) {
      const offset = found.get(partition)
      result.set(partition, offset === undefined || offset < 0n ? undefined : offset)
    }
    return result
  }

  /** The members of a consumer group now: none for a group that is empty or unknown. */
  async groupMembers(group: string): Promise<{ memberId: string; clientId: string; clientHost: string }[]> {
    const described = await this.#admin.describeGroups({ groups: [group] })
    const members = described.get(group)?.members ?? new Map()
    return [...members.values()].map((m) => ({ memberId: m.id, clientId: m.clientId, clientHost: m.clientHost }))
  }

  /**
   * A consumer group as its coordinator broker sees it: its state, and the partitions of `topic`
   * each member holds, by member id.
   */
  async groupAssignment(group: string, topic: string): Promise<GroupAssignment> {
    const described = (await this.#admin.describeGroups({ groups: [group] })).get(group)
    const members = [...(described?.members.values() ?? [])].map((member) => ({
      memberId: member.id,
      clientId: member.clientId,
      partitions: [...(member.assignments?.get(topic)?.partitions ?? [])].sort((a, b) => a - b),
    }))
    return { state: String(described?.state ?? 'unknown'), members }
  }

  /** Sets a group's committed offsets (the group must have no members). */
  async setCommittedOffsets(group: string, topic: string, offsets: PartitionOffsets): Promise<void> {
    await this.#admin.alterConsumerGroupOffsets({
      groupId: group,
      topics: [{ name: topic, partitionOffsets: [...offsets].map(([partition, offset]) => ({ partition, offset })) }],
    })
  }

  async #listOffsets(topic: string, partitions: number[], timestamp: bigint): Promise<PartitionOffsets> {
    const listed = await this.#admin.listOffsets({
      topics: [{ name: topic, partitions: partitions.map((partitionIndex) => ({ partitionIndex, timestamp })) }],
    })
    const result: PartitionOffsets = new Map()
    for (const p of listed.find((t) => t.name === topic)?.partitions ?? []) result.set(p.partitionIndex, p.offset)
    return result
  }

  /**
   * Deletes every record before `offset` in each given partition (what retention does, on demand):
   * the partition's log start moves there. Returns the new log start per partition.
   */
  async deleteRecords(topic: string, before: PartitionOffsets): Promise<PartitionOffsets> {
    const deleted = await this.#admin.deleteRecords({
      topics: [{ name: topic, partitions: [...before].map(([partition, offset]) => ({ partition, offset })) }],
    })
    const result: PartitionOffsets = new Map()
    for (const p of deleted.find((t) => t.name === topic)?.partitions ?? []) result.set(p.partition, p.lowWatermark)
    return result
  }

  /** The group's committed offsets for one topic; partitions without a commit are absent. */
  async committedOffsets(group: string, topic: string): Promise<PartitionOffsets> {
    const groups = await this.#admin.listConsumerGroupOffsets({ groups: [group] })
    const result: PartitionOffsets = new Map()
    for (const t of groups.find((g) => g.groupId === group)?.topics ?? []) {
      if (t.name !== topic) continue
      for (const p of t.partitions) if (p.committedOffset >= 0n) result.set(p.partitionIndex, p.committedOffset)
    }
    return result
  }

  async close(): Promise<void> {
    await this.#admin.close()
  }
}
