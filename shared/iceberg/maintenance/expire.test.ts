// expireSnapshots on a real catalog (the embedded SQL catalog on SQLite, a local warehouse) with
// real data files on disk: what goes is what no kept snapshot reaches, the removal asserts `main`
// and plans again when a writer commits in between, and a dry run changes nothing.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Catalog, parseTableIdentifier, SqlCatalog, type TableIdentifier } from '../../catalog/index.ts'
import { LocalFileStorage, localPath } from '../../storage/index.ts'
import { appendFiles } from '../commit/index.ts'
import { writeManifestList } from '../manifests/index.ts'
import {
  metadataDirectory,
  newSnapshotId,
  nextSequenceNumber,
  refSnapshotId,
  type TableMetadata,
} from '../metadata/index.ts'
import { type ExpireRequest, expireSnapshots } from './index.ts'

const storage = new LocalFileStorage()
const day = 86_400_000
let dir: string
let catalog: SqlCatalog
let serial = 0

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-expire-'))
  catalog = await SqlCatalog.open({
    path: join(dir, 'catalog.db'),
    name: 'floe',
    warehouse: `file://${dir}/warehouse`,
    storage,
  })
  await catalog.createNamespace(['m'])
})
after(async () => {
  await catalog.close()
  await rm(dir, { recursive: true, force: true })
})

async function newTable(): Promise<TableIdentifier> {
  const table = parseTableIdentifier(`m.t${++serial}`)
  await catalog.createTable(
    table,
    { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] },
    { fields: [] },
  )
  return table
}

/** Appends one data file that exists on disk; returns its location. */
async function append(table: TableIdentifier, on: Catalog = catalog): Promise<string> {
  const location = `file://${dir}/warehouse/data/${table.name}-${++serial}.parquet`
  await mkdir(dirname(localPath(location)), { recursive: true })
  await writeFile(localPath(location), 'rows')
  await appendFiles({
    catalog: on,
    storage,
    table,
    commitId: `c${serial}`,
    commitIdKey: 'test.commit-id',
    content: () => ({
      files: [
        { filePath: location, fileFormat: 'PARQUET', specId: 0, partition: {}, recordCount: 4n, fileSizeInBytes: 4n },
      ],
    }),
  })
  return location
}

/** Another writer's snapshot that reads nothing: every data file before it is history only. */
async function deleteEverything(table: TableIdentifier): Promise<void> {
  const { metadata } = await catalog.loadTable(table)
  const snapshotId = newSnapshotId(metadata)
  const parent = refSnapshotId(metadata)
  const sequenceNumber = nextSequenceNumber(metadata)
  const list = `${metadataDirectory(metadata)}/snap-${snapshotId}-empty.avro`
  await storage.put(list, writeManifestList({ snapshotId, parentSnapshotId: parent, sequenceNumber, manifests: [] }))
  await catalog.commitTable(
    table,
    [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': parent }],
    [
      {
        action: 'add-snapshot',
        snapshot: {
          'snapshot-id': snapshotId,
          ...(parent === null ? {} : { 'parent-snapshot-id': parent }),
          'sequence-number': sequenceNumber,
          'timestamp-ms': Date.now(),
          'manifest-list': list,
          summary: { operation: 'delete' },
          'schema-id': 0,
        },
      },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': snapshotId },
    ],
  )
}

const exists = (location: string) => existsSync(localPath(location))

function expire(table: TableIdentifier, over: Partial<ExpireRequest> = {}) {
  return expireSnapshots({
    catalog,
    storage,
    table,
    // Ten days on: every snapshot is older than the hour the policy allows.
    now: () => Date.now() + 10 * day,
    retention: { maxSnapshotAgeMs: 3_600_000, minSnapshotsToKeep: 2 },
    retry: { minWaitMs: 1, maxWaitMs: 2 },
    ...over,
  })
}

async function load(table: TableIdentifier): Promise<TableMetadata> {
  return (await catalog.loadTable(table)).metadata
}

describe('expireSnapshots on the SQL catalog', () => {
  test('removes the old snapshots and their manifest lists, and keeps every data file the head reads', async () => {
    const table = await newTable()
    const data = []
    for (let i = 0; i < 5; i++) data.push(await append(table))
    const before = await load(table)
    const result = await expire(table)
    assert.equal(result.snapshotsBefore, 5)
    assert.equal(result.snapshotsAfter, 2)
    const after = await load(table)
    assert.equal(after.snapshots.length, 2)
    assert.equal(refSnapshotId(after), refSnapshotId(before))
    const gone = before.snapshots.filter((s) => result.expired.includes(s['snapshot-id']))
    assert.equal(gone.length, 3)
    for (const snapshot of gone) assert.ok(!exists(snapshot['manifest-list']), 'an expired manifest list is deleted')
    for (const snapshot of after.snapshots) assert.ok(exists(snapshot['manifest-list']), 'a kept manifest list stays')
    assert.deepEqual(result.files.dataFiles, [])
    for (const location of data) assert.ok(exists(location), 'a data file the head reads stays')
  })

  test('deletes the data files and manifests only expired snapshots reached', async () => {
    const table = await newTable()
    const data = [await append(table), await append(table)]
    await deleteEverything(table)
    const kept = await append(table)
    const result = await expire(table)
    assert.equal(result.snapshotsAfter, 2)
    assert.deepEqual(result.files.dataFiles.sort(), [...data].sort())
    assert.equal(result.files.dataBytes, 8n)
    assert.equal(result.failedDeletes, 0)
    for (const location of data) assert.ok(!exists(location), 'a file no kept snapshot reads is deleted')
    for (const location of result.files.manifests) assert.ok(!exists(location), 'its manifest is deleted')
    assert.ok(exists(kept), 'the file the head reads stays')
  })

  test('plans again when a writer commits between the plan and the removal', async () => {
    const table = await newTable()
    for (let i = 0; i < 4; i++) await append(table)
    let loads = 0
    let written = ''
    const racing = new Proxy(catalog, {
      get(real, property) {
        if (property === 'loadTable') {
          return async (...args: Parameters<Catalog['loadTable']>) => {
            const loaded = await real.loadTable(...args)
            // The writer commits right after the expiry read the table.
            if (++loads === 1) written = await append(table)
            return loaded
          }
        }
        const value = Reflect.get(real, property, real)
        return typeof value === 'function' ? value.bind(real) : value
      },
    }) as Catalog
    const result = await expire(table, { catalog: racing })
    assert.equal(result.attempts, 2)
    const after = await load(table)
    assert.equal(after.snapshots.length, 2, 'the writer’s snapshot is the head, one more is kept')
    assert.ok(exists(written))
    assert.equal(after.snapshots.at(-1)?.summary['test.commit-id'], `c${serial}`)
  })

  test('keeps what keep() names, and a dry run removes and deletes nothing', async () => {
    const table = await newTable()
    for (let i = 0; i < 4; i++) await append(table)
    const oldest = (await load(table)).snapshots[0]!['snapshot-id']
    const keep = () => new Set([oldest])
    const dry = await expire(table, { keep, dryRun: true })
    assert.equal(dry.expired.length, 1)
    assert.equal((await load(table)).snapshots.length, 4, 'the dry run removed nothing')
    for (const location of dry.files.manifestLists) assert.ok(exists(location), 'the dry run deleted nothing')
    const done = await expire(table, { keep })
    assert.deepEqual(done.expired, dry.expired)
    assert.ok((await load(table)).snapshots.some((s) => s['snapshot-id'] === oldest))
    const again = await expire(table, { keep })
    assert.deepEqual(again.expired, [], 'nothing more to expire')
  })
})
