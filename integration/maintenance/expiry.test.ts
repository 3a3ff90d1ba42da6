// `floe maintain` on the real stack, beside a running worker: a table that Floe committed to
// round after round, and that another engine (pyiceberg) appended to last, loses every snapshot
// past the age limit but main's head and the newest snapshot carrying Floe's progress marker; the
// manifest lists of the removed snapshots are deleted, every data file the head reads stays. The
// worker goes on committing through a second expiry racing its rounds, and pyiceberg then counts
// every id once: Floe's progress came through both.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { datasetGroup } from '../../cli/servers.ts'
import { loadConfig } from '../../shared/config/index.ts'
import { parseTableMetadata, type TableMetadata } from '../../shared/iceberg/metadata/index.ts'
import { offsetsKey } from '../../shared/progress/index.ts'
import { localPath } from '../../shared/storage/index.ts'
import { floeCommand } from '../cli/support.ts'
import { assertEveryIdOnce, Fleet } from '../e2e/fleet.ts'
import { endpoints } from '../harness.ts'

const run = promisify(execFile)
const minute = 60_000
const otherWriter = join(import.meta.dirname, '..', 'faults', 'other_writer.py')

/** The table as the catalog's current metadata file says (the stack's REST warehouse is local). */
async function metadataOf(fleet: Fleet): Promise<TableMetadata> {
  const report = await fleet.waitUntilAllSeen(2 * minute)
  return parseTableMetadata(readFileSync(localPath(report.metadataLocation), 'utf8'))
}

test('floe maintain expires old snapshots beside a running worker, keeping its progress and every file the head reads', async (t) => {
  // Every snapshot is past the age limit a second after it was made; no partition qualifies for
  // compaction (compaction.test.ts has its own), so the expiry's counts are the rounds'.
  const extraConfig = 'maintenance:\n  maxSnapshotAgeHours: 0.0002\n  minSnapshotsToKeep: 1\n  minInputFiles: 1000\n'
  const fleet = await Fleet.create(t, { partitions: 2, commitIntervalSeconds: 2, extraConfig })
  const group = datasetGroup(loadConfig(fleet.config), 'events')
  const marker = offsetsKey(group)
  await fleet.start()
  for (let i = 0; i < 3; i++) {
    await fleet.produce(200)
    await fleet.waitUntilAllSeen(2 * minute)
  }
  const pyiceberg = Array.from({ length: 50 }, (_, i) => `pyiceberg-${i}`)
  await run(endpoints().python, [otherWriter, '--uri', endpoints().rest.uri, fleet.table, 'append', '--count', '50'])
  fleet.ids.push(...pyiceberg)
  await sleep(1500)

  const before = await metadataOf(fleet)
  assert.ok(before.snapshots.length >= 4, `rounds and the other writer made ${before.snapshots.length} snapshots`)
  const head = before['current-snapshot-id']
  assert.equal(
    before.snapshots.find((s) => s['snapshot-id'] === head)?.summary[marker],
    undefined,
    'the head is the other writer’s',
  )
  const newestMarker = before.snapshots.filter((s) => s.summary[marker] !== undefined).at(-1)
  assert.ok(newestMarker, 'Floe committed rounds')

  const dry = await floeCommand(['maintain', '--config', fleet.config, '--dry-run'])
  assert.equal(dry.code, 0, dry.stderr)
  const expected = before.snapshots.length - 2
  assert.match(
    dry.stdout,
    new RegExp(`dry run: would expire ${expected} of ${before.snapshots.length} snapshot\\(s\\)`),
  )
  assert.equal((await metadataOf(fleet)).snapshots.length, before.snapshots.length, 'the dry run removed nothing')

  const done = await floeCommand(['maintain', '--config', fleet.config, '--dataset', 'events'])
  assert.equal(done.code, 0, done.stderr)
  t.diagnostic(done.stdout.trim())
  assert.match(done.stdout, new RegExp(`expired ${expected} snapshot\\(s\\), ${before.snapshots.length} -> 2;`))
  assert.match(done.stdout, /0 data file\(s\) of 0 bytes/)
  const after = await metadataOf(fleet)
  assert.deepEqual(
    after.snapshots.map((s) => s['snapshot-id']).sort(),
    [head, newestMarker['snapshot-id']].sort(),
    'main’s head and the newest marker snapshot are kept',
  )
  for (const snapshot of before.snapshots) {
    const kept = after.snapshots.some((s) => s['snapshot-id'] === snapshot['snapshot-id'])
    assert.equal(existsSync(localPath(snapshot['manifest-list'])), kept, `manifest list of ${snapshot['snapshot-id']}`)
  }

  // The worker keeps committing; a second expiry races its rounds.
  const racing = fleet.produce(600, { batch: 50 })
  await sleep(2500)
  const again = await floeCommand(['maintain', '--config', fleet.config])
  assert.equal(again.code, 0, again.stderr)
  await racing
  const report = await fleet.waitSettled(3 * minute)
  assertEveryIdOnce(fleet, report)
  const second = await fleet.start()
  await fleet.waitFor(() => second.logged('worker started'), minute, 'a second worker to start')
  await fleet.produce(200)
  assertEveryIdOnce(fleet, await fleet.waitSettled(3 * minute))
})
