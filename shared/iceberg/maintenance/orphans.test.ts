// removeOrphanFiles on a real catalog (the embedded SQL catalog on SQLite, a local warehouse) with
// real files on disk, their ages set with utimes: an old unreferenced file goes, a young one and
// every file the table references stay, a dry run deletes nothing, a listing that disagrees with
// the table stops the run before any deletion, and a commit racing the cleanup keeps its files.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Catalog, parseTableIdentifier, SqlCatalog, type TableIdentifier } from '../../catalog/index.ts'
import { isFloeError } from '../../errors.ts'
import { LocalFileStorage, localPath, type ObjectStorage, type StoredObject } from '../../storage/index.ts'
import { appendFiles } from '../commit/index.ts'
import { writeManifestList } from '../manifests/index.ts'
import { metadataDirectory, newSnapshotId, nextSequenceNumber, refSnapshotId } from '../metadata/index.ts'
import { type OrphanRequest, removeOrphanFiles } from './index.ts'

const storage = new LocalFileStorage()
const hour = 3_600_000
const day = 24 * hour
let dir: string
let catalog: SqlCatalog
let serial = 0

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-orphans-'))
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

interface Table {
  id: TableIdentifier
  /** The table's location as its metadata names it. */
  location: string
}

async function newTable(location?: string): Promise<Table> {
  const id = parseTableIdentifier(`m.t${++serial}`)
  const created = await catalog.createTable(
    id,
    { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] },
    { fields: [] },
    location === undefined ? {} : { location },
  )
  return { id, location: created.metadata.location }
}

/** Writes a file of four bytes at `location`, its parents made. */
async function put(location: string): Promise<string> {
  await mkdir(dirname(localPath(location)), { recursive: true })
  await writeFile(localPath(location), 'rows')
  return location
}

/** Commits one data file, written first unless it exists already; returns its location. */
async function append(table: Table, location?: string, on: Catalog = catalog): Promise<string> {
  const file = location ?? (await put(`${table.location}/data/${++serial}.parquet`))
  if (!existsSync(localPath(file))) await put(file)
  await appendFiles({
    catalog: on,
    storage,
    table: table.id,
    commitId: `c${++serial}`,
    commitIdKey: 'test.commit-id',
    content: () => ({
      files: [
        { filePath: file, fileFormat: 'PARQUET', specId: 0, partition: {}, recordCount: 4n, fileSizeInBytes: 4n },
      ],
    }),
  })
  return file
}

/** Another writer's snapshot that reads nothing: every data file before it is history only. */
async function deleteEverything(table: Table): Promise<void> {
  const { metadata } = await catalog.loadTable(table.id)
  const snapshotId = newSnapshotId(metadata)
  const parent = refSnapshotId(metadata)
  const sequenceNumber = nextSequenceNumber(metadata)
  const list = `${metadataDirectory(metadata)}/snap-${snapshotId}-empty.avro`
  await storage.put(list, writeManifestList({ snapshotId, parentSnapshotId: parent, sequenceNumber, manifests: [] }))
  await catalog.commitTable(
    table.id,
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

/** Every file under the table's directory, as paths. */
async function filesOf(table: Table): Promise<string[]> {
  const root = localPath(table.location)
  const entries = await readdir(root, { recursive: true, withFileTypes: true })
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))
}

/** Sets the files' modification time ten days back: older than any age the tests use. */
async function age(paths: readonly string[]): Promise<void> {
  const then = new Date(Date.now() - 10 * day)
  for (const path of paths) await utimes(localPath(path), then, then)
}

function clean(table: Table, over: Partial<OrphanRequest> = {}) {
  return removeOrphanFiles({ catalog, storage, table: table.id, olderThanMs: day, ...over })
}

/** A storage that lists through `list` and otherwise is the local one. */
function listingWith(list: (prefix: string) => AsyncIterable<StoredObject>): ObjectStorage {
  return {
    put: (l, b, o) => storage.put(l, b, o),
    putFile: (l, p, o) => storage.putFile(l, p, o),
    get: (l, o) => storage.get(l, o),
    exists: (l) => storage.exists(l),
    delete: (l) => storage.delete(l),
    list,
  }
}

const exists = (location: string) => existsSync(localPath(location))

