// Floe's SQL catalog on a SQLite file that pyiceberg's SqlCatalog opens too: tables Floe makes,
// pyiceberg reads, and the other way round; concurrent writers in separate processes.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { after, before, describe, test } from 'node:test'
import { type LoadedTable, parseTableIdentifier, SqlCatalog, type TableIdentifier } from '../../shared/catalog/index.ts'
import { isFloeError } from '../../shared/errors.ts'
import { newSnapshotId } from '../../shared/iceberg/metadata/index.ts'
import type { Schema } from '../../shared/iceberg/types.ts'
import { LocalFileStorage, RoutedStorage } from '../../shared/storage/index.ts'
import { endpoints, uniqueName } from '../harness.ts'
import { appendUpdates } from './append-updates.ts'
import { azuriteFileIo, pyiceberg, sqlCatalog } from './probe.ts'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [1],
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    {
      id: 3,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 4, element: 'string', 'element-required': false },
    },
  ],
}
const spec = { fields: [{ name: 'ts_day', transform: 'day', 'source-id': 2 }] }
const name = 'floe'

let dir: string
let path: string
let warehouse: string
let catalog: SqlCatalog
const py = () => sqlCatalog(path, name, { warehouse })

/** A new namespace and table of `schema` for one test: no test relies on another's tables. */
async function newTable(): Promise<{ table: TableIdentifier; text: string; created: LoadedTable }> {
  const namespace = uniqueName('analytics')
  await catalog.createNamespace([namespace])
  const table = parseTableIdentifier(`${namespace}.events`)
  return { table, text: `${namespace}.events`, created: await catalog.createTable(table, schema, spec) }
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-sql-it-'))
  path = join(dir, 'catalog.db')
  warehouse = `file://${dir}/warehouse`
  catalog = await SqlCatalog.open({ path, name, warehouse, storage: new LocalFileStorage() })
})
after(async () => {
  await catalog.close()
  await rm(dir, { recursive: true, force: true })
})

