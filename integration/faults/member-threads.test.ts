// Workers of several members on threads (ingestion.threads): to the groups and the control topic
// each member is a worker, so the fleet's kill -9 suite meets them here, a kill taking all of a
// process's members at once. A worker restarted with another thread count reads every event once:
// the folders it no longer opens are never committed from, and it names them. pyiceberg counts
// every id after a settling time.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Fleet, type WorkerProcess } from '../e2e/fleet.ts'
import { assertExactlyOnce, badEvery, fastFleet, killAtRandomAndRestart, minute } from './support.ts'

/** The fields of a worker's warnings of WAL folders it does not read. */
function unreadWarnings(worker: WorkerProcess): Array<{ folders: string[] }> {
  return worker
    .lines()
    .filter((line) => String(line.msg).startsWith('WAL folders this worker does not read'))
    .map((line) => ({ folders: line.folders as string[] }))
}

describe('members on threads', { concurrency: false }, () => {
  test('workers of two members killed at random moments and restarted lose and duplicate nothing', async (t) => {
    const fleet = await Fleet.create(t, { ...fastFleet, partitions: 8, threads: 2, commitIntervalSeconds: 3 })
    await Promise.all([fleet.start(), fleet.start()])
    await killAtRandomAndRestart(fleet, 3)
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(4 * minute))

    // One endpoint per process: every member's figures summed, the process's own once; ready when
    // every member is (a rebalance may still be settling).
    const running = fleet.workers.filter((w) => w.running)
    const received = await Promise.all(
      running.map(async (worker) => {
        let metrics = await fleet.metrics(worker)
        for (const end = Date.now() + minute; metrics.get('floe_worker_ready') !== 1 && Date.now() < end; ) {
          await sleep(500)
          metrics = await fleet.metrics(worker)
        }
        assert.equal(metrics.get('floe_worker_ready'), 1, `${worker.id} ready`)
        assert.equal([...metrics.keys()].filter((name) => name === 'floe_process_process_cpu_seconds_total').length, 1)
        return metrics.get('floe_records_received_total{dataset="events"}') ?? 0
      }),
    )
    assert.ok(received.reduce((a, b) => a + b, 0) > 0, `records received: ${received.join(', ')}`)

    // Members drain on SIGTERM as a worker does, and the process exits 0.
    for (const worker of running) worker.kill('SIGTERM')
    assert.deepEqual(
      await Promise.all(running.map((w) => w.exited)),
      running.map(() => 0),
    )
  })

  test('a worker restarted with another thread count reads every event once and names the folders it leaves', async (t) => {
    const fleet = await Fleet.create(t, { ...fastFleet, partitions: 6, commitIntervalSeconds: 3 })
    const rounds = async (threads: number): Promise<WorkerProcess> => {
      const worker = await fleet.start('solo', { FLOE_INGESTION__THREADS: String(threads) })
      await fleet.produce(1500, { batch: 100, badEvery })
      await fleet.nextCommit(3 * minute)
      return worker
    }
    const killed = async (worker: WorkerProcess) => {
      await fleet.produce(500, { batch: 100, badEvery })
      worker.kill('SIGKILL')
      await worker.exited
    }
    await killed(await rounds(2))
    // Fewer threads: the member folders are left, and named.
    const one = await rounds(1)
    await killed(one)
    // More threads: the one-member folder of the dataset is left, and named.
    const three = await rounds(3)
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
    assert.deepEqual(unreadWarnings(one), [{ folders: ['_member-0', '_member-1'] }])
    assert.deepEqual(unreadWarnings(three), [{ folders: ['events'] }])
  })
})