describe('removeOrphanFiles on the SQL catalog', () => {
  test('deletes old files no snapshot references and keeps every file the table references', async () => {
    const table = await newTable()
    for (let i = 0; i < 3; i++) await append(table)
    const referenced = await filesOf(table)
    const upload = await put(`${table.location}/data/never-committed.parquet`)
    const spilled = await put(`${table.location}/metadata/floe-control/c9/w1-x.pb`)
    await age([...referenced, upload, spilled])
    const result = await clean(table)
    assert.deepEqual(
      result.orphans.map((o) => o.location),
      [upload, spilled],
    )
    assert.equal(result.orphanBytes, 8)
    assert.equal(result.deleted, 2)
    assert.equal(result.failedDeletes, 0)
    assert.equal(result.listed, referenced.length + 2)
    assert.equal(result.referenced, referenced.length)
    assert.equal(result.young, 0)
    assert.ok(!exists(upload) && !exists(spilled), 'the orphans are deleted')
    for (const path of referenced) assert.ok(existsSync(path), `${path} stays`)
    const kinds = referenced.map((p) => p.replace(/^.*\//, '').replace(/^[^.]*/, ''))
    for (const kind of ['.parquet', '.avro', '.metadata.json']) assert.ok(kinds.includes(kind), `${kind} files stay`)
  })

  test('keeps an unreferenced file younger than the age, and counts it', async () => {
    const table = await newTable()
    await append(table)
    await age(await filesOf(table))
    const young = await put(`${table.location}/data/uploading.parquet`)
    const result = await clean(table)
    assert.deepEqual(result.orphans, [])
    assert.equal(result.young, 1)
    assert.ok(exists(young))
    const later = await clean(table, { now: () => Date.now() + 2 * day })
    assert.deepEqual(
      later.orphans.map((o) => o.location),
      [young],
      'it goes once old enough',
    )
  })

  test('keeps a file that only an older snapshot still in the table reads', async () => {
    const table = await newTable()
    const history = await append(table)
    await deleteEverything(table)
    const current = await append(table)
    await age(await filesOf(table))
    const result = await clean(table)
    assert.deepEqual(result.orphans, [])
    assert.ok(exists(history) && exists(current))
  })

  test('a dry run names what it would delete and deletes nothing', async () => {
    const table = await newTable()
    await append(table)
    const upload = await put(`${table.location}/data/never-committed.parquet`)
    await age(await filesOf(table))
    const result = await clean(table, { dryRun: true })
    assert.deepEqual(
      result.orphans.map((o) => o.location),
      [upload],
    )
    assert.equal(result.deleted, 0)
    assert.ok(exists(upload))
  })

  test('deletes nothing and says so when the listing misses a file the table references', async () => {
    const table = await newTable()
    await append(table)
    const upload = await put(`${table.location}/data/never-committed.parquet`)
    await age(await filesOf(table))
    // A listing that does not spell manifests as the table does: they seem to be missing.
    const blind = listingWith(async function* (prefix) {
      for await (const object of storage.list(prefix)) if (!object.location.endsWith('.avro')) yield object
    })
    await assert.rejects(
      clean(table, { storage: blind }),
      (e) => isFloeError(e, 'INVARIANT_BROKEN') && /do not agree: \d+ referenced file\(s\)/.test(e.message),
    )
    assert.ok(exists(upload), 'nothing was deleted')
  })

  test('matches the metadata’s and the listing’s spellings of one location', async () => {
    // The table's location in Hadoop's `file:/` form, its data files named `file:///`.
    const table = await newTable(`file:${dir}/warehouse/m/hadoop-form`)
    assert.match(table.location, /^file:\/[^/]/)
    const data = await append(table, `file://${localPath(table.location)}/data/a.parquet`)
    const upload = await put(`${table.location}/data/never-committed.parquet`)
    await age(await filesOf(table))
    const result = await clean(table)
    assert.deepEqual(
      result.orphans.map((o) => o.location),
      [upload],
    )
    assert.ok(exists(data))
  })

  test('keeps what lives with a referenced file: companions named by the caller, Hadoop checksums', async () => {
    const table = await newTable()
    const data = await append(table)
    const { metadataLocation } = await catalog.loadTable(table.id)
    const sidecar = await put(`${data}.bloom`)
    const checksum = await put(metadataLocation.replace(/\/([^/]+)$/, '/.$1.crc'))
    const upload = await put(`${table.location}/data/never-committed.parquet`)
    const orphanSidecar = await put(`${upload}.bloom`)
    await age(await filesOf(table))
    const result = await clean(table, { companionsOf: (location) => [`${location}.bloom`] })
    assert.deepEqual(
      result.orphans.map((o) => o.location),
      [upload, orphanSidecar],
    )
    assert.ok(exists(sidecar) && exists(checksum))
  })

  test('never deletes outside the table’s location, not even beside it under a longer name', async () => {
    const table = await newTable()
    await append(table)
    const outside = await append(table, `file://${dir}/warehouse/elsewhere/${++serial}.parquet`)
    const sibling = await put(`${table.location}-sibling/data/x.parquet`)
    await age([...(await filesOf(table)), outside, sibling])
    const result = await clean(table)
    assert.deepEqual(result.orphans, [])
    assert.ok(exists(outside) && exists(sibling))
  })

  test('counts a deletion that fails and goes on with the others', async () => {
    const table = await newTable()
    await append(table)
    const stuck = await put(`${table.location}/data/a-stuck.parquet`)
    const upload = await put(`${table.location}/data/b-never-committed.parquet`)
    await age(await filesOf(table))
    const failing: ObjectStorage = {
      ...listingWith((prefix) => storage.list(prefix)),
      delete: async (location) => {
        if (location === stuck) throw new Error('refused')
        return storage.delete(location)
      },
    }
    const result = await clean(table, { storage: failing })
    assert.equal(result.failedDeletes, 1)
    assert.equal(result.deleted, 1)
    assert.ok(exists(stuck) && !exists(upload))
  })

  test('keeps the files of a commit that lands between the listing and the second load', async () => {
    const table = await newTable()
    await append(table)
    // An upload made long ago whose round commits only now, while the cleanup lists.
    const late = await put(`${table.location}/data/late-round.parquet`)
    await age(await filesOf(table))
    let racing = ''
    const racy = listingWith(async function* (prefix) {
      yield* storage.list(prefix)
      // The listing is done: a round commits the old upload, and one more file written just now.
      await append(table, late)
      racing = await append(table)
    })
    const result = await clean(table, { storage: racy })
    assert.deepEqual(result.orphans, [])
    assert.ok(exists(late), 'the old upload its round committed during the cleanup stays')
    assert.ok(exists(racing), 'the file written after the listing stays')
    const files = await filesOf(table)
    const again = await clean(table)
    assert.deepEqual(again.orphans, [])
    assert.equal(again.referenced, files.length, 'every file of the racing commits is referenced')
  })

  test('refuses an age that is not a positive duration', async () => {
    const table = await newTable()
    await assert.rejects(clean(table, { olderThanMs: 0 }), (e) => isFloeError(e, 'CONFIG_INVALID'))
  })
})
