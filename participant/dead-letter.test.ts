import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { FloeError } from '../shared/index.ts'
import type { OutgoingRecord } from '../shared/kafka/index.ts'
import { batchesOf, cutHeaders, DeadLetterSender, recordBytes } from './dead-letter.ts'
import { dlqHeaders } from './decode/index.ts'

function record(bytes: number, offset = 0): OutgoingRecord {
  return {
    topic: 'dlq',
    key: Buffer.from(`k${offset}`),
    value: Buffer.alloc(bytes, 0x5b),
    headers: { [dlqHeaders.reason]: 'too-deep', [dlqHeaders.sourceOffset]: String(offset), custom: 'x' },
  }
}

/** A topic that refuses any produce over `limit` bytes of payload, and may be down for a while. */
class FakeTopic {
  readonly landed: OutgoingRecord[] = []
  requests = 0
  downFor = 0
  refuse: FloeError | undefined
  readonly limit: number
  constructor(limit: number) {
    this.limit = limit
  }

  async send(records: OutgoingRecord[]): Promise<void> {
    this.requests++
    if (this.downFor > 0) {
      this.downFor--
      throw new FloeError('KAFKA_UNAVAILABLE', 'broker down')
    }
    if (this.refuse) throw this.refuse
    const bytes = records.reduce((n, r) => n + recordBytes(r), 0)
    if (bytes > this.limit) {
      throw new FloeError('KAFKA_REFUSED', 'MESSAGE_TOO_LARGE', { details: { reason: 'too-large' } })
    }
    this.landed.push(...records)
  }
}

function sender(topic: FakeTopic, extra: { running?: () => boolean; waits?: number[]; maxMessageBytes?: number } = {}) {
  return new DeadLetterSender({
    producer: topic,
    maxMessageBytes: extra.maxMessageBytes ?? topic.limit,
    running: extra.running ?? (() => true),
    wait: async (ms) => {
      extra.waits?.push(ms)
    },
    firstWaitMs: 10,
    maxWaitMs: 40,
  })
}

describe('the dead-letter sender', () => {
  test('groups records into produces that stay under the topic limit, in order', () => {
    const records = Array.from({ length: 100 }, (_, i) => record(3000, i))
    const batches = batchesOf(records, 64 * 1024)
    assert.ok(batches.length > 1)
    for (const batch of batches) assert.ok(batch.reduce((n, r) => n + recordBytes(r), 0) <= 64 * 1024)
    assert.deepEqual(batches.flat(), records)
  })

  test('a fetch of deeply nested records lands in a few produces, not one per record nor one too large', async () => {
    const topic = new FakeTopic(100 * 1024)
    const records = Array.from({ length: 500 }, (_, i) => record(4000, i))
    const outcomes = await sender(topic).send(records)
    assert.equal(topic.landed.length, 500)
    assert.ok(outcomes.every((o) => o.kind === 'sent'))
    assert.ok(topic.requests < 30, `${topic.requests} requests`)
  })

  test('a record the topic refuses as too large goes again with its payload cut and its facts in headers', async () => {
    const topic = new FakeTopic(64 * 1024)
    const outcomes = await sender(topic).send([record(100, 1), record(200_000, 2), record(100, 3)])
    assert.deepEqual(
      outcomes.map((o) => o.kind),
      ['sent', 'cut', 'sent'],
    )
    const cut = topic.landed.find((r) => r.headers?.[cutHeaders.cut] === 'true')
    assert.ok(cut)
    assert.equal(cut.value?.length, 0)
    assert.equal(cut.headers?.[cutHeaders.originalBytes], '200000')
    assert.equal(cut.headers?.[dlqHeaders.sourceOffset], '2')
    assert.equal(cut.headers?.[dlqHeaders.reason], 'too-deep')
  })

  test('a limit lower than the one it was told is found by halving, and every record still lands', async () => {
    const topic = new FakeTopic(20_000)
    const outcomes = await sender(topic, { maxMessageBytes: 1024 * 1024 }).send(
      Array.from({ length: 64 }, (_, i) => record(1000, i)),
    )
    assert.ok(outcomes.every((o) => o.kind === 'sent'))
    assert.equal(topic.landed.length, 64)
  })

  test('a refusal no retry fixes is reported per record at once, never retried', async () => {
    const topic = new FakeTopic(1 << 20)
    topic.refuse = new FloeError('KAFKA_REFUSED', 'TOPIC_AUTHORIZATION_FAILED', {
      details: { reason: 'not-authorized' },
    })
    const outcomes = await sender(topic).send([record(10), record(10)])
    assert.deepEqual(
      outcomes.map((o) => (o.kind === 'refused' ? o.error.details.reason : o.kind)),
      ['not-authorized', 'not-authorized'],
    )
    assert.equal(topic.requests, 1)
  })

  test('a topic the broker says is gone is refused as topic-missing, not waited for', async () => {
    const topic = new FakeTopic(1 << 20)
    topic.downFor = 1000
    const waits: number[] = []
    const outcomes = await new DeadLetterSender({
      producer: topic,
      running: () => true,
      wait: async (ms) => {
        waits.push(ms)
      },
      topicExists: async () => false,
    }).send([record(10)])
    assert.deepEqual(
      outcomes.map((o) => (o.kind === 'refused' ? o.error.details.reason : o.kind)),
      ['topic-missing'],
    )
    assert.deepEqual(waits, [])
  })

  test('an unavailable topic is waited for with growing, capped waits, then the records land', async () => {
    const topic = new FakeTopic(1 << 20)
    topic.downFor = 5
    const waits: number[] = []
    const outcomes = await sender(topic, { waits }).send([record(10)])
    assert.deepEqual(waits, [10, 20, 40, 40, 40])
    assert.deepEqual(
      outcomes.map((o) => o.kind),
      ['sent'],
    )
  })

  test('a participant that stops while the topic is down gives up without claiming anything landed', async () => {
    const topic = new FakeTopic(1 << 20)
    topic.downFor = 1000
    let running = true
    let waited = 0
    const send = new DeadLetterSender({
      producer: topic,
      running: () => running,
      wait: async () => {
        running = ++waited < 3
      },
    }).send([record(10)])
    await assert.rejects(send, (error) => error instanceof FloeError && error.code === 'KAFKA_UNAVAILABLE')
    assert.equal(topic.landed.length, 0)
  })
})
