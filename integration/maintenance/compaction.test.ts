// `floe maintain` compacts a table beside a running worker on the real stack: many one-second
// rounds leave a partition with small files; a first compaction is killed with SIGKILL after it
// uploaded its new files and before its commit; the worker keeps committing while a second
// compaction runs to the end, so the replace commit races the worker's appends. Afterwards the
// partition holds the files the target size implies plus the rounds since, pyiceberg counts every
// id once after a settling time, Floe's progress marker counts exactly what was produced, and the
// killed run's uploads are unreferenced orphans that orphan cleanup then deletes.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, statSync, utimesSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { ManifestEntryStatus, readManifest, readManifestList } from '../../shared/iceberg/manifests/index.ts'
import { dataDirectory, parseTableMetadata, type TableMetadata } from '../../shared/iceberg/metadata/index.ts'
import { LocalFileStorage, localPath } from '../../shared/storage/index.ts'
import { floeCommand } from '../cli/support.ts'
import { assertEveryIdOnce, Fleet } from '../e2e/fleet.ts'

const minute = 60_000
const floe = join(import.meta.dirname, '..', '..', 'bin', 'floe')
const storage = new LocalFileStorage()

async function metadataOf(fleet: Fleet): Promise<TableMetadata> {
  const report = await fleet.waitUntilAllSeen(2 * minute)
  return parseTableMetadata(readFileSync(localPath(report.metadataLocation), 'utf8'))
}

/** The data files main reads now, and every data file any snapshot of the table names. */
async function dataFilesOf(metadata: TableMetadata): Promise<{ live: string[]; referenced: Set<string> }> {
  const referenced = new Set<string>()
  let live: string[] = []
  for (const snapshot of metadata.snapshots) {
    const inSnapshot: string[] = []
    for (const manifest of readManifestList(await storage.get(snapshot['manifest-list'])).manifests) {
      for (const entry of readManifest(await storage.get(manifest.manifestPath)).entries) {
        referenced.add(localPath(entry.dataFile.filePath))
        if (entry.status !== ManifestEntryStatus.DELETED) inSnapshot.push(localPath(entry.dataFile.filePath))
      }
    }
    if (snapshot['snapshot-id'] === metadata['current-snapshot-id']) live = inSnapshot
  }
  return { live, referenced }
}

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.parquet'))
    .map((entry) => join(entry.parentPath, entry.name))
}

/** `floe maintain` as a child, SIGKILLed the moment it says it wrote a compacted file. */
async function maintainKilledAfterUpload(config: string): Promise<string[]> {
  const child = spawn(floe, ['maintain', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: string[] = []
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_, signal) => resolve(signal)))
  createInterface({ input: child.stderr }).on('line', (line) => {
    lines.push(line)
    if (/: wrote \d+ file\(s\)/.test(line)) child.kill('SIGKILL')
  })
  const signal = await exited
  assert.equal(signal, 'SIGKILL', `floe maintain ended before writing a compacted file:\n${lines.join('\n')}`)
  return lines
}

test('floe maintain compacts small files beside a running worker, through a kill -9 mid-compaction, every id once', async (t) => {
  const extraConfig =
    'maintenance:\n  targetFileSizeBytes: 8388608\n  minInputFiles: 4\n  maxSnapshotAgeHours: 0.0002\n  orphanAgeHours: 1\n'
  const fleet = await Fleet.create(t, { partitions: 2, commitIntervalSeconds: 1, extraConfig })
  await fleet.start()
  for (let i = 0; i < 6; i++) {
    await fleet.produce(100)
    await fleet.waitUntilAllSeen(2 * minute)
  }
  const before = await metadataOf(fleet)
  const dataDir = localPath(dataDirectory(before))
  const { live: liveBefore } = await dataFilesOf(before)
  assert.ok(liveBefore.length >= 6, `six rounds over two Kafka partitions left ${liveBefore.length} files`)

  // Killed after its upload, before its commit: the table is as it was, the upload an orphan.
  const killedLines = await maintainKilledAfterUpload(fleet.config)
  t.diagnostic(`killed run: ${killedLines.join(' | ')}`)
  const afterKill = await metadataOf(fleet)
  const { referenced: referencedAfterKill } = await dataFilesOf(afterKill)
  const replaced = afterKill.snapshots.some((s) => s.summary.operation === 'replace')
  const orphans = filesUnder(dataDir).filter((f) => !referencedAfterKill.has(f) && !replaced)
  if (!replaced) assert.ok(orphans.length >= 1, 'the killed run left its upload behind')

  // A full run while the worker commits round after round: its replace races their appends.
  const racing = fleet.produce(600, { batch: 50 })
  await sleep(1500)
  const done = await floeCommand(['maintain', '--config', fleet.config])
  assert.equal(done.code, 0, done.stderr)
  t.diagnostic(done.stdout.trim())
  assert.match(done.stdout, /compacted \d+ file\(s\) of \d+ partition\(s\) into \d+/)
  await racing
  const settled = await fleet.waitSettled(3 * minute)
  assertEveryIdOnce(fleet, settled)

  const after = await metadataOf(fleet)
  const { live: liveAfter } = await dataFilesOf(after)
  const compacted = after.snapshots.filter((s) => s.summary.operation === 'replace')
  assert.ok(compacted.length >= 1, 'a replace snapshot is in the history')
  const replaceAt = after.snapshots.indexOf(compacted.at(-1) as (typeof after.snapshots)[number])
  const roundsSince = after.snapshots.slice(replaceAt + 1).filter((s) => s.summary['floe.commit-id'] !== undefined)
  const addedSince = roundsSince.reduce((n, s) => n + Number(s.summary['added-data-files'] ?? 0), 0)
  // each day(ts) partition's bytes are far under the target: one file each, plus the rounds since
  const partitions = new Set(liveBefore.map((file) => dirname(file))).size
  assert.ok(
    liveAfter.length <= partitions + addedSince,
    `live files ${liveBefore.length} -> ${liveAfter.length}, ${addedSince} added by ${roundsSince.length} rounds since the compaction`,
  )
  t.diagnostic(`live data files: ${liveBefore.length} before, ${liveAfter.length} after (${addedSince} added since)`)

  // The progress marker counts every event produced to Kafka once.
  const markers = Object.entries(settled.properties).filter(([key]) => key.startsWith('floe.offsets.'))
  assert.equal(markers.length, 1)
  const offsets = JSON.parse(markers[0]?.[1] ?? '{}') as Record<string, Record<string, number>>
  const committed = Object.values(offsets[fleet.topic] ?? {}).reduce((sum, offset) => sum + offset, 0)
  assert.equal(committed, fleet.ids.length)

  // The killed run's uploads, once older than orphanAgeHours, are deleted; nothing referenced is.
  const old = (Date.now() - 2 * 3_600_000) / 1000
  for (const file of orphans) utimesSync(file, old, old)
  const cleaned = await floeCommand(['maintain', '--config', fleet.config])
  assert.equal(cleaned.code, 0, cleaned.stderr)
  t.diagnostic(cleaned.stdout.trim())
  for (const file of orphans) assert.throws(() => statSync(file), `orphan ${file} deleted`)
  const final = await metadataOf(fleet)
  const { live: liveFinal } = await dataFilesOf(final)
  for (const file of liveFinal) assert.ok(statSync(file).isFile(), `live file ${file} kept`)
  assertEveryIdOnce(fleet, await fleet.waitSettled(3 * minute))
})
