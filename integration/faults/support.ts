// Shared by the fault tests: the exactly-once verdict (every good id once in the table after the
// settling time, every malformed one in the dead-letter topic), and faults that undo themselves
// when the test ends, even when it fails.
import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { assertEveryIdOnce, type Fleet, type SettledResult, type WorkerProcess } from '../e2e/fleet.ts'
import { heldPartitions } from '../e2e/log-digest.ts'
import { freezeService, restartBroker, thawService } from '../stack/index.ts'

export const minute = 60_000

/** The short timings every fault test runs with: rounds every 2 s, a frozen worker is out after 6 s. */
export const fastFleet = { commitIntervalSeconds: 2, commitTimeoutSeconds: 5, sessionTimeoutMs: 6000 } as const

/** One malformed event in this many: each must end in the DLQ topic and never in the table. */
export const badEvery = 50

export async function assertExactlyOnce(fleet: Fleet, report: SettledResult): Promise<void> {
  assertEveryIdOnce(fleet, report)
  const dead = await fleet.deadLettered(minute)
  assert.equal(dead.size, fleet.badIds.length, `malformed events in the DLQ: ${dead.size} of ${fleet.badIds.length}`)
}

/** Freezes a stack service; it is thawed when the test ends whatever happens. Returns the thaw. */
export function freeze(t: TestContext, service: string): () => void {
  t.after(() => thawService(service))
  freezeService(service)
  return () => thawService(service)
}

/** Freezes a worker process; thawed when the test ends (its fleet kills it then anyway). */
export function freezeWorker(t: TestContext, worker: WorkerProcess): () => void {
  t.after(() => worker.thaw())
  worker.freeze()
  return () => worker.thaw()
}

/** Restarts the broker on its data; a test that stops it makes sure it is up again at its end. */
export async function restartKafka(t: TestContext, how: { hard?: boolean; downMs?: number }): Promise<void> {
  let done = false
  t.after(async () => {
    if (!done) await restartBroker(0).catch(() => {})
  })
  await restartBroker(0, how)
  done = true
}

/** Past the session timeout (6 s) with room for the rebalance that follows. */
export const frozenMs = 12_000

/**
 * Kills a random running worker with SIGKILL `kills` times, after a round and a random wait, and
 * restarts it on its WAL; fresh events each time, so a kill meets open segments, ready files and
 * uploads.
 */
export async function killAtRandomAndRestart(fleet: Fleet, kills: number): Promise<void> {
  for (let kill = 0; kill < kills; kill++) {
    await fleet.produce(1500, { batch: 100, badEvery })
    await fleet.nextCommit(3 * minute)
    await sleep(Math.floor(Math.random() * 3000))
    const running = fleet.workers.filter((w) => w.running)
    const victim = running[Math.floor(Math.random() * running.length)]
    assert.ok(victim)
    victim.kill('SIGKILL')
    await fleet.restart(victim)
  }
}

/**
 * Freezes a worker that is not the coordinator past its session timeout while events keep coming
 * (the others take its partitions and write them), wakes it, and checks every id once and that it
 * carries on. `delayMs`: how long it reads the new events before it freezes.
 */
export async function zombieWakes(
  t: TestContext,
  fleet: Fleet,
  options: { events: number; delayMs: number },
): Promise<WorkerProcess> {
  await Promise.all([fleet.start(), fleet.start(), fleet.start()])
  await fleet.produce(1500, { badEvery })
  const coordinator = await fleet.coordinator()
  await fleet.nextCommit(3 * minute)
  const zombie = fleet.workers.find((w) => w.running && w !== coordinator)
  assert.ok(zombie)
  const producing = fleet.produce(options.events, { batch: 100, badEvery })
  await sleep(options.delayMs)
  const thaw = freezeWorker(t, zombie)
  await sleep(frozenMs)
  thaw()
  await producing
  await fleet.produce(500, { badEvery })
  await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
  assert.ok(zombie.running, 'the woken worker carries on')
  return zombie
}

/** Lines a worker logged with message `msg`. */
export function logged(worker: WorkerProcess, msg: string): Record<string, unknown>[] {
  return worker.lines().filter((l) => l.msg === msg)
}

/** The partitions each running worker ingests now, as its log says (assigned minus revoked). */
export function ownership(fleet: Fleet): Record<string, number[]> {
  const owned: Record<string, number[]> = {}
  for (const worker of fleet.workers.filter((w) => w.running)) owned[worker.id] = heldPartitions(worker.lines())
  return owned
}

/** The per-partition WAL layout, pinned whatever the default. */
export const perPartition = { ...fastFleet, walLayout: 'partition' } as const

/** What recovery found in a worker's WAL when its partitions synced, over all its restarts. */
export function recovered(workers: WorkerProcess[]): { reused: number; deleted: number } {
  let reused = 0
  let deleted = 0
  for (const worker of workers) {
    for (const line of logged(worker, 'partition synced')) {
      reused += Number(line.reusedFiles ?? 0)
      deleted += Number(line.deletedFiles ?? 0)
    }
    // the shared layout recovers once per worker and dataset, not per partition
    for (const line of logged(worker, 'shared WAL recovered')) {
      reused += Number(line.keptRotations ?? 0)
      deleted += Number(line.deletedFiles ?? 0)
    }
  }
  return { reused, deleted }
}
