// A dataset without a mapping, on the real stack: its columns come from the records. Two workers
// meet new fields (top-level, nested, a list) and an integer beyond 32 bits at the same moment
// and widen the table together; one of them is killed with -9 right after; a value that cannot
// fit its column (a fraction in the widened integer column) goes to the dead-letter topic. Every
// good event lands exactly once, and pyiceberg reads the whole table under the widened schema,
// each value the event's own.
import assert from 'node:assert/strict'
import { describe, type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { KafkaProducer } from '../../shared/kafka/index.ts'
import { endpoints, verifyTable } from '../harness.ts'
import { assertEveryIdOnce, Fleet } from './fleet.ts'

const minute = 60_000

interface Row {
  id: string
  n: number | string
  note: string | null
  user: { id: number; country: string | null } | null
  tags: string[] | null
}

const day = (i: number) => new Date(Date.UTC(2026, 11, 1 + (i % 3), 12)).toISOString()

/** The events of the first phase: the fields the table starts with. */
const plain = (id: string, i: number) => ({ id, ts: day(i), user: { id: i }, n: i })

/** Later events: a new top-level field, one inside `user`, a list, and `n` beyond an int. */
const grown = (id: string, i: number) => ({
  id,
  ts: day(i),
  user: { id: i, country: i % 2 ? 'NO' : 'SE' },
  n: 2 ** 33 + i,
  tags: ['grown', `t${i}`],
  note: `note-${i}`,
})

describe('a dataset that infers its columns', () => {
  // the shared layout cuts every partition's segments at a change; the per-partition one rotates each log
  for (const walLayout of ['shared', 'partition'] as const)
    test(`records that grow new fields and widen a type land once each, through a kill -9, read whole under the widened schema (${walLayout} WAL)`, async (t) => {
      await growingRecords(t, walLayout)
    })
})

async function growingRecords(t: TestContext, walLayout: 'shared' | 'partition'): Promise<void> {
  const fleet = await Fleet.create(t, {
    commitIntervalSeconds: 2,
    sessionTimeoutMs: 10_000,
    walLayout,
    dataset: '    timestampFields: [ts]\n    partitionSpec: [day(ts)]\n',
  })
  const workers = await Promise.all([fleet.start(), fleet.start()])
  const [first] = workers
  // both hold partitions before any record: each meets the first fields, and later the new ones
  await fleet.waitFor(
    () => workers.every((w) => w.logged('partition synced')),
    2 * minute,
    'partitions on both workers',
  )
  await fleet.produce(400, { event: plain })
  await fleet.waitUntilAllSeen(2 * minute)

  // both workers meet the new fields at once; one dies while the change and its rows are in flight
  await fleet.produce(400, { event: grown })
  await sleep(300 + Math.floor(Math.random() * 1500))
  first?.kill('SIGKILL')
  await fleet.start()
  await fleet.produce(200, { event: grown })

  // a fraction cannot go into the integer column the table has for n (Iceberg has no long -> double)
  const misfits = Array.from({ length: 5 }, (_, i) => `${fleet.topic}-misfit-${i}`)
  fleet.badIds.push(...misfits)
  const producer = new KafkaProducer({ brokers: endpoints().kafka.brokers, clientId: 'e2e-misfits' })
  try {
    await producer.send(
      misfits.map((id) => ({
        topic: fleet.topic,
        key: Buffer.from(id),
        value: Buffer.from(`{"id": "${id}", "n": 0.5}`),
      })),
    )
  } finally {
    await producer.close()
  }

  assertEveryIdOnce(fleet, await fleet.waitSettled(3 * minute))
  assert.deepEqual([...(await fleet.deadLettered(minute))].sort(), [...misfits].sort(), 'every misfit dead-lettered')

  const table = await verifyTable(fleet.table, { rows: 1000 })
  t.diagnostic(`schema ${table.schema.replace(/\n/g, ' ')}`)
  for (const column of [
    /ts: optional timestamptz/,
    /n: optional long/,
    /note: optional string/,
    /country: optional string/,
    /tags: optional list<string>/,
  ])
    assert.match(table.schema, column)
  const rows = (table.sample ?? []) as unknown as Row[]
  assert.equal(rows.length, 1000)
  let grownRows = 0
  for (const row of rows) {
    const i = fleet.ids.indexOf(row.id)
    assert.ok(i >= 0, `row ${row.id} was produced`)
    if (i < 400) {
      assert.equal(BigInt(row.n), BigInt(i), `n of ${row.id}`)
      assert.equal(row.note, null)
      assert.equal(row.user?.id, i)
      continue
    }
    grownRows++
    assert.equal(BigInt(row.n), 2n ** 33n + BigInt(i), `n of ${row.id}`)
    assert.equal(row.note, `note-${i}`)
    assert.equal(row.user?.country, i % 2 ? 'NO' : 'SE')
    assert.deepEqual(row.tags, ['grown', `t${i}`])
  }
  assert.equal(grownRows, 600)
  const widened = fleet.workers.filter((w) => w.logged('the table widened for the fields records brought'))
  assert.ok(widened.length >= 1, 'a worker widened the table')
}
