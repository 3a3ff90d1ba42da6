// The local Kafka broker is a real Apache Kafka 4.x: topics, produce/consume through Floe's
// client seam, transactions with read_committed, and group offsets through the admin API.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type IncomingRecord, KafkaAdmin, KafkaConsumer, KafkaProducer } from '../../shared/kafka/index.ts'
import { endpoints, uniqueName } from '../harness.ts'

const connection = () => ({ brokers: endpoints().kafka.brokers, clientId: 'floe-it' })

async function take(consumer: KafkaConsumer, count: number, timeoutMs = 30_000): Promise<IncomingRecord[]> {
  const records: IncomingRecord[] = []
  const timer = setTimeout(() => void consumer.close(), timeoutMs)
  try {
    for await (const record of consumer.records()) {
      records.push(record)
      if (records.length >= count) break
    }
  } finally {
    clearTimeout(timer)
  }
  return records
}

describe('the local Kafka broker', () => {
  let admin: KafkaAdmin
  before(() => {
    admin = new KafkaAdmin(connection())
  })
  after(() => admin.close())

  test('creates a topic once and reports its partitions', async () => {
    const topic = uniqueName('it-topic')
    assert.deepEqual(await admin.ensureTopic(topic, 3), { created: true, partitions: 3 })
    assert.deepEqual(await admin.ensureTopic(topic, 5), { created: false, partitions: 3 })
    await admin.deleteTopic(topic)
  })

  test('workers creating the same new topic at once all get it, one of them as its creator', async () => {
    for (let attempt = 0; attempt < 10; attempt++) {
      const topic = uniqueName('it-race')
      // A fresh admin client each, as each worker's control channel opens one at start.
      const results = await Promise.all(
        Array.from({ length: 4 }, async () => {
          const fresh = new KafkaAdmin(connection())
          try {
            return await fresh.ensureTopic(topic, 1, { 'retention.ms': '86400000' })
          } finally {
            await fresh.close()
          }
        }),
      )
      assert.deepEqual(
        results.map((r) => r.partitions),
        [1, 1, 1, 1],
      )
      assert.ok(results.filter((r) => r.created).length <= 1, JSON.stringify(results))
      await admin.deleteTopic(topic)
    }
  })

  test('a topic looked up while it is deleted has a partition count or none, never an error', async () => {
    // The broker may still list a topic it deletes while its metadata already calls it unknown.
    for (let attempt = 0; attempt < 10; attempt++) {
      const topic = uniqueName('it-deleted')
      await admin.ensureTopic(topic, 1)
      const deleted = admin.deleteTopic(topic)
      let count: number | undefined = 1
      for (let look = 0; look < 50 && count !== undefined; look++) count = await admin.partitionCount(topic)
      await deleted
      assert.ok(count === undefined || count === 1)
    }
  })

  test('delivers produced records to a consumer group and remembers its committed offsets', async () => {
    const topic = uniqueName('it-pc')
    const group = uniqueName('it-group')
    await admin.ensureTopic(topic, 2)
    const producer = new KafkaProducer(connection())
    const values = Array.from({ length: 20 }, (_, i) => `event-${i}`)
    await producer.send(values.map((v, i) => ({ topic, partition: i % 2, value: Buffer.from(v) })))
    await producer.close()

    const consumer = new KafkaConsumer(connection(), { groupId: group, topics: [topic] })
    const records = await take(consumer, values.length)
    assert.deepEqual(records.map((r) => r.value?.toString()).sort(), [...values].sort())
    const next = new Map<number, bigint>()
    for (const r of records) next.set(r.partition, r.offset + 1n)
    await consumer.commit(topic, next)
    await consumer.close()

    assert.deepEqual(
      await admin.committedOffsets(group, topic),
      new Map([
        [0, 10n],
        [1, 10n],
      ]),
    )
    assert.deepEqual(
      await admin.endOffsets(topic, [0, 1]),
      new Map([
        [0, 10n],
        [1, 10n],
      ]),
    )
    assert.deepEqual(
      await admin.startOffsets(topic, [0, 1]),
      new Map([
        [0, 0n],
        [1, 0n],
      ]),
    )
    await admin.deleteTopic(topic)
  })

  test('hides an aborted transaction from read_committed readers and shows a committed one', async () => {
    const topic = uniqueName('it-tx')
    await admin.ensureTopic(topic, 1)
    const producer = new KafkaProducer(connection(), { transactionalId: uniqueName('it-txid') })
    const aborted = await producer.begin()
    await aborted.send([{ topic, value: Buffer.from('aborted') }])
    await aborted.abort()
    await producer.sendInTransaction([
      { topic, value: Buffer.from('committed-1') },
      { topic, value: Buffer.from('committed-2') },
    ])
    await producer.close()

    const consumer = new KafkaConsumer(connection(), { groupId: uniqueName('it-txg'), topics: [topic] })
    const records = await take(consumer, 2)
    await consumer.close()
    assert.deepEqual(
      records.map((r) => r.value?.toString()),
      ['committed-1', 'committed-2'],
    )
    // The aborted record and both transaction markers still occupy offsets: offsets are positions.
    assert.ok((records[0]?.offset ?? 0n) >= 2n)
    await admin.deleteTopic(topic)
  })
})
