import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, test } from 'node:test'
import type { DatasetConfig } from '../shared/config/index.ts'
import { FloeError, isFloeError } from '../shared/index.ts'
import type { OutgoingRecord } from '../shared/kafka/index.ts'
import { createLogger, createMetrics, PhaseClock } from '../shared/telemetry/index.ts'
import { BadRecords } from './bad-records.ts'
import { DeadLetterSender } from './dead-letter.ts'
import { datasetOf } from './decode/test-support.ts'
import type { BadRecord } from './partition-ingest.ts'

function bad(offset: number, reason = 'not-json'): BadRecord {
  return {
    record: {
      topic: 'events',
      partition: 2,
      offset: BigInt(offset),
      timestamp: 0n,
      key: undefined,
      value: Buffer.from('{'),
      headers: new Map(),
    },
    error: new FloeError('RECORD_MALFORMED', 'record is not JSON', { details: { reason } }),
  }
}

function setup(choice: 'dlq' | 'skip' | 'stop', dlqTopic: string | undefined, send?: (r: OutgoingRecord[]) => void) {
  const dataset: DatasetConfig = { ...datasetOf({ id: 'id' }, { id: 'string' }), badRecords: choice }
  if (dlqTopic) dataset.dlqTopic = dlqTopic
  else delete dataset.dlqTopic
  const lines: Record<string, unknown>[] = []
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  const metrics = createMetrics({ defaultMetrics: false })
  let now = 0
  const handler = new BadRecords({
    dataset,
    sender: dlqTopic
      ? new DeadLetterSender({
          producer: { send: async (records) => send?.(records) },
          running: () => true,
          wait: async () => {},
        })
      : undefined,
    logger: createLogger({ level: 'info', destination }),
    metrics,
    phases: new PhaseClock(),
    now: () => now,
  })
  const count = async (name: 'recordsDropped' | 'recordsDeadLettered' | 'deadLetterRefused') =>
    (await metrics[name].get()).values.reduce((n, v) => n + v.value, 0)
  return { handler, lines, count, advance: (ms: number) => (now += ms) }
}

describe('bad records', () => {
  test('skip counts every record and logs coordinates, at most one line a second', async () => {
    const { handler, lines, count, advance } = setup('skip', undefined)
    await handler.handle([bad(10), bad(11), bad(12)])
    advance(1000)
    await handler.handle([bad(13)])
    assert.equal(await count('recordsDropped'), 4)
    const skipped = lines.filter((l) => l.msg === 'skipped a bad record (badRecords: skip)')
    assert.deepEqual(
      skipped.map((l) => [l.topic, l.partition, l.offset, l.reason, l.skippedWithoutLine]),
      [
        ['events', 2, '10', 'not-json', 0],
        ['events', 2, '13', 'not-json', 2],
      ],
    )
  })

  test('stop without a dead-letter topic stops at the first bad record, naming where it is', async () => {
    const { handler } = setup('stop', undefined)
    await assert.rejects(
      handler.handle([bad(7), bad(8)]),
      (error) =>
        isFloeError(error, 'BAD_RECORD_STOP') && error.fatal && /events\/2@7 \(badRecords: stop\)/.test(error.message),
    )
  })

  test('dlq sends and counts by reason', async () => {
    const sent: OutgoingRecord[] = []
    const { handler, count } = setup('dlq', 'events-dlq', (records) => sent.push(...records))
    await handler.handle([bad(1), bad(2, 'too-deep')])
    assert.equal(sent.length, 2)
    assert.equal(await count('recordsDeadLettered'), 2)
  })

  const refuse = () => {
    throw new FloeError('KAFKA_REFUSED', 'UNKNOWN_TOPIC_OR_PARTITION', { details: { reason: 'topic-missing' } })
  }

  test('dlq goes on past a record the dead-letter topic refuses for good, counted and logged', async () => {
    const { handler, count, lines } = setup('dlq', 'events-dlq', refuse)
    await handler.handle([bad(1)])
    assert.equal(await count('recordsDropped'), 1)
    assert.equal(await count('deadLetterRefused'), 1)
    assert.ok(lines.some((l) => l.msg === 'dead-letter topic refused a bad record; counted and dropped'))
  })

  test('stop with a dead-letter topic stops when the topic refuses a record for good', async () => {
    const { handler } = setup('stop', 'events-dlq', refuse)
    await assert.rejects(handler.handle([bad(1)]), (error) => isFloeError(error, 'BAD_RECORD_STOP'))
  })
})
