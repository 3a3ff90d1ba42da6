// Servers that hang or go away, on the real stack: the Iceberg REST catalog frozen past the commit
// timeout (the commit request sits in its socket and lands when it wakes, after the coordinator
// gave up on it), the Kafka broker frozen (every session times out at once when it wakes), and the
// broker killed and started again on the same data; a worker killed while its round's commit hangs
// on the frozen catalog, restarted on its WAL (recovery finds the ready files the crash left); a
// worker that loses the broker says so on /readyz and hears the control topic again when it wakes.
// Each ends with pyiceberg counting every id after a settling time. They freeze or restart a server
// every test uses, so this file runs alone.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Fleet, type WorkerProcess } from '../e2e/fleet.ts'
import {
  assertExactlyOnce,
  badEvery,
  fastFleet,
  freeze,
  minute,
  perPartition,
  recovered,
  restartKafka,
} from './support.ts'

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

  test('a worker killed while its round waits on a frozen catalog recovers its ready files', async (t) => {
    const fleet = await Fleet.create(t, { ...perPartition, commitIntervalSeconds: 3 })
    const worker = await fleet.start('solo')
    await fleet.produce(2000, { badEvery })
    await fleet.nextCommit(3 * minute)
    await fleet.produce(2000, { badEvery })
    // The next round rotates and uploads, then its commit hangs: the ready files stay in the WAL.
    const thaw = freeze(t, 'iceberg-rest')
    await sleep(6000)
    worker.kill('SIGKILL')
    await worker.exited
    thaw()
    const again = await fleet.restart(worker)
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute))
    const found = recovered([again])
    t.diagnostic(`WAL files found at restart: ${JSON.stringify(found)}`)
    assert.ok(found.reused + found.deleted > 0, 'the restarted worker found the files the crash left')
  })

  test('a worker that loses the broker says so on /readyz, hears the control topic again, and loses nothing', async (t) => {
    const fleet = await Fleet.create(t, { partitions: 3, commitIntervalSeconds: 2 })
    const worker = await fleet.start()
    await fleet.waitFor(() => worker.logged('worker started'), 90_000, 'the worker started')
    const port = metricsPort(worker)
    await until('ready', 60_000, async () => (await readyz(port)) === 200)
    await fleet.produce(1500)
    let result = await fleet.waitUntilAllSeen(90_000)
    assert.equal(result.ids?.missing, 0, JSON.stringify(result.ids))

    const thaw = freeze(t, 'kafka')
    await until('/readyz says not ready', 60_000, async () => (await readyz(port)) === 503)
    const text = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.text())
    assert.match(text, /cannot hear the control topic/)
    thaw()
    await until('/readyz says ready again', 120_000, async () => (await readyz(port)) === 200)
    assert.ok(worker.running)

    await fleet.produce(1500)
    result = await fleet.waitSettled(120_000, 8000)
    assert.deepEqual(
      { missing: result.ids?.missing, duplicated: result.ids?.duplicated, unexpected: result.ids?.unexpected },
      { missing: 0, duplicated: 0, unexpected: 0 },
    )
    assert.equal(result.rows, 3000)
  })
})

/** The port of the worker's /metrics and /readyz, from its start line. */
function metricsPort(worker: WorkerProcess): number {
  const line = worker.lines().find((l) => l.msg === 'worker started')
  assert.ok(line, 'the worker started')
  return Number(line.metricsPort)
}

/** The status /readyz answers, 0 when it does not answer. */
async function readyz(port: number): Promise<number> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })
    await response.arrayBuffer()
    return response.status
  } catch {
    return 0
  }
}

async function until(what: string, timeoutMs: number, probe: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(250)
  }
}
