// Other writers may change the table while Floe runs. Two real `floe run` workers ingest while
// another engine (pyiceberg, other_writer.py) adds an optional column, evolves the partition spec
// (adds identity(kind)), appends rows of its own and expires every snapshot but main's head.
// Floe keeps committing: segments opened after the change follow the new spec (read from each
// data file's manifest entry), nothing is lost or duplicated (pyiceberg counts Floe's ids and its
// own, after a settling time), and Floe's progress marker survives the expiry.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { describe, test } from 'node:test'
import { promisify } from 'node:util'
import { assertEveryIdOnce, Fleet } from '../e2e/fleet.ts'
import { endpoints } from '../harness.ts'

const run = promisify(execFile)
const minute = 60_000
const commitIntervalSeconds = 2

interface OtherWriterResult {
  schemaId: number
  specId: number
  snapshots: number
  expired?: number
  files?: { path: string; specId: number; ids: string[] }[]
}

async function otherWriter(fleet: Fleet, step: string, ...extra: string[]): Promise<OtherWriterResult> {
  const { stdout } = await run(
    endpoints().python,
    [`${import.meta.dirname}/other_writer.py`, '--uri', endpoints().rest.uri, fleet.table, step, ...extra],
    { maxBuffer: 64 * 1024 * 1024 },
  )
  return JSON.parse(stdout) as OtherWriterResult
}

describe('other writers changing the table', { concurrency: false }, () => {
  test('Floe follows a new column and spec, keeps every row once, and keeps its progress through expiry', async (t) => {
    const fleet = await Fleet.create(t, { partitions: 3, commitIntervalSeconds })
    const workers = [await fleet.start(), await fleet.start()]
    // A worker that starts after the change reads the new shape at start and has no change to log.
    await fleet.waitFor(() => workers.every((w) => w.logged('worker started')), 3 * minute, 'both workers to start')
    await fleet.produce(900)
    await fleet.waitUntilAllSeen(2 * minute)
    const before = new Set(fleet.ids)

    // The other engine changes the table between two of Floe's rounds (retrying when Floe wins).
    await otherWriter(fleet, 'add-column')
    const evolved = await otherWriter(fleet, 'evolve-spec')
    assert.equal(evolved.schemaId, 1)
    assert.equal(evolved.specId, 1)
    const changed = 'the table changed: new segments follow its schema and partition spec'
    await fleet.waitFor(() => workers.every((w) => w.logged(changed)), minute, 'every worker to see the change')
    // A segment open when its worker saw the change finishes under the old spec, and END-COMMIT
    // rotates it: two more rounds end every segment opened before the change, so each event
    // produced from here on lands in a file of the new spec.
    const roundsEnded = () =>
      workers.reduce(
        (n, w) => n + w.lines().filter((l) => l.msg === 'round committed' || l.msg === 'round empty').length,
        0,
      )
    const seen = roundsEnded()
    await fleet.waitFor(() => roundsEnded() >= seen + 2, minute, 'two rounds after the change')

    await fleet.produce(900)
    const pyiceberg = Array.from({ length: 150 }, (_, i) => `pyiceberg-${i}`)
    await otherWriter(fleet, 'append', '--prefix', 'pyiceberg-', '--count', String(pyiceberg.length))
    await fleet.produce(600)
    // wait until Floe committed past pyiceberg's snapshot, then drop every older snapshot
    await fleet.waitUntilAllSeen(2 * minute)
    const expired = await otherWriter(fleet, 'expire')
    assert.ok((expired.expired ?? 0) > 0, 'older snapshots were expired')
    await fleet.produce(600)

    fleet.ids.push(...pyiceberg)
    const report = await fleet.waitSettled(2 * minute, 4 * commitIntervalSeconds * 1000)
    assertEveryIdOnce(fleet, report)

    // The progress marker: in the table's properties after expiry, every produced record counted.
    const markers = Object.entries(report.properties).filter(([key]) => key.startsWith('floe.offsets.'))
    assert.equal(markers.length, 1)
    const offsets = JSON.parse(markers[0]?.[1] ?? '{}') as Record<string, Record<string, number>>
    const committed = Object.values(offsets[fleet.topic] ?? {}).reduce((sum, offset) => sum + offset, 0)
    assert.equal(committed, fleet.ids.length - pyiceberg.length)

    // Files Floe wrote before the change follow spec 0, after it spec 1.
    const { files = [] } = await otherWriter(fleet, 'files')
    const floeIds = new Set(fleet.ids.slice(0, fleet.ids.length - pyiceberg.length))
    const floeFiles = files.filter((file) => file.ids.some((id) => floeIds.has(id)))
    const specsOf = (old: boolean) =>
      new Set(floeFiles.filter((file) => file.ids.every((id) => before.has(id) === old)).map((file) => file.specId))
    assert.ok(
      floeFiles.every((file) => file.ids.every((id) => before.has(id)) || file.ids.every((id) => !before.has(id))),
    )
    assert.deepEqual(specsOf(true), new Set([0]))
    assert.deepEqual(specsOf(false), new Set([1]))
  })
})