describe('the SQL catalog shared with pyiceberg', () => {
  test('makes a table that pyiceberg SqlCatalog loads with the same schema and spec', async () => {
    const { text, created } = await newTable()
    const seen = await pyiceberg('load', { catalog: py(), table: text })
    assert.equal(seen.metadata_location, created.metadataLocation)
    assert.equal(seen.table_uuid, created.metadata['table-uuid'])
    assert.equal(seen.format_version, 2)
    const ours = created.metadata.schemas[0]!
    assert.deepEqual(seen.schema.fields, ours.fields)
    assert.equal(seen.schema['schema-id'], ours['schema-id'])
    assert.deepEqual(seen.spec, created.metadata['partition-specs'][0])
  })

  test('commits an append whose 63-bit snapshot id pyiceberg reads exactly', async () => {
    const { table, text, created: before } = await newTable()
    const id = 9223372036854775807n - 1n
    const committed = await catalog.commitTable(
      table,
      [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }],
      [
        ...appendUpdates(before.metadata, id),
        { action: 'set-properties', updates: { 'floe.offsets.g': '{"t":{"0":7}}' } },
      ],
    )
    const seen = await pyiceberg('load', { catalog: py(), table: text })
    assert.equal(seen.metadata_location, committed.metadataLocation)
    assert.equal(seen.current_snapshot_id, id.toString())
    assert.equal(seen.last_sequence_number, 1)
    assert.equal(seen.properties['floe.offsets.g'], '{"t":{"0":7}}')
  })

  test('loads and commits to a table pyiceberg created and appended to', async () => {
    const created = await pyiceberg('create', { catalog: py(), table: 'py.made' })
    const appended = await pyiceberg('append', { catalog: py(), table: 'py.made', ids: [1, 2, 3] })
    const made = parseTableIdentifier('py.made')
    assert.equal(await catalog.namespaceExists(['py']), true)
    const loaded = await catalog.loadTable(made)
    assert.equal(loaded.metadata['table-uuid'], created.table_uuid)
    assert.equal(loaded.metadataLocation, appended.metadata_location)
    assert.equal(loaded.metadata['current-snapshot-id']?.toString(), appended.current_snapshot_id)

    const properties = await catalog.commitTable(
      made,
      [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': loaded.metadata['current-snapshot-id'] }],
      [{ action: 'set-properties', updates: { 'floe.touched': 'yes' } }],
    )
    const seen = await pyiceberg('append', { catalog: py(), table: 'py.made', ids: [4] })
    assert.equal(seen.properties['floe.touched'], 'yes', 'pyiceberg committed on top of the file Floe wrote')
    assert.equal(seen.snapshot_ids.length, 2)
    assert.notEqual(seen.metadata_location, properties.metadataLocation)
  })

  test('answers COMMIT_CONFLICT when pyiceberg committed since the table was loaded', async () => {
    await pyiceberg('create', { catalog: py(), table: 'py.raced' })
    const raced = parseTableIdentifier('py.raced')
    const base = await catalog.loadTable(raced)
    await pyiceberg('append', { catalog: py(), table: 'py.raced', ids: [1] })
    await assert.rejects(
      catalog.commitTable(
        raced,
        [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': base.metadata['current-snapshot-id'] }],
        appendUpdates(base.metadata, newSnapshotId(base.metadata)),
      ),
      (e) => isFloeError(e, 'COMMIT_CONFLICT'),
    )
  })

  test('lets exactly one of four concurrent committer processes win', async () => {
    const { text, created: before } = await newTable()
    const committers = Array.from({ length: 4 }, () =>
      spawn(process.execPath, [join(import.meta.dirname, 'sql-committer.ts'), path, name, warehouse, text], {
        stdio: ['pipe', 'pipe', 'inherit'],
      }),
    )
    const lines = committers.map((child) => createInterface({ input: child.stdout })[Symbol.asyncIterator]())
    for (const line of lines) assert.equal((await line.next()).value, 'ready')
    for (const child of committers) child.stdin.write('go\n')
    const outcomes: { outcome: string; id: string }[] = []
    for (const line of lines) outcomes.push(JSON.parse((await line.next()).value as string))
    assert.deepEqual(outcomes.map((o) => o.outcome).sort(), [
      'COMMIT_CONFLICT',
      'COMMIT_CONFLICT',
      'COMMIT_CONFLICT',
      'committed',
    ])

    const winner = outcomes.find((o) => o.outcome === 'committed')!
    const seen = await pyiceberg('load', { catalog: py(), table: text })
    assert.equal(seen.current_snapshot_id, winner.id)
    assert.equal(seen.snapshot_ids.length, before.metadata.snapshots.length + 1)
  })

  test('keeps metadata on Azurite that pyiceberg reads through its abfs location', async () => {
    const { connectionString, account, container } = endpoints().azurite
    const storage = new RoutedStorage({ azure: { connectionString } })
    const azureWarehouse = `abfs://${container}@${account}.dfs.core.windows.net/${uniqueName('floe-sql-wh')}`
    const azure = await SqlCatalog.open({ path: join(dir, 'azure.db'), name, warehouse: azureWarehouse, storage })
    try {
      await azure.createNamespace(['lake'])
      const created = await azure.createTable(parseTableIdentifier('lake.events'), schema, spec)
      assert.ok(created.metadataLocation.startsWith(`${azureWarehouse}/lake/events/metadata/00000-`))
      const seen = await pyiceberg('load', {
        catalog: sqlCatalog(join(dir, 'azure.db'), name, azuriteFileIo()),
        table: 'lake.events',
      })
      assert.equal(seen.metadata_location, created.metadataLocation)
      assert.deepEqual(seen.schema.fields, created.metadata.schemas[0]!.fields)
      assert.equal(await azure.dropTable(parseTableIdentifier('lake.events'), { purge: true }), true)
      assert.equal(await storage.exists(created.metadataLocation), false)
    } finally {
      await azure.close()
    }
  })
})
