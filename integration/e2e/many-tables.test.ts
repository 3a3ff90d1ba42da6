// One worker routing by a field into 1,000 tables on the real stack (the SQL catalog), keeping at
// most 100 open: pyiceberg reads every table after a settling time and finds every id once, in its
// own table, and the worker's evictions counter shows the bound held. It freezes nothing, so it
// runs beside other test files; routing.test.ts holds the route through kills and a frozen catalog.
import { test } from 'node:test'
import { assertEveryIdOnce, Fleet } from './fleet.ts'
import { evictions } from './routed-commits.ts'

const minute = 60_000

test('1,000 tables from one worker that keeps at most 100 open, every id once in its table', async (t) => {
  const many = 1000
  const fleet = await Fleet.create(t, {
    catalog: 'sql',
    partitions: 2,
    commitIntervalSeconds: 3,
    route: { kindOf: (n) => `k${n % many}`, extra: ', maxOpenTables: 100' },
  })
  const worker = await fleet.start()
  await fleet.produce(2 * many, { batch: 500 })
  const report = await fleet.waitSettled(8 * minute)
  assertEveryIdOnce(fleet, report)
  if (report.tables !== many) throw new Error(`the route made ${report.tables} tables, not ${many}`)
  // the bound held: a table opening with 100 open closed the least recently used ones first
  if ((await evictions(fleet, worker)) < many - 100) throw new Error('too few tables evicted')
})
