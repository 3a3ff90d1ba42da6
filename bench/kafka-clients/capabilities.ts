// Probes, against the broker, the features Floe needs from a Kafka client: admin, end offsets, a
// group's committed offsets, manual commits of explicit offsets, per-partition pause/resume, seek,
// the idempotent producer and transactions. Internal to this bench.
import { FloeError } from '../../shared/errors.ts'
import { probePlatformatic } from './capabilities-platformatic.ts'
import { allPartitions, type ClientName, sleep, withTimeout } from './common.ts'
import { kafkaJs } from './confluent.ts'
import { kafka } from './kafkajs.ts'

export interface CapabilitiesTask {
  kind: 'capabilities'
  client: ClientName
  topic: string
}

export interface CapabilityCheck {
  name: string
  ok: boolean
  /** The API that was called, and what came back. */
  detail: string
}

export interface CapabilitiesReport {
  client: ClientName
  checks: CapabilityCheck[]
}

/** Runs one named check; a throw or a false result is recorded, never fatal to the probe. */
export class Checks {
  readonly list: CapabilityCheck[] = []

  async run(name: string, check: () => Promise<string | { ok: boolean; detail: string }>): Promise<void> {
    try {
      const outcome = await withTimeout(check(), 30_000, name)
      this.list.push(typeof outcome === 'string' ? { name, ok: true, detail: outcome } : { name, ...outcome })
    } catch (error) {
      this.list.push({ name, ok: false, detail: `threw: ${error instanceof Error ? error.message : String(error)}` })
    }
  }
}

export async function probeCapabilities(task: CapabilitiesTask): Promise<CapabilitiesReport> {
  const checks = new Checks()
  if (task.client === 'platformatic') await probePlatformatic(task.topic, checks)
  else await probeKafkaJsFamily(task.client, task.topic, checks)
  return { client: task.client, checks: checks.list }
}

export const perPartition = 10

/**
 * Polls `read` until it returns `expected` (up to 5 s): a commit that resolves before the broker has
 * it, or transactional offsets that become visible only once the markers are written, show as a delay.
 */
export async function visibleAfter<T>(read: () => Promise<T>, expected: T): Promise<{ value: T; afterMs: number }> {
  const startedAt = Date.now()
  let value = await read()
  while (value !== expected && Date.now() - startedAt < 5000) {
    await sleep(25)
    value = await read()
  }
  return { value, afterMs: Date.now() - startedAt }
}

/** Records per partition delivered to a consumer, for the pause and seek checks. */
export class Deliveries {
  readonly byPartition = allPartitions().map((): bigint[] => [])

  add(partition: number, offset: bigint): void {
    this.byPartition[partition]!.push(offset)
  }

  counts(): number[] {
    return this.byPartition.map((offsets) => offsets.length)
  }

  async until(condition: (counts: number[]) => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 20_000
    while (!condition(this.counts())) {
      if (Date.now() > deadline) throw new FloeError('KAFKA_UNAVAILABLE', `${what}: counts ${this.counts()}`)
      await sleep(20)
    }
  }
}

/**
 * kafkajs and the KafkaJS-compatible API of @confluentinc/kafka-javascript share their call shapes
 * for everything probed here except client construction and sendOffsets, which the branches below set.
 */
