import { describe, test } from 'node:test'
import { Fleet } from '../e2e/fleet.ts'
import { assertExactlyOnce, badEvery, fastFleet, freezeWorker, minute, ownership, zombieWakes } from './support.ts'

describe('zombie workers', { concurrency: false }, () => {
  test('a participant frozen past its session timeout and woken again loses and duplicates nothing', async (t) => {
    // the per-partition layout, pinned (shared-wal.test.ts wakes a zombie on the default, shared one)
    const fleet = await Fleet.create(t, { ...fastFleet, walLayout: 'partition' })
    await zombieWakes(t, fleet, { events: 1500, delayMs: 0 })
    t.diagnostic(`partitions per worker at the end: ${JSON.stringify(ownership(fleet))}`)
  })

  test('the coordinator frozen past its session timeout and woken mid-round loses and duplicates nothing', async (t) => {
    const fleet = await Fleet.create(t, fastFleet)
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    await fleet.produce(1500, { badEvery })
    const zombie = await fleet.coordinator()
    await fleet.nextCommit(3 * minute)
    const thaw = freezeWorker(t, zombie)
    const producing = fleet.produce(1500, { batch: 100, badEvery })
    // Another worker gets partition 0 and coordinates while the old coordinator sleeps.
    await fleet.waitFor(
      () => fleet.workers.some((w) => w !== zombie && w.running && w.coordinating),
      minute,
      'a second coordinator',
    )
    await fleet.nextCommit(3 * minute)
    thaw()
    await producing
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
    // The woken coordinator steps down, and may legitimately get partition 0 back in a later
    // rebalance: what must hold is that one worker coordinates, not two. A rebalance that waits on a
    // member slow to rejoin lasts up to the group's rebalance timeout (60 s), partition 0 unowned
    // meanwhile, so this waits longer than that.
    await fleet.waitFor(
      () => fleet.workers.filter((w) => w.running && w.coordinating).length === 1,
      2 * minute,
      'exactly one coordinator',
    )
    t.diagnostic(`partitions per worker at the end: ${JSON.stringify(ownership(fleet))}`)
  })
})
