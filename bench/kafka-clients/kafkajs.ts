// kafkajs throughput paths: send() of message batches and eachBatch. Internal to this bench.
import kafkajs from 'kafkajs'
import { FloeError } from '../../shared/errors.ts'
import {
  bootstrapBrokers,
  type ConsumeTask,
  deferred,
  jsonPayloads,
  Meter,
  type ProduceTask,
  partitionCount,
  type ThroughputResult,
} from './common.ts'

export function kafka(): InstanceType<typeof kafkajs.Kafka> {
  return new kafkajs.Kafka({
    clientId: 'bench-kc-kafkajs',
    brokers: bootstrapBrokers(),
    logLevel: kafkajs.logLevel.NOTHING,
  })
}

export async function produce(task: ProduceTask): Promise<ThroughputResult> {
  const payloads = jsonPayloads(1000)
  const meter = new Meter()
  // kafkajs refuses idempotence with more than one request in flight per connection.
  const producer = kafka().producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const batchOf = (start: number): { value: Buffer; partition: number }[] => {
    const messages: { value: Buffer; partition: number }[] = []
    for (let i = start; i < Math.min(start + task.batchSize, task.messages); i++) {
      messages.push({ partition: i % partitionCount, value: payloads[i % payloads.length]! })
    }
    return messages
  }
  if (task.variant === 'send-seq') {
    for (let start = 0; start < task.messages; start += task.batchSize) {
      await producer.send({ topic: task.topic, acks: -1, messages: batchOf(start) })
    }
  } else if (task.variant === 'send-4-inflight') {
    let next = 0
    const lane = async (): Promise<void> => {
      while (next < task.messages) {
        const start = next
        next += task.batchSize
        await producer.send({ topic: task.topic, acks: -1, messages: batchOf(start) })
      }
    }
    await Promise.all([lane(), lane(), lane(), lane()])
  } else {
    throw new FloeError('CONFIG_INVALID', `unknown kafkajs produce variant ${task.variant}`)
  }
  const result = meter.finish(task.messages, task.messages * payloads[0]!.length)
  await producer.disconnect()
  return result
}

export async function consume(task: ConsumeTask): Promise<ThroughputResult> {
  if (task.variant !== 'eachBatch') {
    throw new FloeError('CONFIG_INVALID', `unknown kafkajs consume variant ${task.variant}`)
  }
  const meter = new Meter()
  const consumer = kafka().consumer({ groupId: task.groupId })
  await consumer.connect()
  await consumer.subscribe({ topics: [task.topic], fromBeginning: true })
  const done = deferred<ThroughputResult>()
  let count = 0
  let bytes = 0
  let firstAt = 0
  void consumer
    .run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        if (count === 0) firstAt = performance.now()
        for (const message of batch.messages) bytes += message.value?.length ?? 0
        count += batch.messages.length
        if (count >= task.expected) done.resolve(meter.finish(count, bytes, { steadyMs: performance.now() - firstAt }))
      },
    })
    .catch(done.reject)
  const result = await done.promise
  await consumer.disconnect()
  return result
}
