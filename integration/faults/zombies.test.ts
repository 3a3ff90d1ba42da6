// Zombies on the real stack: a worker frozen (SIGSTOP) past its session timeout while events stream
// in, its partitions moved to the others, then woken (SIGCONT) with its open segments, its
// in-flight uploads and its stale idea of which partitions it owns; and the same for the worker
// that runs the coordinator, which wakes in the middle of a round that another coordinator has
// long replaced. pyiceberg counts every id after a settling time in which a zombie's late commit
// would land.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Fleet } from '../e2e/fleet.ts'
import { assertExactlyOnce, badEvery, fastFleet, freezeWorker, minute, ownership } from './support.ts'

/** Past the session timeout (6 s) with room for the rebalance that follows. */
const frozenMs = 12_000

describe('zombie workers', { concurrency: false }, () => {
  test('a participant frozen past its session timeout and woken again loses and duplicates nothing', async (t) => {
    const fleet = await Fleet.create(t, fastFleet)
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    await fleet.produce(1500, { badEvery })
    const coordinator = await fleet.coordinator()
    await fleet.nextCommit(3 * minute)
    const zombie = fleet.workers.find((w) => w.running && w !== coordinator)
    assert.ok(zombie)
    const thaw = freezeWorker(t, zombie)
    // Events keep coming while it is frozen: the others take its partitions and write them.
    const producing = fleet.produce(1500, { batch: 100, badEvery })
    await sleep(frozenMs)
    thaw()
    await producing
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
    assert.ok(zombie.running, 'the woken worker carries on')
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
