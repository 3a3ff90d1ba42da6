import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { isFloeError } from '../errors.ts'
import { newSnapshotId, nextSequenceNumber, type Snapshot, type TableMetadata } from '../iceberg/metadata/index.ts'
import type { Schema } from '../iceberg/types.ts'
import { LocalFileStorage } from '../storage/index.ts'
import { parseTableIdentifier, SqlCatalog } from './index.ts'
import { sqliteModule } from './sqlite.ts'

const run = promisify(execFile)

let dir: string
let catalog: SqlCatalog
const storage = new LocalFileStorage()
const open = () =>
  SqlCatalog.open({ path: join(dir, 'catalog.db'), name: 'floe', warehouse: `file://${dir}/warehouse`, storage })

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
  ],
}
const spec = { fields: [{ name: 'ts_day', transform: 'day', 'source-id': 2 }] }

function appendOn(metadata: TableMetadata, id = newSnapshotId(metadata)): Snapshot {
  const parent = metadata['current-snapshot-id']
  return {
    'snapshot-id': id,
    ...(parent === null ? {} : { 'parent-snapshot-id': parent }),
    'sequence-number': nextSequenceNumber(metadata),
    'timestamp-ms': Date.now(),
    'manifest-list': `${metadata.location}/metadata/snap-${id}.avro`,
    summary: { operation: 'append', 'floe.commit-id': String(id) },
  }
}

function appendChanges(metadata: TableMetadata, snapshot: Snapshot) {
  return {
    requirements: [
      { type: 'assert-ref-snapshot-id' as const, ref: 'main', 'snapshot-id': metadata['current-snapshot-id'] },
    ],
    updates: [
      { action: 'add-snapshot' as const, snapshot },
      {
        action: 'set-snapshot-ref' as const,
        'ref-name': 'main',
        type: 'branch' as const,
        'snapshot-id': snapshot['snapshot-id'],
      },
    ],
  }
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-sql-'))
  catalog = await open()
})
after(async () => {
  await catalog.close()
  await rm(dir, { recursive: true, force: true })
})

