// Columns mapped from each record's Kafka coordinates (`$kafka.topic`, `$kafka.partition`,
// `$kafka.offset`, `$kafka.timestamp`, `$kafka.key`, `$kafka.headers.<name>`, `$kafka.headers`) on
// the real stack: the table, read by pyiceberg, holds for every event what a consumer of its own
// (the client's record stream, not Floe's record path) reads of the same record, and the table is
// partitioned by day of the Kafka timestamp and by its type, written as $kafka sources.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { IncomingRecord } from '../../shared/kafka/index.ts'
import { KafkaConsumer } from '../../shared/kafka/index.ts'
import { endpoints, uniqueName, verifyTable } from '../harness.ts'
import { assertEveryIdOnce, Fleet } from './fleet.ts'

const minute = 60_000
const events = 600

const dataset = `    customMapping:
      id: id
      ts: ts
      topic: $kafka.topic
      part: $kafka.partition
      offset: $kafka.offset
      produced: $kafka.timestamp
      kafka_key: $kafka.key
      trace: $kafka.headers.trace
      headers: $kafka.headers
    schema:
      id: string not null
      ts: timestamptz
      topic: string not null
      part: int not null
      offset: long not null
      produced: timestamptz not null
      kafka_key: string
      trace: string
      headers: map<string, string>
    # through the columns mapped from these sources, and one more (kafka_timestamp_type) it adds
    partitionSpec: ['day($kafka.timestamp)', 'identity($kafka.timestampType)']
`

/** A row as verify.py prints it: timestamps as text, a map as [key, value] pairs. */
interface TableRow {
  id: string
  topic: string
  part: number
  offset: number
  produced: string
  kafka_key: string | null
  trace: string | null
  headers: [string, string][]
  kafka_timestamp_type: string
}

/** Every record of the topic, read from the start by a consumer group of its own. */
async function readTopic(topic: string, count: number): Promise<Map<string, IncomingRecord>> {
  const consumer = new KafkaConsumer(
    { brokers: endpoints().kafka.brokers, clientId: 'e2e-reader' },
    { groupId: uniqueName('e2e-reader'), topics: [topic], startFrom: 'earliest' },
  )
  const byKey = new Map<string, IncomingRecord>()
  const reading = (async () => {
    for await (const record of consumer.records()) {
      byKey.set(record.key?.toString() ?? '', record)
      if (byKey.size >= count) return
    }
  })()
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      reading,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`read ${byKey.size} of ${count}`)), minute)
      }),
    ])
  } finally {
    clearTimeout(timer)
    await consumer.close().catch(() => {})
  }
  return byKey
}

describe('Kafka metadata columns', () => {
  test('hold for every event what an independent consumer reads of its record', async (t) => {
    const fleet = await Fleet.create(t, { commitIntervalSeconds: 2, dataset })
    await Promise.all([fleet.start(), fleet.start()])
    await fleet.produce(events, {
      batch: 100,
      // one header on every event, a second on a third of them
      headers: (_, i) => ({ trace: `t-${i}`, ...(i % 3 === 0 ? { tenant: `tenant-${i % 7}` } : {}) }),
    })
    assertEveryIdOnce(fleet, await fleet.waitSettled(2 * minute))

    const table = await verifyTable(fleet.table, { rows: events })
    assert.match(table.spec, /produced_day: day\(\d+\)/, table.spec)
    assert.match(table.spec, /kafka_timestamp_type: identity\(\d+\)/, table.spec)
    const rows = (table.sample ?? []) as unknown as TableRow[]
    assert.equal(rows.length, events)
    const records = await readTopic(fleet.topic, events)
    let checked = 0
    for (const row of rows) {
      const record = records.get(row.id)
      assert.ok(record, `no record keyed ${row.id} in the topic`)
      const headers = [...record.headers].map(([name, value]): [string, string] => [name.toString(), value.toString()])
      assert.deepEqual(
        {
          topic: row.topic,
          partition: row.part,
          offset: String(row.offset),
          timestamp: Date.parse(row.produced.replace(' ', 'T')),
          key: row.kafka_key,
          trace: row.trace,
          headers: Object.fromEntries(row.headers),
          timestampType: row.kafka_timestamp_type,
        },
        {
          topic: record.topic,
          partition: record.partition,
          offset: String(record.offset),
          timestamp: Number(record.timestamp),
          key: record.key?.toString() ?? null,
          trace: record.headers.size > 0 ? (headers.find(([name]) => name === 'trace')?.[1] ?? null) : null,
          headers: Object.fromEntries(headers),
          timestampType: 'CreateTime',
        },
        `event ${row.id}`,
      )
      checked++
    }
    t.diagnostic(`${checked} rows equal to their records; spec ${table.spec}`)
  })
})
