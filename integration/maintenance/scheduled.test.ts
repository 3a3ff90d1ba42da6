// Maintenance by the coordinator on the real stack: a `floe run` worker with maintenance enabled
// (a run every 3 s, every snapshot old after a second) commits round after round while its
// coordinator compacts, expires and cleans up between them. The table's snapshots stay few while
// the rounds pile up, the newest snapshot carrying Floe's progress marker is always kept (and
// counts exactly what was produced), the first run waits an interval after the coordinator
// started, the runs and the table's gauges show on /metrics, and pyiceberg counts every id once
// after a settling time. A drain then ends the worker without waiting for a run.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { datasetGroup } from '../../cli/servers.ts'
import { lastRunProperty } from '../../coordinator/index.ts'
import { loadConfig } from '../../shared/config/index.ts'
import { parseTableMetadata, type TableMetadata } from '../../shared/iceberg/metadata/index.ts'
import { findProgress, type Progress } from '../../shared/progress/index.ts'
import { localPath } from '../../shared/storage/index.ts'
import { assertEveryIdOnce, Fleet, type WorkerProcess } from '../e2e/fleet.ts'
import { endpoints } from '../harness.ts'

const minute = 60_000
const intervalMs = 3_000

/** The table as the REST catalog has it now (its warehouse is local): no pyiceberg, so it is quick. */
async function tableNow(fleet: Fleet): Promise<TableMetadata> {
  const [namespace, name] = fleet.table.split('.')
  const answer = await fetch(`${endpoints().rest.uri}/v1/namespaces/${namespace}/tables/${name}`)
  assert.equal(answer.status, 200, `load ${fleet.table}`)
  const { 'metadata-location': location } = (await answer.json()) as { 'metadata-location': string }
  return parseTableMetadata(readFileSync(localPath(location), 'utf8'))
}

/** The records a marker says are committed: its offsets summed over the topic's partitions. */
function committedOffsets(progress: Progress, topic: string): bigint {
  return [...(progress.get(topic)?.values() ?? [])].reduce((sum, offset) => sum + offset, 0n)
}

const at = (line: Record<string, unknown>) => Date.parse(String(line.time))
const linesOf = (worker: WorkerProcess, message: string) => worker.lines().filter((l) => l.msg === message)

test('the coordinator maintains its table between rounds: snapshots stay few, the marker snapshot stays, every id once', async (t) => {
  const extraConfig =
    'maintenance:\n  enabled: true\n  intervalMinutes: 0.05\n  maxSnapshotAgeHours: 0.0002\n  minSnapshotsToKeep: 1\n'
  // One member, whatever FLOE_TEST_THREADS says: the test counts rounds from the start, and
  // members that join the group seconds apart rebalance it for seconds before rounds go on.
  const fleet = await Fleet.create(t, { partitions: 2, commitIntervalSeconds: 1, extraConfig, threads: 1 })
  const group = datasetGroup(loadConfig(fleet.config), 'events')
  const worker = await fleet.start()
  await fleet.waitFor(() => worker.logged('coordinator started'), minute, 'the coordinator to start')

  // Round after round with data, the table read between them: once Floe committed, its progress is
  // read from one of its own snapshots every time (an expired marker snapshot would leave only the
  // table property), and it only moves forward.
  const snapshotCounts: number[] = []
  let progressed = 0n
  for (let i = 0; i < 20; i++) {
    await fleet.produce(40, { batch: 40 })
    await sleep(1_000)
    const metadata = await tableNow(fleet)
    snapshotCounts.push(metadata.snapshots.length)
    if (metadata.snapshots.length === 0) continue
    const found = findProgress(metadata, group)
    assert.equal(found.source.kind, 'snapshot', `the marker snapshot is kept (${snapshotCounts.length}. read)`)
    const now = committedOffsets(found.progress, fleet.topic)
    assert.ok(now >= progressed, 'progress never moves back')
    progressed = now
  }
  const report = await fleet.waitSettled(2 * minute)
  assertEveryIdOnce(fleet, report)

  const committed = linesOf(worker, 'round committed').length
  const runs = linesOf(worker, 'maintenance run finished')
  t.diagnostic(`${committed} rounds committed, ${runs.length} maintenance runs; snapshots seen: ${snapshotCounts}`)
  assert.deepEqual(linesOf(worker, 'maintenance run failed'), [], 'no run failed')
  assert.ok(committed >= 15, `${committed} rounds committed`)
  assert.ok(runs.length >= 3, `${runs.length} maintenance runs`)
  const most = Math.max(...snapshotCounts.slice(4))
  assert.ok(most <= 15 && most < committed / 2, `at most ${most} snapshots while ${committed} rounds committed`)

  // The first run waited an interval after the coordinator started.
  const started = at(linesOf(worker, 'coordinator started')[0] ?? {})
  const first = runs[0] ?? {}
  assert.ok(at(first) - Number(first.durationMs) >= started + intervalMs - 50, 'the first run waited an interval')
  const did = (step: string, key: string) => runs.some((r) => Number((r[step] as Record<string, unknown>)[key]) > 0)
  assert.ok(did('expiry', 'expired'), 'runs expired snapshots')
  assert.ok(did('compaction', 'filesRewritten'), 'runs compacted small files')

  // Floe's progress is read from its own snapshot, and counts exactly what was produced.
  const table = await tableNow(fleet)
  const progress = findProgress(table, group)
  assert.equal(progress.source.kind, 'snapshot', 'the marker snapshot was kept')
  assert.equal(committedOffsets(progress.progress, fleet.topic), BigInt(fleet.ids.length))
  assert.match(table.properties[lastRunProperty] ?? '', /^\d+$/, 'the last run is recorded in the table')

  // The gauges follow the table: once ingest is quiet they match main's snapshot.
  const labels = '{dataset="events"}'
  let metrics: Map<string, number>
  const deadline = Date.now() + 30_000
  for (;;) {
    const current = await tableNow(fleet)
    const head = current.snapshots.find((s) => s['snapshot-id'] === current['current-snapshot-id'])
    metrics = await fleet.metrics(worker)
    if (metrics.get(`floe_table_data_files${labels}`) === Number(head?.summary['total-data-files'])) break
    assert.ok(Date.now() < deadline, 'floe_table_data_files matches the table')
    await sleep(1_000)
  }
  assert.ok((metrics.get(`floe_table_average_file_bytes${labels}`) ?? 0) > 0, 'the average file size')
  assert.ok((metrics.get(`floe_maintenance_runs_total{dataset="events",outcome="ok"}`) ?? 0) >= 3)
  assert.ok((metrics.get(`floe_maintenance_duration_seconds_count${labels}`) ?? 0) >= 3)

  // A drain waits for its last round, not for a run.
  const draining = Date.now()
  worker.kill('SIGTERM')
  assert.equal(await worker.exited, 0)
  t.diagnostic(`drained in ${Date.now() - draining} ms`)
})