describe('the SQL catalog', () => {
  const events = parseTableIdentifier('analytics.events')

  test('creates a namespace once and finds it and its parents', async () => {
    assert.equal(await catalog.namespaceExists(['analytics']), false)
    await catalog.createNamespace(['analytics'])
    await catalog.createNamespace(['analytics'])
    await catalog.createNamespace(['a', 'b'])
    assert.equal(await catalog.namespaceExists(['analytics']), true)
    assert.equal(await catalog.namespaceExists(['a']), true, 'a parent of a namespace exists')
    assert.equal(await catalog.namespaceExists(['a_']), false, 'LIKE wildcards are escaped')
  })

  test('refuses a table in a namespace that does not exist', async () => {
    await assert.rejects(catalog.createTable(parseTableIdentifier('nowhere.t'), schema, spec), (e) =>
      isFloeError(e, 'CATALOG_NOT_FOUND'),
    )
  })

  test('creates a table with version-0 metadata under the warehouse and loads it back', async () => {
    const created = await catalog.createTable(events, schema, spec, { properties: { owner: 'floe' } })
    assert.match(
      created.metadataLocation,
      new RegExp(`^file://${dir}/warehouse/analytics/events/metadata/00000-[0-9a-f-]{36}\\.metadata\\.json$`),
    )
    const loaded = await catalog.loadTable(events)
    assert.deepEqual(loaded.metadata, created.metadata)
    assert.equal(loaded.metadataLocation, created.metadataLocation)
    assert.equal(loaded.metadata.properties.owner, 'floe')
    assert.equal(await catalog.tableExists(events), true)
  })

  test('refuses to create it again, or loads it when asked to', async () => {
    await assert.rejects(catalog.createTable(events, schema, spec), (e) => isFloeError(e, 'CATALOG_ALREADY_EXISTS'))
    const loaded = await catalog.createTable(events, schema, spec, { ifExists: 'load' })
    assert.equal(loaded.metadata['table-uuid'], (await catalog.loadTable(events)).metadata['table-uuid'])
  })

  test('commits an append with a 63-bit snapshot id and writes version 1', async () => {
    const before = await catalog.loadTable(events)
    const snapshot = appendOn(before.metadata, 9223372036854775807n)
    const { requirements, updates } = appendChanges(before.metadata, snapshot)
    const committed = await catalog.commitTable(events, requirements, [
      ...updates,
      { action: 'set-properties', updates: { 'floe.offsets.g': '{"t":{"0":5}}' } },
    ])
    assert.match(committed.metadataLocation, /\/00001-[0-9a-f-]{36}\.metadata\.json$/)
    const loaded = await catalog.loadTable(events)
    assert.equal(loaded.metadataLocation, committed.metadataLocation)
    assert.equal(loaded.metadata['current-snapshot-id'], 9223372036854775807n)
    assert.equal(loaded.metadata['last-sequence-number'], 1n)
    assert.equal(loaded.metadata.properties['floe.offsets.g'], '{"t":{"0":5}}')
    assert.deepEqual(loaded.metadata['metadata-log'].at(-1)?.['metadata-file'], before.metadataLocation)
  })

  test('answers a stale assert-ref-snapshot-id with COMMIT_CONFLICT and writes no file', async () => {
    const table = await catalog.loadTable(events)
    const stale = { ...table.metadata, 'current-snapshot-id': null }
    const { requirements, updates } = appendChanges(stale, appendOn(table.metadata))
    const files = await readdir(join(dir, 'warehouse/analytics/events/metadata'))
    await assert.rejects(catalog.commitTable(events, requirements, updates), (e) => isFloeError(e, 'COMMIT_CONFLICT'))
    assert.deepEqual(await readdir(join(dir, 'warehouse/analytics/events/metadata')), files)
  })

  test('lets exactly one of two concurrent commits on two connections win', async () => {
    const other = await open()
    try {
      const base = await catalog.loadTable(events)
      const mine = appendChanges(base.metadata, appendOn(base.metadata))
      const theirs = appendChanges(base.metadata, appendOn(base.metadata))
      const results = await Promise.allSettled([
        catalog.commitTable(events, mine.requirements, mine.updates),
        other.commitTable(events, theirs.requirements, theirs.updates),
      ])
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1)
      const lost = results.find((r) => r.status === 'rejected')
      assert.ok(isFloeError(lost?.reason, 'COMMIT_CONFLICT'))
      const after = await catalog.loadTable(events)
      assert.equal(after.metadata.snapshots.length, base.metadata.snapshots.length + 1)
    } finally {
      await other.close()
    }
  })

  test('returns the table unchanged for a commit that changes nothing', async () => {
    const table = await catalog.loadTable(events)
    const same = await catalog.commitTable(events, [], [{ action: 'set-location', location: table.metadata.location }])
    assert.equal(same.metadataLocation, table.metadataLocation)
  })

  test('says CATALOG_NOT_FOUND for a missing table', async () => {
    const missing = parseTableIdentifier('analytics.missing')
    await assert.rejects(catalog.loadTable(missing), (e) => isFloeError(e, 'CATALOG_NOT_FOUND'))
    await assert.rejects(catalog.commitTable(missing, [], []), (e) => isFloeError(e, 'CATALOG_NOT_FOUND'))
    assert.equal(await catalog.tableExists(missing), false)
  })

  test("lists a namespace's tables sorted, not those of a namespace under it, and none of a missing one", async () => {
    await catalog.createNamespace(['listing'])
    await catalog.createNamespace(['listing', 'deeper'])
    for (const name of ['listing.zeta', 'listing.alpha', 'listing.deeper.beta']) {
      await catalog.createTable(parseTableIdentifier(name), schema, { fields: [] })
    }
    assert.deepEqual(await catalog.listTables(['listing']), [
      { namespace: ['listing'], name: 'alpha' },
      { namespace: ['listing'], name: 'zeta' },
    ])
    assert.deepEqual(await catalog.listTables(['listing', 'deeper']), [
      { namespace: ['listing', 'deeper'], name: 'beta' },
    ])
    assert.ok((await catalog.listTables(['analytics'])).some((table) => table.name === 'events'))
    assert.deepEqual(await catalog.listTables(['nowhere']), [])
  })

  test('drops a table and purges its files', async () => {
    const doomed = parseTableIdentifier('analytics.doomed')
    await catalog.createTable(doomed, schema, { fields: [] })
    assert.equal(await catalog.dropTable(doomed, { purge: true }), true)
    assert.equal(await catalog.dropTable(doomed), false)
    assert.deepEqual(await readdir(join(dir, 'warehouse/analytics/doomed/metadata')), [])
  })

  test('keeps the database in WAL mode', () => {
    const { DatabaseSync } = sqliteModule()
    const db = new DatabaseSync(join(dir, 'catalog.db'))
    try {
      assert.equal(db.prepare('PRAGMA journal_mode').get()?.journal_mode, 'wal')
    } finally {
      db.close()
    }
  })

  test('opens without printing the SQLite ExperimentalWarning', async () => {
    const script = `import { SqlCatalog } from ${JSON.stringify(join(import.meta.dirname, 'index.ts'))}
      const c = await SqlCatalog.open({ path: ':memory:', name: 'x', warehouse: 'file:///tmp/x', storage: undefined })
      await c.close()
      process.emitWarning('still heard', 'ExperimentalWarning')`
    const { stderr } = await run(process.execPath, ['--input-type=module', '-e', script])
    assert.doesNotMatch(stderr, /SQLite/)
    assert.match(stderr, /still heard/, 'other warnings are still printed')
  })
})
