// Raw archive mode on the real stack: every record stored as it came (value and key as bytes,
// headers in order, coordinates, timestamp and its type), read back by pyiceberg byte for byte
// through a worker's kill -9, then produced again from the archive into a topic of its own, in
// archive order, and archived once more: the second archive holds the same records at the same
// offsets (the replay kept the order), stamped by the broker (that topic keeps LogAppendTime).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { ProduceAcks, Producer } from '@platformatic/kafka'
import { endpoints, type VerifyResult, verifyTable } from '../harness.ts'
import { Fleet } from './fleet.ts'
import { digestOf } from './log-digest.ts'

const minute = 60_000
const partitions = 4
const perPartition = 120
const raw = '    mode: raw\n'

/** A record as produced: what the archive must give back. */
interface SentRecord {
  partition: number
  key: Buffer | null
  value: Buffer | null
  headers: [Buffer, Buffer | null][]
  timestamp: bigint
}

/** A row as verify.py prints it with --binary-base64. */
interface ArchiveRow {
  topic: string
  partition: number
  offset: number
  timestamp: string
  timestamp_type: string
  key: string | null
  value: string | null
  headers: { key: string; value: string | null }[]
}

// One of each kind of value an archive must not change, then random bytes.
const values: (Buffer | null)[] = [
  null,
  Buffer.alloc(0),
  Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x00]),
  Buffer.from('{"not": "parsed"'),
  Buffer.from('plain text, not JSON'),
]

/** The i-th record of a partition: keys, values, headers and timestamps of every awkward kind. */
function recordOf(partition: number, i: number): SentRecord {
  const value = i < values.length ? (values[i] ?? null) : randomBytes(1 + ((i * 37) % 900))
  const key = i % 5 === 0 ? null : i % 5 === 1 ? Buffer.alloc(0) : randomBytes(1 + (i % 24))
  const headers: [Buffer, Buffer | null][] =
    i % 4 === 0
      ? []
      : [
          [Buffer.from('trace'), Buffer.from(`t-${partition}-${i}`)],
          [Buffer.from('blob'), i % 3 === 0 ? null : randomBytes(i % 7)],
          [Buffer.from('trace'), Buffer.from('repeated')],
        ]
  // two days apart, so the archive's default day partitioning writes more than one partition
  const day = i % 2 === 0 ? Date.UTC(2021, 2, 14, 23, 59, 59, 999) : Date.UTC(2021, 2, 16, 0, 0, 0, 1)
  return { partition, key, value, headers, timestamp: BigInt(day + i) }
}

/**
 * Sends the records of each partition in order, one acknowledged request at a time per partition,
 * so a fresh topic gives them offsets 0, 1, 2, ... in that order.
 */
async function produce(topic: string, records: readonly SentRecord[]): Promise<void> {
  const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
    clientId: 'e2e-archive',
    bootstrapBrokers: endpoints().kafka.brokers,
    idempotent: true,
    acks: ProduceAcks.ALL,
  })
  try {
    for (let start = 0; start < records.length; start += 40) {
      const messages = records.slice(start, start + 40).map((record) => ({
        topic,
        partition: record.partition,
        key: record.key as Buffer,
        value: record.value as Buffer,
        // distinct Buffer objects: a repeated name stays two headers
        headers: new Map(record.headers.map(([name, value]) => [Buffer.from(name), value as Buffer])),
        timestamp: record.timestamp,
      }))
      await producer.send({ messages })
    }
  } finally {
    await producer.close()
  }
}

/** Waits for `count` rows, lets three commit intervals pass (a late duplicate lands) and reads every row. */
async function settledRows(fleet: Fleet, count: number): Promise<ArchiveRow[]> {
  const deadline = Date.now() + 3 * minute
  let last: VerifyResult | undefined
  while (Date.now() < deadline) {
    last = await verifyTable(fleet.table).catch((error: unknown) => ({ error: String(error) }) as VerifyResult)
    if (!last.error && last.rows >= count) break
    await sleep(2000)
  }
  if (last?.error || (last?.rows ?? 0) < count) {
    console.error(`the archive is not complete; the workers:\n${digestOf(fleet.workers)}`)
    assert.fail(`the archive holds ${last?.rows ?? 0} of ${count} records (${last?.error ?? 'no error'})`)
  }
  await sleep(3 * fleet.commitIntervalMs)
  const settled = await verifyTable(fleet.table, { rows: count + 100, binaryAsBase64: true })
  assert.equal(settled.rows, count, 'rows after the settling time')
  return (settled.sample ?? []) as unknown as ArchiveRow[]
}

