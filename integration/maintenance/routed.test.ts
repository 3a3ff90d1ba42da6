// Maintenance of a routed dataset on the real stack: a `floe run` worker routing into three tables
// with maintenance enabled (a run every 3 s, every snapshot old after a second) commits round
// after round while its coordinator compacts and expires the ledger and every table the route
// made, one after another in each run. The routed tables' snapshots stay few while the rounds
// pile up, each keeps the snapshot carrying its marker, runs say they maintained four tables,
// `floe maintain` then does the same by hand, and pyiceberg finds every id once in its own table
// after a settling time.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { datasetGroup } from '../../cli/servers.ts'
import { readRouteRecord } from '../../coordinator/index.ts'
import { loadConfig } from '../../shared/config/index.ts'
import { ancestorsOfRef, parseTableMetadata, type TableMetadata } from '../../shared/iceberg/metadata/index.ts'
import { findMarkerIn, generationOffsetsKey } from '../../shared/progress/index.ts'
import { localPath } from '../../shared/storage/index.ts'
import { floeCommand } from '../cli/support.ts'
import { assertEveryIdOnce, Fleet } from '../e2e/fleet.ts'
import { endpoints } from '../harness.ts'

const minute = 60_000
const kinds = ['k0', 'k1', 'k2']

/** The table as the REST catalog has it now (its warehouse is local). */
async function tableNow(table: string): Promise<TableMetadata> {
  const [namespace, name] = table.split('.')
  const answer = await fetch(`${endpoints().rest.uri}/v1/namespaces/${namespace}/tables/${name}`)
  assert.equal(answer.status, 200, `load ${table}`)
  const { 'metadata-location': location } = (await answer.json()) as { 'metadata-location': string }
  return parseTableMetadata(readFileSync(localPath(location), 'utf8'))
}

test("the coordinator and floe maintain keep a routed dataset's tables compacted and expired, every id once in its table", async (t) => {
  const extraConfig =
    'maintenance:\n  enabled: true\n  intervalMinutes: 0.05\n  maxSnapshotAgeHours: 0.0002\n  minSnapshotsToKeep: 1\n'
  // One member, whatever FLOE_TEST_THREADS says: the test counts rounds from the start, and
  // members that join the group seconds apart rebalance it for seconds before rounds go on.
  const fleet = await Fleet.create(t, {
    partitions: 2,
    threads: 1,
    commitIntervalSeconds: 1,
    extraConfig,
    route: { kindOf: (n) => kinds[n % kinds.length] as string },
  })
  const group = datasetGroup(loadConfig(fleet.config), 'events')
  const worker = await fleet.start()
  await fleet.waitFor(() => worker.logged('coordinator started'), minute, 'the coordinator to start')
  const tables = kinds.map((kind) => `${fleet.table}_${kind}`)

  const most = new Map<string, number>()
  for (let i = 0; i < 20; i++) {
    await fleet.produce(60, { batch: 60 })
    await sleep(1_000)
    if (i < 6) continue
    // a routed table's marker is keyed by the route generation the ledger is at
    const generation = readRouteRecord(await tableNow(fleet.table), group)?.generation ?? 0
    const markerKey = generationOffsetsKey(group, generation)
    for (const table of tables) {
      const metadata = await tableNow(table)
      most.set(table, Math.max(most.get(table) ?? 0, metadata.snapshots.length))
      const marker = findMarkerIn(metadata, markerKey, ancestorsOfRef(metadata))
      assert.equal(marker.source.kind, 'snapshot', `${table} keeps its marker snapshot`)
    }
  }
  const report = await fleet.waitSettled(2 * minute)
  assertEveryIdOnce(fleet, report)

  const committed = worker.lines().filter((l) => l.msg === 'round committed').length
  const runs = worker.lines().filter((l) => l.msg === 'maintenance run finished')
  t.diagnostic(`${committed} rounds, ${runs.length} runs; most snapshots seen per table: ${[...most.values()]}`)
  assert.deepEqual(
    worker
      .lines()
      .filter((l) => l.msg === 'maintenance run failed' || l.msg === 'maintenance of a routed table failed'),
    [],
  )
  assert.ok(runs.length >= 3, `${runs.length} maintenance runs`)
  assert.ok(
    runs.every((run) => run.tables === 1 + kinds.length),
    'every run maintained the ledger and the three routed tables',
  )
  const did = (step: string, key: string) => runs.some((r) => Number((r[step] as Record<string, unknown>)[key]) > 0)
  assert.ok(did('compaction', 'filesRewritten'), 'runs compacted small files')
  assert.ok(did('expiry', 'expired'), 'runs expired snapshots')
  for (const [table, count] of most) {
    assert.ok(count <= 15 && count < committed / 2, `${table}: at most ${count} snapshots over ${committed} rounds`)
  }

  // by hand, beside the running worker: the ledger's lines, then each routed table's
  const done = await floeCommand(['maintain', '--config', fleet.config])
  assert.equal(done.code, 0, done.stderr)
  t.diagnostic(done.stdout.trim())
  for (const table of tables)
    assert.ok(done.stdout.includes(`(table ${table}): orphans:`), `floe maintain did ${table}`)
  assert.match(done.stdout, /dataset events: 3 of 3 routed table\(s\) maintained/)
  assertEveryIdOnce(fleet, await fleet.waitSettled(2 * minute))
})
