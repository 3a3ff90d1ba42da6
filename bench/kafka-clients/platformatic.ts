// @platformatic/kafka throughput paths: batch produce, the consume() stream, and the low-level fetch().
// Internal to this bench.
import { Consumer, type MessageToProduce, ProduceAcks, Producer } from '@platformatic/kafka'
import { FloeError } from '../../shared/errors.ts'
import {
  allPartitions,
  bootstrapBrokers,
  type ConsumeTask,
  deferred,
  jsonPayloads,
  Meter,
  type ProduceTask,
  partitionCount,
  type ThroughputResult,
} from './common.ts'

// Unset, consume() lets each partition fill the whole 50 MiB fetch (maxBytesPerPartition ??= maxBytes);
// 1 MiB is what kafkajs and librdkafka use, so the comparison sets it. fetch() takes it per partition.
const maxBytesPerPartition = 1_048_576

export async function produce(task: ProduceTask): Promise<ThroughputResult> {
  const payloads = jsonPayloads(1000)
  const meter = new Meter()
  const producer = new Producer({
    clientId: 'bench-kc-platformatic',
    bootstrapBrokers: bootstrapBrokers(),
    idempotent: true,
    acks: ProduceAcks.ALL,
  })
  const batchOf = (start: number): MessageToProduce[] => {
    const messages: MessageToProduce[] = []
    for (let i = start; i < Math.min(start + task.batchSize, task.messages); i++) {
      messages.push({ topic: task.topic, partition: i % partitionCount, value: payloads[i % payloads.length]! })
    }
    return messages
  }
  if (task.variant === 'send-seq') {
    for (let start = 0; start < task.messages; start += task.batchSize) {
      await producer.send({ messages: batchOf(start) })
    }
  } else if (task.variant === 'send-4-inflight') {
    let next = 0
    const lane = async (): Promise<void> => {
      while (next < task.messages) {
        const start = next
        next += task.batchSize
        await producer.send({ messages: batchOf(start) })
      }
    }
    await Promise.all([lane(), lane(), lane(), lane()])
  } else {
    throw new FloeError('CONFIG_INVALID', `unknown platformatic produce variant ${task.variant}`)
  }
  const result = meter.finish(task.messages, task.messages * payloads[0]!.length)
  await producer.close()
  return result
}

export async function consume(task: ConsumeTask): Promise<ThroughputResult> {
  if (task.variant === 'stream' || task.variant === 'stream-default-options') return consumeStream(task)
  if (task.variant === 'fetch') return consumeFetch(task)
  throw new FloeError('CONFIG_INVALID', `unknown platformatic consume variant ${task.variant}`)
}

/**
 * The documented path: a group member's MessagesStream, one 'data' event per record.
 * 'stream-default-options' leaves maxBytesPerPartition unset, to show what that costs.
 */
async function consumeStream(task: ConsumeTask): Promise<ThroughputResult> {
  const meter = new Meter()
  const consumer = new Consumer({
    clientId: 'bench-kc-platformatic',
    bootstrapBrokers: bootstrapBrokers(),
    groupId: task.groupId,
    ...(task.variant === 'stream' ? { maxBytesPerPartition } : {}),
  })
  const done = deferred<ThroughputResult>()
  let count = 0
  let bytes = 0
  let firstAt = 0
  const stream = await consumer.consume({ topics: [task.topic], mode: 'earliest', autocommit: false })
  stream.on('error', done.reject)
  stream.on('data', (message) => {
    if (count === 0) firstAt = performance.now()
    count++
    bytes += message.value?.length ?? 0
    if (count === task.expected) done.resolve(meter.finish(count, bytes, { steadyMs: performance.now() - firstAt }))
  })
  const result = await done.promise
  await stream.close()
  await consumer.close(true)
  return result
}

/**
 * The low-level path Floe could build per-partition pause and seek on: Consumer.fetch() returns the
 * broker's record batches for exactly the partitions and offsets asked for, no group needed.
 */
async function consumeFetch(task: ConsumeTask): Promise<ThroughputResult> {
  const meter = new Meter()
  const consumer = new Consumer({
    clientId: 'bench-kc-platformatic',
    bootstrapBrokers: bootstrapBrokers(),
    groupId: task.groupId,
  })
  const metadata = await consumer.metadata({ topics: [task.topic] })
  const topicMetadata = metadata.topics.get(task.topic)
  if (!topicMetadata) throw new FloeError('KAFKA_UNAVAILABLE', `no metadata for ${task.topic}`)
  const nextOffsets = allPartitions().map(() => 0n)
  const leader = topicMetadata.partitions[0]!.leader
  let count = 0
  let bytes = 0
  let firstAt = 0
  while (count < task.expected) {
    const response = await consumer.fetch({
      node: leader,
      maxWaitTime: 500,
      maxBytes: 52_428_800,
      topics: [
        {
          topicId: topicMetadata.id,
          partitions: allPartitions().map((partition) => ({
            partition,
            fetchOffset: nextOffsets[partition]!,
            partitionMaxBytes: maxBytesPerPartition,
            currentLeaderEpoch: -1,
            lastFetchedEpoch: -1,
          })),
        },
      ],
    })
    for (const topic of response.responses) {
      for (const partition of topic.partitions) {
        for (const batch of partition.records ?? []) {
          if (count === 0) firstAt = performance.now()
          // A fetch starts at the batch holding the requested offset, so records before it repeat.
          const from = nextOffsets[partition.partitionIndex]!
          for (const record of batch.records) {
            if (batch.firstOffset + BigInt(record.offsetDelta) < from) continue
            count++
            bytes += record.value?.length ?? 0
          }
          nextOffsets[partition.partitionIndex] = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n
        }
      }
    }
  }
  const result = meter.finish(count, bytes, { steadyMs: performance.now() - firstAt })
  await consumer.close(true)
  return result
}
