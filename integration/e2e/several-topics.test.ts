// A dataset that reads several topics into one table (`topicPattern`, `topics: [...]`), on the
// real stack: one consumer-group member per worker reads every topic, each topic's partitions keep
// their own WAL and statuses, and one commit per round records every topic's progress. Proven as
// the one-topic fleet is: pyiceberg counts every id after a settling time, through kill -9 of the
// coordinator and of a participant in the middle of short rounds, a topic created while the
// workers run (the pattern picks it up without a restart), and in both WAL layouts.
import assert from 'node:assert/strict'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { assertEveryIdOnce, Fleet } from './fleet.ts'

const minute = 60_000

/** Produces `count` events to each of the fleet's topics at once. */
function produceToEvery(fleet: Fleet, count: number, batch = 150): Promise<unknown> {
  return Promise.all(fleet.topics.map((topic) => fleet.produce(count, { topic, batch })))
}

describe('a dataset of several topics on the real stack', { concurrency: false }, () => {
  test('a pattern over three topics, one created meanwhile, through kill -9 of the coordinator and of a participant', async (t) => {
    // One member each, whatever FLOE_TEST_THREADS says: the test reads that member's WAL folders.
    const fleet = await Fleet.create(t, {
      topicCount: 2,
      topicPattern: true,
      partitions: 3,
      commitIntervalSeconds: 1,
      threads: 1,
    })
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    const producing = produceToEvery(fleet, 1500)
    // a topic the pattern matches, created once the workers run (a round committed): read without a restart
    await fleet.nextCommit(2 * minute)
    const third = await fleet.addTopic()
    const producingThird = fleet.produce(1500, { topic: third, batch: 150 })
    for (let kill = 0; kill < 2; kill++) {
      const coordinator = await fleet.coordinator()
      // the coordinator, then a participant: each mid-round (rounds are a second long)
      const victim = kill === 0 ? coordinator : fleet.workers.find((w) => w.running && w !== coordinator)
      assert.ok(victim)
      await sleep(Math.floor(Math.random() * 2500))
      victim.kill('SIGKILL')
      await victim.exited
      await fleet.restart(victim)
    }
    await Promise.all([producing, producingThird])
    await produceToEvery(fleet, 500)
    assertEveryIdOnce(fleet, await fleet.waitSettled(4 * minute))

    // Each topic's shared WAL sits in a folder of its own.
    const folders = new Set<string>()
    for (const name of ['w1', 'w2', 'w3']) {
      for (const folder of await readdir(join(fleet.walDir(name), 'events'))) folders.add(folder)
    }
    for (const topic of fleet.topics) assert.ok(folders.has(`shared.${topic}`), `${[...folders]} lack ${topic}`)
    // The third topic's ids are in the table (above); the workers running when it appeared said so.
    const lines = fleet.workers.flatMap((w) => w.lines())
    assert.ok(lines.some((l) => l.msg === 'the topics the dataset reads changed (topicPattern)'))
  })

  test('the per-partition WAL layout: partition 0 of each topic is its own', async (t) => {
    const fleet = await Fleet.create(t, { topicCount: 2, partitions: 2, walLayout: 'partition' })
    await Promise.all([fleet.start(), fleet.start()])
    await produceToEvery(fleet, 1000)
    await sleep(2000)
    await produceToEvery(fleet, 500)
    assertEveryIdOnce(fleet, await fleet.waitSettled(3 * minute))
  })
})
