// The capability probe for @platformatic/kafka, including the workarounds Floe would need for what it
// lacks (per-partition pause, seek on a running stream). Internal to this bench.
import { Admin, Consumer, type Message, ProduceAcks, Producer } from '@platformatic/kafka'
import { FloeError } from '../../shared/errors.ts'
import type { Checks } from './capabilities.ts'
import { Deliveries, perPartition, visibleAfter } from './capabilities.ts'
import { allPartitions, bootstrapBrokers } from './common.ts'

export async function probePlatformatic(topic: string, checks: Checks): Promise<void> {
  const groupId = `${topic}-group`
  const common = { clientId: 'bench-kc-caps', bootstrapBrokers: bootstrapBrokers() }
  const admin = new Admin(common)

  await checks.run('admin: create + delete topics', async () => {
    const extra = `${topic}-admin`
    await admin.createTopics({ topics: [extra], partitions: 3, replicas: 1 })
    const created = (await admin.listTopics()).includes(extra)
    await admin.deleteTopics({ topics: [extra] })
    return { ok: created, detail: `admin.createTopics / deleteTopics; listed after create: ${created}` }
  })

  const producer = new Producer({ ...common, idempotent: true, acks: ProduceAcks.ALL })
  const fill = async (): Promise<void> => {
    const messages = allPartitions().flatMap((partition) =>
      Array.from({ length: perPartition }, (_, i) => ({ topic, partition, value: Buffer.from(`{"i":${i}}`) })),
    )
    await producer.send({ messages })
  }
  await checks.run('idempotent producer', async () => {
    await fill()
    return `new Producer({ idempotent: true }).send → producerId ${producer.producerId}, epoch ${producer.producerEpoch}`
  })

  await checks.run('admin: list end offsets', async () => {
    const [listed] = await admin.listOffsets({
      topics: [
        { name: topic, partitions: allPartitions().map((partitionIndex) => ({ partitionIndex, timestamp: -1n })) },
      ],
    })
    const ends = (listed?.partitions ?? []).sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => p.offset)
    return {
      ok: ends.every((end) => end === BigInt(perPartition)),
      detail: `admin.listOffsets(timestamp -1n) → ${ends}`,
    }
  })

  const committedOffset = async (partition: number): Promise<bigint | undefined> => {
    const [group] = await admin.listConsumerGroupOffsets({
      groups: [{ groupId, topics: [{ name: topic, partitionIndexes: allPartitions() }] }],
    })
    return group?.topics[0]?.partitions.find((p) => p.partitionIndex === partition)?.committedOffset
  }

  const deliveries = new Deliveries()
  const latest = new Map<number, Message>()
  const consumer = new Consumer({ ...common, groupId })
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false })
  stream.on('data', (message) => {
    deliveries.add(message.partition, message.offset)
    latest.set(message.partition, message)
  })
  await deliveries.until((counts) => counts.every((count) => count === perPartition), 'first fill')

  await checks.run('manual commit of explicit offsets + admin: group committed offsets', async () => {
    const leaderEpoch = latest.get(0)?.leaderEpoch ?? -1
    await consumer.commit({ offsets: [{ topic, partition: 0, offset: 5n, leaderEpoch }] })
    const p0 = await visibleAfter(() => committedOffset(0), 5n)
    return {
      ok: p0.value === 5n,
      detail: `await consumer.commit({ offsets: [{partition 0, offset 5n, leaderEpoch}] }) → admin.listConsumerGroupOffsets p0=${p0.value}, visible ${p0.afterMs} ms after the promise resolved`,
    }
  })

  await checks.run('per-partition pause/resume', async () => ({
    ok: false,
    detail:
      'no API: MessagesStream.pause()/resume() (d.ts: `pause(): this`) stop the whole stream; Consumer has no pause(partitions)',
  }))

  await checks.run('seek', async () => {
    // Not documented: `get offsetsToFetch(): Map<string, bigint>` is the live map #fetch reads.
    const before = deliveries.counts()[3]!
    stream.offsetsToFetch.set(`${topic}:3`, 4n)
    await fill()
    await deliveries.until((c) => c[3]! > before, 'after offsetsToFetch write')
    const next = deliveries.byPartition[3]![before]
    return {
      ok: next === 4n,
      detail: `no seek() on Consumer or MessagesStream; writing the live map behind the public getter, stream.offsetsToFetch.set('${topic}:3', 4n), → next record of partition 3 at offset ${next} (the fetch in flight overwrites the write)`,
    }
  })

  await checks.run('seek emulated: a new stream at explicit offsets', async () => {
    const seekDeliveries = new Deliveries()
    const seekConsumer = new Consumer({ ...common, groupId: `${groupId}-seek` })
    const offsets = allPartitions().map((partition) => ({ topic, partition, offset: partition === 2 ? 7n : 0n }))
    const seekStream = await seekConsumer.consume({ topics: [topic], mode: 'manual', offsets, autocommit: false })
    seekStream.on('data', (message) => seekDeliveries.add(message.partition, message.offset))
    await seekDeliveries.until((c) => c[2]! > 0, 'seek stream')
    const first = seekDeliveries.byPartition[2]![0]
    await seekStream.close()
    await seekConsumer.close(true)
    return {
      ok: first === 7n,
      detail: `consumer.consume({ mode: 'manual', offsets: [{partition 2, offset 7n}, …] }) → first record of partition 2 at ${first}`,
    }
  })

  await checks.run('per-partition pause emulated: joinGroup() + own fetch() loop', async () => {
    const fetcher = new Consumer({ ...common, groupId: `${groupId}-fetch` })
    fetcher.topics.track(topic)
    await fetcher.joinGroup({})
    const assigned = fetcher.assignments?.find((a) => a.topic === topic)?.partitions ?? []
    const metadata = await fetcher.metadata({ topics: [topic] })
    const topicMetadata = metadata.topics.get(topic)
    if (!topicMetadata) throw new FloeError('KAFKA_UNAVAILABLE', `no metadata for ${topic}`)
    const paused = new Set([0])
    const response = await fetcher.fetch({
      node: topicMetadata.partitions[0]!.leader,
      maxWaitTime: 100,
      topics: [
        {
          topicId: topicMetadata.id,
          partitions: assigned
            .filter((partition) => !paused.has(partition))
            .map((partition) => ({
              partition,
              fetchOffset: 0n,
              partitionMaxBytes: 1_048_576,
              currentLeaderEpoch: -1,
              lastFetchedEpoch: -1,
            })),
        },
      ],
    })
    const returned = response.responses.flatMap((t) =>
      t.partitions.filter((p) => (p.records ?? []).length > 0).map((p) => p.partitionIndex),
    )
    await fetcher.close(true)
    return {
      ok: assigned.length === 6 && !returned.includes(0) && returned.length === 5,
      detail: `topics.track + joinGroup() → assignments [${assigned}]; fetch() of partitions 1-5 returned records of [${returned.sort()}] only — offsets, leaders and the loop are the caller's`,
    }
  })

  await checks.run('transactions with consumer offsets', async () => {
    const txProducer = new Producer({ ...common, idempotent: true, transactionalId: `${topic}-txn` })
    const transaction = await txProducer.beginTransaction()
    await transaction.send({ messages: [{ topic, partition: 1, value: Buffer.from('{"txn":true}') }] })
    await transaction.addConsumer(consumer)
    const message = latest.get(1)
    if (!message) throw new FloeError('KAFKA_UNAVAILABLE', 'no record of partition 1 to commit')
    await transaction.addOffset(message)
    await transaction.commit()
    await txProducer.close()
    const p1 = await visibleAfter(() => committedOffset(1), message.offset + 1n)
    return {
      ok: p1.value === message.offset + 1n,
      detail: `beginTransaction → send → addConsumer → addOffset(message) (TxnOffsetCommit with generation + member id, KIP-447) → commit; group offset p1=${p1.value} (visible after ${p1.afterMs} ms); offsets come only from a consumed Message`,
    }
  })

  await stream.close()
  await consumer.close(true)
  await producer.close()
  await admin.close()
}