async function probeKafkaJsFamily(client: ClientName, topic: string, checks: Checks): Promise<void> {
  const isConfluent = client === 'confluent'
  const groupId = `${topic}-group`
  const confluentKafka = kafkaJs()
  const kafkajsKafka = kafka()
  const admin = isConfluent ? confluentKafka.admin() : kafkajsKafka.admin()
  await admin.connect()

  await checks.run('admin: create + delete topics', async () => {
    const extra = `${topic}-admin`
    await admin.createTopics({ topics: [{ topic: extra, numPartitions: 3, replicationFactor: 1 }] })
    const created = (await admin.listTopics()).includes(extra)
    await admin.deleteTopics({ topics: [extra] })
    return { ok: created, detail: `admin.createTopics / deleteTopics; listed after create: ${created}` }
  })

  const producer = isConfluent
    ? confluentKafka.producer({ kafkaJS: { idempotent: true, acks: -1 } })
    : kafkajsKafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const fill = async (): Promise<void> => {
    const messages = allPartitions().flatMap((partition) =>
      Array.from({ length: perPartition }, (_, i) => ({ partition, value: `{"i":${i}}` })),
    )
    await producer.send({ topic, messages })
  }
  await checks.run('idempotent producer', async () => {
    await fill()
    return isConfluent
      ? 'producer({ kafkaJS: { idempotent: true } }).send (librdkafka enable.idempotence)'
      : 'producer({ idempotent: true, maxInFlightRequests: 1 }).send — documented as experimental'
  })

  await checks.run('admin: list end offsets', async () => {
    const offsets = await admin.fetchTopicOffsets(topic)
    const highs = offsets.sort((a, b) => a.partition - b.partition).map((o) => o.high)
    return {
      ok: highs.every((high) => high === String(perPartition)),
      detail: `admin.fetchTopicOffsets → high ${highs}`,
    }
  })

  const committed = async (partition: number): Promise<string | undefined> => {
    const [fetched] = await admin.fetchOffsets({ groupId, topics: [topic] })
    return fetched?.partitions.find((p) => p.partition === partition)?.offset
  }
  const deliveries = new Deliveries()
  const consumer = isConfluent
    ? confluentKafka.consumer({ kafkaJS: { groupId, fromBeginning: true, autoCommit: false } })
    : kafkajsKafka.consumer({ groupId })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], ...(isConfluent ? {} : { fromBeginning: true }) })
  void consumer.run({
    ...(isConfluent ? {} : { autoCommit: false }),
    eachMessage: async ({ partition, message }) => {
      deliveries.add(partition, BigInt(message.offset))
    },
  })
  await deliveries.until((counts) => counts.every((count) => count === perPartition), 'first fill')

  await checks.run('manual commit of explicit offsets + admin: group committed offsets', async () => {
    await consumer.commitOffsets([{ topic, partition: 0, offset: '5' }])
    const p0 = await visibleAfter(() => committed(0), '5')
    return {
      ok: p0.value === '5',
      detail: `await consumer.commitOffsets([{partition 0, offset '5'}]) → admin.fetchOffsets p0=${p0.value}, visible ${p0.afterMs} ms after the promise resolved`,
    }
  })

  await checks.run('per-partition pause/resume', async () => {
    consumer.pause([{ topic, partitions: [0] }])
    await fill()
    await deliveries.until((c) => c.slice(1).every((count) => count === 2 * perPartition), 'others after pause')
    await sleep(1000)
    const pausedCount = deliveries.counts()[0]!
    consumer.resume([{ topic, partitions: [0] }])
    await deliveries.until((c) => c[0] === 2 * perPartition, 'partition 0 after resume')
    return {
      ok: pausedCount === perPartition,
      detail: `consumer.pause([{topic, partitions:[0]}]): partition 0 got ${pausedCount - perPartition} new records while paused, the others ${perPartition} each; resume() delivered the rest`,
    }
  })

  await checks.run('seek', async () => {
    const before = deliveries.counts()[2]!
    consumer.seek({ topic, partition: 2, offset: '7' })
    await deliveries.until((c) => c[2]! > before, 'after seek')
    const first = deliveries.byPartition[2]![before]
    return {
      ok: first === 7n,
      detail: `consumer.seek({partition 2, offset '7'}) → next record of partition 2 at offset ${first}`,
    }
  })

  await checks.run('transactions with consumer offsets', async () => {
    const transactionalId = `${topic}-txn`
    const txProducer = isConfluent
      ? confluentKafka.producer({ 'transactional.id': transactionalId, kafkaJS: { idempotent: true } })
      : kafkajsKafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 })
    await txProducer.connect()
    const transaction = await txProducer.transaction()
    await transaction.send({ topic, messages: [{ partition: 1, value: '{"txn":true}' }] })
    const offsets = { topics: [{ topic, partitions: [{ partition: 1, offset: '3' }] }] }
    if (isConfluent) {
      await (transaction as Awaited<ReturnType<ReturnType<typeof confluentKafka.producer>['transaction']>>).sendOffsets(
        {
          consumer: consumer as ReturnType<typeof confluentKafka.consumer>,
          ...offsets,
        },
      )
    } else {
      await (transaction as Awaited<ReturnType<ReturnType<typeof kafkajsKafka.producer>['transaction']>>).sendOffsets({
        consumerGroupId: groupId,
        ...offsets,
      })
    }
    await transaction.commit()
    await txProducer.disconnect()
    const p1 = await visibleAfter(() => committed(1), '3')
    const fencing = isConfluent
      ? 'sendOffsets({consumer}) passes the group metadata (KIP-447 fencing)'
      : 'sendOffsets({consumerGroupId}) sends no generation/member id (no KIP-447 fencing)'
    return {
      ok: p1.value === '3',
      detail: `transaction() → send → ${fencing} → commit; group offset p1=${p1.value} (visible after ${p1.afterMs} ms)`,
    }
  })

  await consumer.disconnect()
  await producer.disconnect()
  await admin.disconnect()
}
