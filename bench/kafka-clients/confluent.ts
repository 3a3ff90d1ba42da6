// @confluentinc/kafka-javascript throughput paths: its KafkaJS-compatible API (send / eachBatch) and
// its node-rdkafka API (produce + delivery reports / consume(n)). Internal to this bench.
import confluent from '@confluentinc/kafka-javascript'
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

const { KafkaJS, RdKafka } = confluent

export function kafkaJs(): InstanceType<typeof KafkaJS.Kafka> {
  return new KafkaJS.Kafka({ kafkaJS: { brokers: bootstrapBrokers(), logLevel: KafkaJS.logLevel.NOTHING } })
}

export async function produce(task: ProduceTask): Promise<ThroughputResult> {
  const payloads = jsonPayloads(1000)
  const bytes = task.messages * payloads[0]!.length
  if (task.variant === 'rdkafka-produce') {
    const meter = new Meter()
    await produceRdKafka(task, payloads)
    return meter.finish(task.messages, bytes)
  }
  const meter = new Meter()
  const producer = kafkaJs().producer({ kafkaJS: { idempotent: true, acks: -1 } })
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
      await producer.send({ topic: task.topic, messages: batchOf(start) })
    }
  } else if (task.variant === 'send-4-inflight') {
    let next = 0
    const lane = async (): Promise<void> => {
      while (next < task.messages) {
        const start = next
        next += task.batchSize
        await producer.send({ topic: task.topic, messages: batchOf(start) })
      }
    }
    await Promise.all([lane(), lane(), lane(), lane()])
  } else {
    throw new FloeError('CONFIG_INVALID', `unknown confluent produce variant ${task.variant}`)
  }
  const result = meter.finish(task.messages, bytes)
  await producer.disconnect()
  return result
}

/** librdkafka's own pipelining: hand it every message, count delivery reports. */
async function produceRdKafka(task: ProduceTask, payloads: Buffer[]): Promise<void> {
  const producer = new RdKafka.Producer({
    'metadata.broker.list': bootstrapBrokers().join(','),
    'enable.idempotence': true,
    acks: -1,
    dr_cb: true,
  })
  const ready = deferred()
  producer.once('ready', () => ready.resolve())
  producer.once('event.error', ready.reject)
  producer.connect()
  await ready.promise
  producer.setPollInterval(10)
  const delivered = deferred()
  let reports = 0
  producer.on('delivery-report', (error) => {
    if (error) delivered.reject(error)
    else if (++reports === task.messages) delivered.resolve()
  })
  for (let i = 0; i < task.messages; i++) {
    for (;;) {
      try {
        producer.produce(task.topic, i % partitionCount, payloads[i % payloads.length]!)
        break
      } catch {
        // QUEUE_FULL: librdkafka's local queue is bounded; let delivery reports drain it.
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
    }
  }
  await delivered.promise
  const disconnected = deferred()
  producer.disconnect(() => disconnected.resolve())
  await disconnected.promise
}

export async function consume(task: ConsumeTask): Promise<ThroughputResult> {
  if (task.variant.startsWith('eachBatch')) return consumeEachBatch(task)
  if (task.variant === 'rdkafka-consume') return consumeRdKafka(task)
  throw new FloeError('CONFIG_INVALID', `unknown confluent consume variant ${task.variant}`)
}

async function consumeEachBatch(task: ConsumeTask): Promise<ThroughputResult> {
  // 'eachBatch' keeps the client's default batch cap (32); 'eachBatch-unbounded' lifts it.
  const maxBatch = task.variant === 'eachBatch-unbounded' ? -1 : 32
  const meter = new Meter()
  const consumer = kafkaJs().consumer({
    kafkaJS: { groupId: task.groupId, fromBeginning: true, autoCommit: false },
    'js.consumer.max.batch.size': maxBatch,
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [task.topic] })
  const done = deferred<ThroughputResult>()
  let count = 0
  let bytes = 0
  let firstAt = 0
  void consumer
    .run({
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

async function consumeRdKafka(task: ConsumeTask): Promise<ThroughputResult> {
  const meter = new Meter()
  const consumer = new RdKafka.KafkaConsumer({
    'metadata.broker.list': bootstrapBrokers().join(','),
    'group.id': task.groupId,
    'enable.auto.commit': false,
    'auto.offset.reset': 'earliest',
  })
  const ready = deferred()
  consumer.once('ready', () => ready.resolve())
  consumer.once('event.error', ready.reject)
  consumer.connect()
  await ready.promise
  consumer.subscribe([task.topic])
  let count = 0
  let bytes = 0
  let firstAt = 0
  while (count < task.expected) {
    const messages = await new Promise<{ value: Buffer | null }[]>((resolve, reject) =>
      consumer.consume(10_000, (error, batch) => (error ? reject(error) : resolve(batch))),
    )
    if (messages.length > 0 && count === 0) firstAt = performance.now()
    for (const message of messages) bytes += message.value?.length ?? 0
    count += messages.length
  }
  const result = meter.finish(count, bytes, { steadyMs: performance.now() - firstAt })
  const disconnected = deferred()
  consumer.disconnect(() => disconnected.resolve())
  await disconnected.promise
  return result
}
