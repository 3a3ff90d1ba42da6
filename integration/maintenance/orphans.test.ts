// `floe maintain` removing orphan files on the real stack, beside a running worker: the stack's REST
// catalog (Iceberg Java writes the metadata files, with Hadoop's .crc beside each) on its local
// warehouse, Floe the data files with their bloom-filter sidecars and the manifests. Every file the
// table has is made ten days old, and three old orphans are planted beside one young file: an
// upload of a round that never committed, a spilled file list, a metadata file of a commit that
// lost its race. The dry run deletes nothing; the run deletes exactly the three while the worker
// keeps committing, keeps the young file and every file the table had, and pyiceberg then reads
// every id once.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { parseTableMetadata } from '../../shared/iceberg/metadata/index.ts'
import { localPath } from '../../shared/storage/index.ts'
import { floeCommand } from '../cli/support.ts'
import { assertEveryIdOnce, Fleet } from '../e2e/fleet.ts'

const minute = 60_000

/** The default dataset of the fleet, with bloom filters so that data files get sidecars. */
const dataset = `    customMapping:
      id: id
      ts: ts
      user_id: user.id
      kind: kind
      amount: amount
    schema:
      id: string not null
      ts: timestamptz
      user_id: long
      kind: string
      amount: double
    partitionSpec: [day(ts)]
    bloomFilterColumns: [user_id]
`

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true })
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))
}

async function plant(path: string, old: Date | undefined): Promise<string> {
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, 'left behind')
  if (old) await utimes(path, old, old)
  return path
}

test('floe maintain deletes old orphans beside a running worker, keeping every file the table has', async (t) => {
  // Compaction would rewrite the round's files; this test is about what nothing references.
  const extraConfig = 'maintenance:\n  minInputFiles: 1000\n'
  const fleet = await Fleet.create(t, { partitions: 2, commitIntervalSeconds: 2, dataset, extraConfig })
  await fleet.start()
  await fleet.produce(300)
  const report = await fleet.waitUntilAllSeen(2 * minute)
  assert.ok(!report.error, report.error)
  const metadata = parseTableMetadata(readFileSync(localPath(report.metadataLocation), 'utf8'))
  const root = localPath(metadata.location)

  const tenDaysAgo = new Date(Date.now() - 10 * 24 * 3_600_000)
  const tableFiles = await filesUnder(root)
  assert.ok(
    tableFiles.some((f) => f.endsWith('.parquet.bloom')),
    'data files have sidecars',
  )
  assert.ok(
    tableFiles.some((f) => f.endsWith('.metadata.json.crc')),
    'metadata files have checksums',
  )
  for (const file of tableFiles) await utimes(file, tenDaysAgo, tenDaysAgo)
  const orphans = [
    await plant(join(root, 'data', 'ts_day=2026-11-28', `${randomUUID()}.parquet`), tenDaysAgo),
    await plant(join(root, 'metadata', 'floe-control', 'round-lost', `w9-${randomUUID()}.pb`), tenDaysAgo),
    await plant(join(root, 'metadata', `99999-${randomUUID()}.metadata.json`), tenDaysAgo),
  ]
  const young = await plant(join(root, 'data', 'ts_day=2026-11-28', `${randomUUID()}.parquet`), undefined)

  const dry = await floeCommand(['maintain', '--config', fleet.config, '--dry-run'])
  assert.equal(dry.code, 0, dry.stderr)
  t.diagnostic(dry.stdout.trim())
  assert.match(dry.stdout, /orphans: dry run: would delete 3 file\(s\) of 33 bytes \(of \d+ listed/)
  for (const path of [...orphans, young]) assert.ok(existsSync(path), `the dry run left ${path}`)

  // The worker commits rounds while the cleanup lists and loads.
  const racing = fleet.produce(300, { batch: 30 })
  const done = await floeCommand(['maintain', '--config', fleet.config, '--dataset', 'events'])
  assert.equal(done.code, 0, done.stderr)
  t.diagnostic(done.stdout.trim())
  const line =
    /orphans: 3 file\(s\) of 33 bytes deleted \(of (\d+) listed, (\d+) referenced, (\d+) younger than 72 h kept\)/
  const counts = line.exec(done.stdout)
  assert.ok(counts, done.stdout)
  assert.ok(Number(counts[2]) >= tableFiles.length, 'every file the table had is referenced')
  assert.ok(Number(counts[3]) >= 1, 'the young file is counted')
  for (const path of orphans) assert.ok(!existsSync(path), `${path} is deleted`)
  assert.ok(existsSync(young), 'the young file stays')
  for (const file of tableFiles) assert.ok(existsSync(file), `${file} stays`)

  await racing
  assertEveryIdOnce(fleet, await fleet.waitSettled(3 * minute))
})
