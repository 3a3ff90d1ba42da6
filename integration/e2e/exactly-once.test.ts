// Exactly-once, proven on the real stack: `floe run` worker processes on a 6-partition topic, events
// with unique ids produced while they run, and pyiceberg counting every id in the table. Then the
// same through kill -9 of the coordinator and of a participant at random moments of short rounds
// (so kills land in every phase), and through scaling from 1 to 3 workers and back. The first
// also runs over the stack's SASL_SSL listener when it has one.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { withoutSaslSsl } from '../harness.ts'
import { assertEveryIdOnce, Fleet, type WorkerProcess } from './fleet.ts'

const minute = 60_000

async function coordinatorOf(fleet: Fleet): Promise<WorkerProcess> {
  let found: WorkerProcess | undefined
  await fleet.waitFor(
    () => {
      found = fleet.workers.find((w) => w.running && w.coordinating)
      return found !== undefined
    },
    minute,
    'a coordinator',
  )
  return found!
}

/** The shortest fleet run: three workers, events produced in two bursts, each in the table once. */
async function threeWorkersOnSixPartitions(fleet: Fleet): Promise<void> {
  await Promise.all([fleet.start(), fleet.start(), fleet.start()])
  await fleet.produce(3000)
  await sleep(2000)
  await fleet.produce(3000)
  assertEveryIdOnce(fleet, await fleet.waitSettled(3 * minute))
}

/** A random pause of up to `maxMs`: kills land at a different moment of a round each time. */
function jitter(maxMs: number): Promise<void> {
  return sleep(Math.floor(Math.random() * maxMs))
}

describe('exactly-once on the real stack', { concurrency: false }, () => {
  test('three workers on six partitions land every produced event exactly once', async (t) => {
    await threeWorkersOnSixPartitions(await Fleet.create(t))
  })

  test('the same over SASL_SSL (SCRAM-SHA-512, a client certificate), and no worker logs the password or the key', {
    skip: withoutSaslSsl(),
  }, async (t) => {
    const fleet = await Fleet.create(t, { kafka: 'sasl_ssl' })
    await threeWorkersOnSixPartitions(fleet)
    assert.ok(fleet.workers.every((w) => w.logged('worker started')))
    assert.deepEqual(fleet.secretsLogged(), [], 'workers whose log holds the SASL password or the private key')
  })

  test('a kill -9 of the coordinator in the middle of rounds loses and duplicates nothing', async (t) => {
    const fleet = await Fleet.create(t, { commitIntervalSeconds: 1 })
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    await fleet.produce(2000)
    for (let kill = 0; kill < 3; kill++) {
      const coordinator = await coordinatorOf(fleet)
      await jitter(2500)
      coordinator.kill('SIGKILL')
      await coordinator.exited
      await fleet.produce(1000)
      await fleet.start()
    }
    assertEveryIdOnce(fleet, await fleet.waitSettled(4 * minute))
  })

  test('a kill -9 of a participant while it writes and uploads loses and duplicates nothing', async (t) => {
    const fleet = await Fleet.create(t, { commitIntervalSeconds: 2 })
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    const producing = fleet.produce(6000, { batch: 200 })
    for (let kill = 0; kill < 3; kill++) {
      const coordinator = await coordinatorOf(fleet)
      const victim = fleet.workers.find((w) => w.running && w !== coordinator)
      assert.ok(victim)
      await jitter(3000)
      victim.kill('SIGKILL')
      await victim.exited
      await fleet.start()
    }
    await producing
    assertEveryIdOnce(fleet, await fleet.waitSettled(4 * minute))
  })

  test('scaling from one worker to three and back to one during ingest loses and duplicates nothing', async (t) => {
    const fleet = await Fleet.create(t, { commitIntervalSeconds: 2 })
    const first = await fleet.start()
    const producing = fleet.produce(8000, { batch: 200 })
    await sleep(4000)
    const second = await fleet.start()
    const third = await fleet.start()
    // On a loaded machine a worker can take seconds to start: a SIGTERM before its handler is
    // installed kills it instead of draining it.
    await fleet.waitFor(
      () => second.logged('worker started') && third.logged('worker started'),
      minute,
      'two more workers',
    )
    await sleep(8000)
    second.kill('SIGTERM')
    third.kill('SIGTERM')
    assert.equal(await second.exited, 0)
    assert.equal(await third.exited, 0)
    await producing
    assert.ok(first.running)
    assertEveryIdOnce(fleet, await fleet.waitSettled(3 * minute))
  })

  test('SIGTERM drains: the last round commits before the worker leaves, a second signal exits at once', async (t) => {
    const fleet = await Fleet.create(t, { commitIntervalSeconds: 30 })
    const worker = await fleet.start()
    await fleet.waitFor(() => worker.logged('worker started'), minute, 'the worker to start')
    await fleet.produce(500)
    await sleep(3000)
    worker.kill('SIGTERM')
    assert.equal(await worker.exited, 0)
    assert.ok(worker.logged('last round acknowledged'))
    // The interval is 30 s: only the drain's round can have committed these rows. No worker runs
    // now, so a short settling time is enough for the verdict.
    assertEveryIdOnce(fleet, await fleet.waitSettled(10_000, 2000))

    const impatient = await fleet.start()
    await fleet.waitFor(() => impatient.logged('worker started'), minute, 'the second worker to start')
    impatient.kill('SIGTERM')
    await sleep(100)
    impatient.kill('SIGTERM')
    assert.equal(await impatient.exited, 130)
  })
})
