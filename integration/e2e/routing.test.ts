// A dataset routed by a field into many tables, on the real stack: three topics matched by a
// pattern, their events routed by `kind` into 50 tables made on first use, one commit per table
// per round and the dataset's ledger after them. Proven as the one-table fleet is: pyiceberg reads
// every table the route made after a settling time and finds every id exactly once, in its own
// table, through kill -9 of the coordinator and of a participant mid-round and the REST catalog
// frozen while a round commits its tables (some committed, the rest and the ledger not yet). The
// workers keep few tables open, so tables are evicted (closed early) all along. The route into
// 1,000 tables, which freezes nothing, is many-tables.test.ts.
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { assertEveryIdOnce, Fleet } from './fleet.ts'
import { evictions, killCoordinatorMidRound } from './routed-commits.ts'

const minute = 60_000
const tables = 50

describe('a dataset routed into many tables on the real stack', { concurrency: false }, () => {
  test('three topics into 50 tables through kill -9 and a frozen catalog, every id once in its table', async (t) => {
    const fleet = await Fleet.create(t, {
      topicCount: 3,
      topicPattern: true,
      partitions: 3,
      commitIntervalSeconds: 2,
      route: { kindOf: (n) => `k${n % tables}`, extra: ', maxOpenTables: 8' },
    })
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    const produceToEvery = (count: number) =>
      Promise.all(fleet.topics.map((topic) => fleet.produce(count, { topic, batch: 100 })))
    await produceToEvery(600)
    await fleet.nextCommit(3 * minute)
    for (let kill = 0; kill < 2; kill++) {
      // a wave in flight while the coordinator, then a participant, dies mid-round
      const wave = produceToEvery(400)
      const coordinator = await fleet.coordinator()
      const victim = kill === 0 ? coordinator : fleet.workers.find((w) => w.running && w !== coordinator)
      if (!victim) throw new Error('no participant to kill')
      await sleep(Math.floor(Math.random() * 3000))
      victim.kill('SIGKILL')
      await victim.exited
      await fleet.restart(victim)
      await wave
    }
    // the catalog stops answering between two tables' commits of a round, and the coordinator dies
    // there: some tables hold the round, the others and the ledger do not. The next coordinator's
    // round finds the tables that hold it ahead of the ledger; they refuse the rotations sent
    // again, and the partitions are read again from the ledger, skipping what those tables hold.
    const coordinator = await killCoordinatorMidRound(t, fleet, () => produceToEvery(600))
    await fleet.restart(coordinator)
    await produceToEvery(300)
    const report = await fleet.waitSettled(6 * minute)
    assertEveryIdOnce(fleet, report)
    if (report.tables !== tables) throw new Error(`the route made ${report.tables} tables, not ${tables}`)
    // the kill between tables was the case it meant to be: a round refused rotations some tables held
    const refused = fleet.workers
      .flatMap((w) => w.lines())
      .some((l) =>
        l.msg === 'round committed' || l.msg === 'round rejected' ? (l.rejected as unknown[]).length > 0 : false,
      )
    if (!refused) throw new Error('no round refused a rotation after the kill between tables')
    const evicted = await Promise.all(fleet.workers.filter((w) => w.running).map((w) => evictions(fleet, w)))
    if (!evicted.some((count) => count > 0)) throw new Error('no worker evicted a table')
  })
})
