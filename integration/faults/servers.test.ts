// Servers that hang or go away, on the real stack: the Iceberg REST catalog frozen past the commit
// timeout (the commit request sits in its socket and lands when it wakes, after the coordinator
// gave up on it), the Kafka broker frozen (every session times out at once when it wakes), and the
// broker killed and started again on the same data. Each ends with pyiceberg counting every id
// after a settling time.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Fleet } from '../e2e/fleet.ts'
import { assertExactlyOnce, badEvery, fastFleet, freeze, minute, restartKafka } from './support.ts'

describe('frozen and restarted servers', { concurrency: false }, () => {
  test('a catalog frozen past the commit timeout, then woken, lands late commits without loss or duplicate', async (t) => {
    const fleet = await Fleet.create(t, fastFleet)
    await Promise.all([fleet.start(), fleet.start()])
    await fleet.produce(1000, { badEvery })
    for (let fault = 0; fault < 2; fault++) {
      await fleet.nextCommit(3 * minute)
      // Rounds run every 2 s: a short random wait puts the freeze in a different phase each time.
      await sleep(Math.floor(Math.random() * 2000))
      const thaw = freeze(t, 'iceberg-rest')
      await fleet.produce(1000, { batch: 100, badEvery })
      // Longer than the commit timeout (5 s): rounds time out and a new one starts meanwhile.
      await sleep(12_000)
      thaw()
    }
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
  })

  test('a broker frozen past every session timeout, then woken, loses and duplicates nothing', async (t) => {
    const fleet = await Fleet.create(t, fastFleet)
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    await fleet.produce(2000, { badEvery })
    await fleet.nextCommit(3 * minute)
    const thaw = freeze(t, 'kafka')
    await sleep(10_000)
    thaw()
    await fleet.produce(2000, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
    assert.ok(
      fleet.workers.every((w) => w.running),
      'every worker rides out the frozen broker',
    )
  })

  test('a broker killed and started again on the same data loses and duplicates nothing', async (t) => {
    const fleet = await Fleet.create(t, fastFleet)
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    await fleet.produce(2000, { badEvery })
    await fleet.nextCommit(3 * minute)
    await sleep(Math.floor(Math.random() * 2000))
    await restartKafka(t, { hard: true, downMs: 5000 })
    await fleet.produce(2000, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(4 * minute))
    const exited = fleet.workers.filter((w) => !w.running).map((w) => w.id)
    assert.deepEqual(exited, [], 'every worker rides out the broker restart')
  })
})
