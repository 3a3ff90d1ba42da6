// Aborted transactions never land (docs/design.md invariant 9), on the real stack: `floe run` reads a
// topic where one transactional producer aborts transactions of about 3 MB (larger than one
// fetch's 1 MiB per partition, so each spans several fetch responses) between committed ones, and
// another aborts several small transactions between its committed ones on the same partitions
// (several aborts by one producer in one response). pyiceberg must see exactly the committed ids,
// after a settling time of a few commit intervals.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { KafkaProducer, type OutgoingRecord } from '../../shared/kafka/index.ts'
import { Fleet } from '../e2e/fleet.ts'
import { endpoints, uniqueName } from '../harness.ts'

const PAD = 'x'.repeat(1000)

/** An event in the fleet's mapping, padded to about 1 KB (the mapping ignores the padding). */
function event(topic: string, id: string, partition: number, i: number): OutgoingRecord {
  const value = {
    id,
    ts: new Date(Date.UTC(2026, 10, 28 + (i % 3))).toISOString(),
    user: { id: i },
    kind: 'tx',
    amount: i,
    pad: PAD,
  }
  return { topic, partition, key: Buffer.from(id), value: Buffer.from(JSON.stringify(value)) }
}

test('aborted transactions, large and small, interleaved with committed ones, never reach the table', async (t) => {
  const interval = 2
  const fleet = await Fleet.create(t, { partitions: 2, commitIntervalSeconds: interval })
  const worker = await fleet.start()
  await fleet.waitFor(() => worker.logged('worker started'), 60_000, 'the worker to start')

  const connection = { brokers: endpoints().kafka.brokers, clientId: 'it-tx' }
  const big = new KafkaProducer(connection, { transactionalId: uniqueName('it-tx-big') })
  const small = new KafkaProducer(connection, { transactionalId: uniqueName('it-tx-small') })
  t.after(async () => {
    await big.close().catch(() => {})
    await small.close().catch(() => {})
  })
  let serial = 0
  const committedIds: string[] = []
  const abortedIds: string[] = []
  /** One transaction of `count` records on `partition`, sent in chunks that fit one produce request. */
  async function transaction(producer: KafkaProducer, partition: number, count: number, commit: boolean) {
    const tx = await producer.begin()
    const ids: string[] = []
    for (let sent = 0; sent < count; sent += 500) {
      const records = []
      for (let i = sent; i < Math.min(count, sent + 500); i++) {
        const id = `${fleet.topic}-${commit ? 'c' : 'a'}-${serial++}`
        ids.push(id)
        records.push(event(fleet.topic, id, partition, serial))
      }
      await tx.send(records)
    }
    if (commit) {
      await tx.commit()
      committedIds.push(...ids)
    } else {
      await tx.abort()
      abortedIds.push(...ids)
    }
  }

  for (const partition of [0, 1]) {
    await transaction(big, partition, 100, true)
    await transaction(big, partition, 3000, false) // ~3 MB: several fetch responses
    await transaction(small, partition, 5, false)
    await transaction(small, partition, 7, true)
    await transaction(small, partition, 5, false)
    await transaction(big, partition, 100, true)
    await transaction(small, partition, 3, false)
    await transaction(big, partition, 3000, false)
    await transaction(small, partition, 9, true)
    await transaction(big, partition, 50, true)
  }
  // Plain records after the last transactions: the read must get past every marker to reach them.
  committedIds.push(...(await fleet.produce(200)))
  fleet.ids.splice(0, fleet.ids.length, ...committedIds)

  // A late aborted record or duplicate must have time to show.
  const report = await fleet.waitSettled(180_000, 3 * interval * 1000)
  assert.equal(report.error, undefined, report.error)
  assert.deepEqual(
    {
      expected: report.ids?.expected,
      missing: report.ids?.missing,
      duplicated: report.ids?.duplicated,
      unexpected: report.ids?.unexpected,
    },
    { expected: committedIds.length, missing: 0, duplicated: 0, unexpected: 0 },
    `ids: ${JSON.stringify(report.ids)}; ${abortedIds.length} aborted ids were produced`,
  )
  assert.equal(report.rows, committedIds.length)
  assert.ok(abortedIds.length > 12_000)
})