const base64 = (bytes: Buffer | null) => (bytes === null ? null : bytes.toString('base64'))

/** What the archive must hold of a record: its bytes as verify.py prints them, headers in order. */
function archived(record: SentRecord) {
  return {
    key: base64(record.key),
    value: base64(record.value),
    headers: record.headers.map(([name, value]) => ({ key: name.toString(), value: base64(value) })),
  }
}

function byCoordinates(rows: readonly ArchiveRow[]): Map<string, ArchiveRow> {
  const map = new Map<string, ArchiveRow>()
  for (const row of rows) {
    const at = `${row.partition}@${row.offset}`
    assert.ok(!map.has(at), `${at} archived twice`)
    map.set(at, row)
  }
  return map
}

describe('raw archive mode', () => {
  test('keeps every record byte for byte through a kill -9, and replays into Kafka in order', async (t) => {
    const sent = Array.from({ length: partitions }, (_, p) =>
      Array.from({ length: perPartition }, (_, i) => recordOf(p, i)),
    )
    const half = sent.flatMap((records) => records.slice(0, perPartition / 2))
    const rest = sent.flatMap((records) => records.slice(perPartition / 2))
    const total = partitions * perPartition

    // a short session: the killed worker's partitions move in seconds, not the default 30. The
    // records carry 2021 timestamps: under the default time retention (7 days) the broker rolls a
    // segment per append and deletes them at its next retention check, and Floe rightly skips
    // them as lost (seen once: 60 records of two partitions). This topic keeps everything.
    const fleet = await Fleet.create(t, {
      commitIntervalSeconds: 2,
      partitions,
      dataset: raw,
      sessionTimeoutMs: 10_000,
      topicConfigs: { 'retention.ms': '-1' },
    })
    const [first] = await Promise.all([fleet.start(), fleet.start()])
    await produce(fleet.topic, half)
    await fleet.nextCommit(minute)
    first?.kill('SIGKILL')
    await fleet.start()
    await produce(fleet.topic, rest)
    const rows = await settledRows(fleet, total)

    const archive = byCoordinates(rows)
    for (const [partition, records] of sent.entries()) {
      for (const [offset, record] of records.entries()) {
        const row = archive.get(`${partition}@${offset}`)
        assert.ok(row, `partition ${partition} offset ${offset} is not in the archive`)
        assert.equal(row.topic, fleet.topic)
        assert.equal(row.timestamp_type, 'CreateTime')
        assert.equal(BigInt(Date.parse(row.timestamp.replace(' ', 'T'))), record.timestamp)
        assert.deepEqual(
          { key: row.key, value: row.value, headers: row.headers },
          archived(record),
          `${partition}@${offset}`,
        )
      }
    }
    const spec = (await verifyTable(fleet.table)).spec
    assert.match(spec, /timestamp_day/, spec)
    t.diagnostic(`${archive.size} records byte-equal in the archive; spec ${spec}`)

    // The replay: the archive in (partition, offset) order, each record to its partition again.
    const replay = await Fleet.create(t, {
      commitIntervalSeconds: 2,
      partitions,
      dataset: raw,
      topicConfigs: { 'message.timestamp.type': 'LogAppendTime' },
    })
    await replay.start()
    const ordered = [...rows].sort((a, b) => a.partition - b.partition || a.offset - b.offset)
    const fromArchive = (text: string | null) => (text === null ? null : Buffer.from(text, 'base64'))
    const replayedAt = Date.now()
    await produce(
      replay.topic,
      ordered.map((row) => ({
        partition: row.partition,
        key: fromArchive(row.key),
        value: fromArchive(row.value),
        headers: row.headers.map((header) => [Buffer.from(header.key), fromArchive(header.value)]),
        timestamp: BigInt(Date.parse(row.timestamp.replace(' ', 'T'))),
      })),
    )
    const replayed = byCoordinates(await settledRows(replay, total))
    for (const [at, row] of archive) {
      const again = replayed.get(at)
      assert.ok(again, `${at} was not replayed to the same offset`)
      assert.deepEqual(
        { key: again.key, value: again.value, headers: again.headers },
        { key: row.key, value: row.value, headers: row.headers },
        at,
      )
      // the replay topic stamps records with the broker's time, which the archive must keep
      assert.equal(again.timestamp_type, 'LogAppendTime')
      const stamped = Date.parse(again.timestamp.replace(' ', 'T'))
      assert.ok(stamped >= replayedAt - 1000 && stamped <= Date.now(), `${at} stamped ${again.timestamp}`)
    }
    t.diagnostic(`${replayed.size} records replayed in order and archived again`)
  })
})
