// A commit whose outcome was unknown is found however late it lands. A real `floe run` worker
// talks to the real REST catalog through a fault proxy (tcp-proxy.ts) that holds the worker's
// commit request (POST .../tables/events, and every byte after it) past the request timeout:
// the worker hears nothing, the request reaches the catalog later and lands. Twice:
//
// 1. held shorter than the commit's retry loop: a reload inside the loop finds the commit id, the
//    round is reported committed (foundAfterUnknownOutcome) and never appended again;
// 2. held past the whole loop: the round gives up with its outcome unknown, a later round's table
//    read finds it, and it is acknowledged late (`round committed late`, metric outcome
//    `committed-late`), never reported failed.
//
// pyiceberg then counts every id exactly once, after a settling time of a few commit intervals.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { assertEveryIdOnce, Fleet, type WorkerProcess } from '../e2e/fleet.ts'
import { endpoints } from '../harness.ts'
import { TcpProxy } from './tcp-proxy.ts'

const minute = 60_000
const commitIntervalSeconds = 2
const requestTimeoutSeconds = 3
// The loop: attempt, wait 0.3-0.6 s, attempt..., giving up after 6 s: about 10 s with timeouts.
const retryProperties = `    tableProperties:
      commit.retry.num-retries: "3"
      commit.retry.min-wait-ms: "300"
      commit.retry.max-wait-ms: "600"
      commit.retry.total-timeout-ms: "6000"`

/** The first chunk of a commit of the dataset's table: its request line. */
function isCommit(chunk: Buffer): boolean {
  return /^POST \S*\/tables\/events[ ?]/.test(chunk.toString('latin1', 0, 200))
}

function linesOf(worker: WorkerProcess, message: string): Record<string, unknown>[] {
  return worker.lines().filter((line) => line.msg === message)
}

async function metricsOf(worker: WorkerProcess): Promise<string> {
  const started = worker.lines().find((line) => line.msg === 'worker started')
  const port = started?.metricsPort
  assert.equal(typeof port, 'number', 'the worker logs its metrics port')
  const response = await fetch(`http://127.0.0.1:${port as number}/metrics`)
  return response.text()
}

describe('a commit whose outcome was unknown', { concurrency: false }, () => {
  test('is found however late it lands, reported committed, and its rows land exactly once', async (t) => {
    const rest = new URL(endpoints().rest.uri)
    const proxy = await TcpProxy.start({ targetPort: Number(rest.port), targetHost: rest.hostname })
    t.after(() => proxy.close())
    const fleet = await Fleet.create(t, {
      partitions: 3,
      commitIntervalSeconds,
      extraConfig: retryProperties,
      env: {
        FLOE_CATALOG__URI: `${rest.protocol}//127.0.0.1:${proxy.port}${rest.pathname.replace(/\/$/, '')}`,
        FLOE_CATALOG__REQUEST_TIMEOUT_SECONDS: String(requestTimeoutSeconds),
      },
    })
    const worker = await fleet.start()
    await fleet.produce(600)
    await fleet.waitFor(() => linesOf(worker, 'round committed').length > 0, 2 * minute, 'a first round')

    // 1. Held for 4.5 s: past the 3 s request timeout, within the retry loop. The hold ends for every
    // connection at once, so the loop's reload may be answered before the held commit is applied,
    // and its next attempt may then win the compare-and-set (the held one loses it): committed once,
    // but not found. Such a round proves nothing here, so the hold is tried again, three times at most.
    const found = () => linesOf(worker, 'round committed').some((line) => line.foundAfterUnknownOutcome === true)
    for (let hold = 1; !found(); hold++) {
      if (hold > 3) throw new Error('three held commits, and no round was found after its unknown outcome')
      const committed = linesOf(worker, 'round committed').length
      const held = proxy.holdFrom('up', isCommit, 4500)
      await fleet.produce(600)
      await held
      await fleet.waitFor(
        () => linesOf(worker, 'round committed').length > committed,
        minute,
        'the held round to commit',
      )
    }

    // 2. Held for 20 s: past the whole retry loop.
    const fired = proxy.holdFrom('up', isCommit, 20_000)
    await fleet.produce(600)
    await fired
    await fleet.waitFor(
      () => linesOf(worker, 'round outcome unknown; later rounds look for its commit').length > 0,
      minute,
      'the round to give up with its outcome unknown',
    )
    const unknown = linesOf(worker, 'round outcome unknown; later rounds look for its commit')[0]
    const lateMessage = 'round committed late: its commit landed after the round gave up; acknowledged now'
    // The next round that reads the table finds it; on a loaded machine that read may time out a few times first.
    await fleet.waitFor(() => linesOf(worker, lateMessage).length > 0, 2 * minute, 'the late round to be found')
    const late = linesOf(worker, lateMessage)[0]
    assert.equal(late?.commitId, unknown?.commitId)
    assert.equal(late?.outcome, 'committed')
    assert.ok(Number(late?.partitions) > 0)

    await fleet.produce(600)
    const report = await fleet.waitSettled(2 * minute, 4 * commitIntervalSeconds * 1000)
    assertEveryIdOnce(fleet, report)
    // Each held round is one snapshot: found, never appended a second time.
    const byCommit = new Map<string, number>()
    for (const snapshot of report.snapshots) {
      const id = snapshot.summary['floe.commit-id']
      if (id) byCommit.set(id, (byCommit.get(id) ?? 0) + 1)
    }
    assert.ok([...byCommit.values()].every((count) => count === 1))
    assert.equal(byCommit.get(String(unknown?.commitId)), 1)

    // Never reported failed; counted as unknown, then committed late.
    const failed = linesOf(worker, 'round failed').filter((line) => line.commitId === unknown?.commitId)
    assert.deepEqual(failed, [])
    const metrics = await metricsOf(worker)
    // (a loaded machine may time out another request too: at least the held one is counted)
    assert.match(metrics, /floe_rounds_total\{dataset="events",outcome="committed-late"\} [1-9]/)
    assert.match(metrics, /floe_rounds_total\{dataset="events",outcome="unknown"\} [1-9]/)
  })
})
