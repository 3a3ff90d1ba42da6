// The shared-segment WAL layout (`ingestion.wal.layout: shared`) on the real stack: one file per
// worker and Iceberg partition per round however many Kafka partitions the worker owns, and
// exactly-once where sharing a file could break it (docs/architecture.md, "Shared segments"): kill -9
// and restart on the same WAL with rows of several partitions in one file; a rebalance that
// revokes partitions whose rows sit in open or ready shared files beside partitions the worker
// keeps; a worker whose rotations hold a range another worker committed while it was frozen,
// killed and restarted on that WAL, or woken as a zombie. pyiceberg counts every id after a
// settling time.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Fleet, type SettledResult, type WorkerProcess } from '../e2e/fleet.ts'
import {
  assertExactlyOnce,
  badEvery,
  fastFleet,
  freezeWorker,
  killAtRandomAndRestart,
  logged,
  minute,
  ownership,
  zombieWakes,
} from './support.ts'

// with an encoder thread: the row groups in flight to it are what a kill -9 here also interrupts
const shared = { ...fastFleet, walLayout: 'shared', encoderThreads: 2 } as const
/** The test events' `ts` spans three days: the table's `day(ts)` spec has three partitions. */
const icebergPartitions = 3

/** Data files each append snapshot added. */
function filesPerCommit(report: SettledResult): number[] {
  return report.snapshots
    .filter((s) => s.summary.operation === 'append' && s.summary['added-data-files'] !== undefined)
    .map((s) => Number(s.summary['added-data-files']))
}

/** What the shared WAL's recovery and walks did, over every incarnation of these workers. */
function walEvents(workers: WorkerProcess[]): { kept: number; deletedFiles: number; dropped: Record<string, number> } {
  let kept = 0
  let deletedFiles = 0
  const dropped: Record<string, number> = {}
  for (const worker of workers) {
    for (const line of logged(worker, 'shared WAL recovered')) {
      kept += Number(line.keptRotations ?? 0)
      deletedFiles += Number(line.deletedFiles ?? 0)
    }
    for (const line of logged(worker, 'shared WAL rotation dropped')) {
      const reason = String(line.reason)
      dropped[reason] = (dropped[reason] ?? 0) + 1
    }
  }
  return { kept, deletedFiles, dropped }
}

describe('the shared WAL layout', { concurrency: false }, () => {
  test('one worker on six partitions commits a file per Iceberg partition per round, every id once', async (t) => {
    // One member, whatever FLOE_TEST_THREADS says: each member adds its own file per Iceberg partition.
    const fleet = await Fleet.create(t, { ...shared, threads: 1 })
    await fleet.start('solo')
    for (let burst = 0; burst < 3; burst++) {
      await fleet.produce(1000, { badEvery })
      await fleet.nextCommit(2 * minute)
    }
    const report = await fleet.waitSettled(2 * minute)
    await assertExactlyOnce(fleet, report)
    const files = filesPerCommit(report)
    t.diagnostic(`data files per commit: ${JSON.stringify(files)}`)
    assert.ok(files.length >= 3, 'three rounds or more committed')
    // One cut per round holds every Kafka partition: at most one file per Iceberg partition (the
    // per-partition layout writes one per Kafka partition and Iceberg partition: up to 18).
    assert.ok(
      files.every((n) => n <= icebergPartitions),
      `a commit added more files than Iceberg partitions: ${files}`,
    )
  })

  test('workers killed at random moments and restarted on their shared WAL lose and duplicate nothing', async (t) => {
    const fleet = await Fleet.create(t, { ...shared, commitIntervalSeconds: 3 })
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    await killAtRandomAndRestart(fleet, 4)
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(4 * minute))
    t.diagnostic(`shared WAL at restarts and walks: ${JSON.stringify(walEvents(fleet.workers))}`)
  })

  test('partitions revoked while their rows share files with kept partitions, with a kill -9 in the rebalance', async (t) => {
    // Rounds 10 s apart and events flowing all along: the rebalance finds rows of every partition
    // in uncommitted files.
    const fleet = await Fleet.create(t, { ...shared, commitIntervalSeconds: 10 })
    await Promise.all([fleet.start(), fleet.start()])
    let flowing = true
    const producing = (async () => {
      while (flowing) {
        await fleet.produce(200, { batch: 100, badEvery })
        await sleep(300)
      }
    })()
    // A new member takes partitions from a worker whose open and ready files hold them beside
    // partitions it keeps; once it has let them go, it dies at a random moment of the rebalance
    // that follows, and comes back.
    await sleep(3000)
    await fleet.start()
    const revoking = () => fleet.workers.find((w) => w.running && logged(w, 'partition revoked').length > 0)
    await fleet.waitFor(() => revoking() !== undefined, 2 * minute, 'a revocation')
    await sleep(Math.floor(Math.random() * 1500))
    const victim = revoking()
    assert.ok(victim)
    victim.kill('SIGKILL')
    await fleet.start()
    await fleet.restart(victim)
    await sleep(3000)
    flowing = false
    await producing
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(4 * minute))
    const events = walEvents(fleet.workers)
    t.diagnostic(`shared WAL: ${JSON.stringify(events)}; partitions at the end: ${JSON.stringify(ownership(fleet))}`)
    assert.ok((events.dropped['not-assigned'] ?? 0) > 0, 'a revocation dropped a rotation holding a lost partition')
  })

  test('a rotation whose range another worker committed meanwhile is dropped whole at restart', async (t) => {
    // Rounds 8 s apart, so the freeze lands between two rounds with rows in the first's files.
    const fleet = await Fleet.create(t, { ...shared, commitIntervalSeconds: 8 })
    const first = await fleet.start('first')
    await fleet.produce(1500, { badEvery })
    await fleet.nextCommit(2 * minute)
    // Rows of every partition in the first worker's shared files; then it freezes, the second
    // worker takes every partition and commits them, and the first is killed where it stood and
    // restarted on its WAL: its rotations claim ranges the table now holds.
    const producing = fleet.produce(1500, { batch: 100, badEvery })
    await sleep(2000)
    const thaw = freezeWorker(t, first)
    const taken = fleet.nextCommit(3 * minute)
    await fleet.start('second')
    await taken
    await producing
    first.kill('SIGKILL')
    thaw()
    await fleet.restart(first)
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(4 * minute))
    const events = walEvents(fleet.workers)
    t.diagnostic(`shared WAL: ${JSON.stringify(events)}`)
    assert.ok(events.deletedFiles > 0, 'the restart deleted the files whose ranges the table holds')
  })

  test('a zombie woken with shared files holding ranges the others committed duplicates nothing', async (t) => {
    const fleet = await Fleet.create(t, shared)
    // It freezes a second into the new events, with their rows in its shared files.
    await zombieWakes(t, fleet, { events: 3000, delayMs: 1000 })
    t.diagnostic(`shared WAL: ${JSON.stringify(walEvents(fleet.workers))}`)
  })
})
