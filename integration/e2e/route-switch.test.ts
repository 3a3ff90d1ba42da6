// A route changed while the fleet runs, on the real stack (docs/architecture.md, "A route changed
// while the fleet runs"): three workers route by `kind`; the REST catalog freezes as soon as a
// round has committed a table, and the coordinator is killed there, so a table holds records the
// ledger does not vouch for; then the workers are restarted one by one (kill -9) with a route by
// `zone`, which sends each record to another table of the same names. The new route's coordinator
// switches the ledger (fences the old route's tables, records their markers above the ledger as
// floors), the old workers' statuses are ignored until they restart, and the new ones skip what
// the floors say the old route's tables hold. pyiceberg then finds every id once, in the table of
// one of the two routes.
import { readFileSync, writeFileSync } from 'node:fs'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { assertEveryIdOnce, Fleet } from './fleet.ts'
import { killCoordinatorMidRound } from './routed-commits.ts'

const minute = 60_000
const kinds = 4
const kindOf = (n: number) => `k${n % kinds}`
const zoneOf = (n: number) => `k${(n + 1) % kinds}`

test("a route changed by a rolling restart after a round half committed: every id once, in either route's table", async (t) => {
  const fleet = await Fleet.create(t, { partitions: 3, commitIntervalSeconds: 2, route: { kindOf } })
  const event = (id: string, n: number) => ({
    id,
    ts: new Date(Date.UTC(2026, 10, 28)).toISOString(),
    user: { id: n },
    kind: kindOf(n),
    zone: zoneOf(n),
    amount: n / 10,
  })
  const produce = (count: number) => fleet.produce(count, { batch: 100, event })
  const workers = await Promise.all([fleet.start(), fleet.start(), fleet.start()])
  await produce(600)
  await fleet.nextCommit(3 * minute)

  // A round half committed: the catalog stops between two tables' commits and the coordinator dies.
  const coordinator = await killCoordinatorMidRound(t, fleet, () => produce(600))

  // The route changes: every worker started from now on routes by zone.
  const config = readFileSync(fleet.config, 'utf8')
  if (!config.includes('route: {field: kind,')) throw new Error('the fleet config has no route by kind')
  writeFileSync(fleet.config, config.replace('route: {field: kind,', 'route: {field: zone,'))
  await fleet.restart(coordinator)
  for (const worker of workers.filter((w) => w !== coordinator)) {
    const more = produce(300)
    await sleep(3000)
    worker.kill('SIGKILL')
    await worker.exited
    await fleet.restart(worker)
    await more
  }
  await produce(300)

  // Each id belongs in its kind's table (read under the old route) or its zone's (under the new).
  for (const [n, id] of fleet.ids.entries())
    fleet.tableOf.set(id, `${fleet.table}_${kindOf(n)}|${fleet.table}_${zoneOf(n)}`)
  const report = await fleet.waitSettled(6 * minute)
  assertEveryIdOnce(fleet, report)
  const lines = fleet.workers.flatMap((w) => w.lines())
  const switched = lines.filter((l) => l.msg === 'switched the ledger to this route')
  if (switched.length === 0) throw new Error('no coordinator switched the ledger to the new route')
  t.diagnostic(
    `switches: ${switched.map((l) => `generation ${String(l.generation)}, ${String(l.fencedTables)} tables fenced, ${String(l.floors)} floors`).join('; ')}`,
  )
})
