// Topic housekeeping for the bench, done with @platformatic/kafka's Admin (the client the product
// already depends on). Internal to this bench.
import { Admin } from '@platformatic/kafka'
import { allPartitions, bootstrapBrokers, partitionCount, topicPrefix } from './common.ts'

export class BenchAdmin {
  readonly #admin = new Admin({ clientId: 'bench-kc-admin', bootstrapBrokers: bootstrapBrokers() })

  async createTopic(topic: string, partitions = partitionCount): Promise<void> {
    await this.#admin.createTopics({ topics: [topic], partitions, replicas: 1 })
  }

  async deleteTopics(topics: string[]): Promise<void> {
    if (topics.length > 0) await this.#admin.deleteTopics({ topics })
  }

  /** Every topic this bench ever created and did not delete (after a crash, say). */
  async leftoverTopics(): Promise<string[]> {
    return (await this.#admin.listTopics()).filter((topic) => topic.startsWith(topicPrefix))
  }

  async deleteGroups(prefix: string): Promise<void> {
    const groups = [...(await this.#admin.listGroups()).keys()].filter((group) => group.startsWith(prefix))
    if (groups.length > 0) await this.#admin.deleteGroups({ groups })
  }

  async endOffsets(topic: string): Promise<bigint[]> {
    const [listed] = await this.#admin.listOffsets({
      topics: [
        { name: topic, partitions: allPartitions().map((partitionIndex) => ({ partitionIndex, timestamp: -1n })) },
      ],
    })
    const offsets = allPartitions().map(() => 0n)
    for (const partition of listed?.partitions ?? []) offsets[partition.partitionIndex] = partition.offset
    return offsets
  }

  async committedOffsets(groupId: string, topic: string): Promise<bigint[]> {
    const [group] = await this.#admin.listConsumerGroupOffsets({
      groups: [{ groupId, topics: [{ name: topic, partitionIndexes: allPartitions() }] }],
    })
    const offsets = allPartitions().map(() => -1n)
    for (const partition of group?.topics.find((t) => t.name === topic)?.partitions ?? []) {
      offsets[partition.partitionIndex] = partition.committedOffset
    }
    return offsets
  }

  async brokerConfigs(names: string[]): Promise<Record<string, string | null | undefined>> {
    const [description] = await this.#admin.describeConfigs({
      resources: [{ resourceType: 4, resourceName: '1', configurationKeys: names }],
    })
    return Object.fromEntries((description?.configs ?? []).map((config) => [config.name, config.value]))
  }

  async close(): Promise<void> {
    await this.#admin.close()
  }
}
