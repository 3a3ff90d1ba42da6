// Floe's REST catalog client against the stack's real Iceberg REST catalog (Java), with pyiceberg
// reading back what it committed.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { type Catalog, openCatalog, type TableIdentifier } from '../../shared/catalog/index.ts'
import { isFloeError } from '../../shared/errors.ts'
import {
  applyUpdates,
  newTableMetadata,
  nextSequenceNumber,
  type Snapshot,
  type TableMetadata,
  type TableUpdate,
} from '../../shared/iceberg/metadata/index.ts'
import type { Schema } from '../../shared/iceberg/types.ts'
import { endpoints, uniqueName } from '../harness.ts'
import { pyiceberg } from './probe.ts'

// Ids the catalog must renumber: the table it returns has 1, 2, 3.
const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 5, name: 'id', required: true, type: 'long' },
    { id: 7, name: 'ts', required: false, type: 'timestamptz' },
    { id: 9, name: 'kind', required: false, type: 'string' },
  ],
}
const spec = { fields: [{ name: 'ts_day', transform: 'day', 'source-id': 7 }] }

let catalog: Catalog

function appendOf(metadata: TableMetadata, id: bigint): { snapshot: Snapshot; updates: TableUpdate[] } {
  const parent = metadata['current-snapshot-id']
  const snapshot: Snapshot = {
    'snapshot-id': id,
    ...(parent === null ? {} : { 'parent-snapshot-id': parent }),
    'sequence-number': nextSequenceNumber(metadata),
    'timestamp-ms': Date.now(),
    'manifest-list': `${metadata.location}/metadata/snap-${id}-1-floe.avro`,
    summary: { operation: 'append', 'floe.commit-id': `commit-${id}` },
    'schema-id': metadata['current-schema-id'],
  }
  return {
    snapshot,
    updates: [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
      { action: 'set-properties', updates: { 'floe.offsets.g': `{"t":{"0":${id % 1000n}}}` } },
    ],
  }
}

// Each test makes its own namespace and table: no test relies on another's state or order.
const made: TableIdentifier[] = []
function newTableName(): TableIdentifier {
  const table = { namespace: [uniqueName('floe_rest')], name: 'events' }
  made.push(table)
  return table
}

async function newTable(): Promise<{ table: TableIdentifier; metadata: TableMetadata }> {
  const table = newTableName()
  await catalog.createNamespace(table.namespace)
  const { metadata } = await catalog.createTable(table, schema, spec)
  return { table, metadata }
}

/** Commits an append of snapshot `id` on the table's current snapshot. */
async function append(table: TableIdentifier, id: bigint): Promise<TableMetadata> {
  const before = await catalog.loadTable(table)
  const parent = before.metadata['current-snapshot-id']
  const requirement = { type: 'assert-ref-snapshot-id' as const, ref: 'main', 'snapshot-id': parent }
  return (await catalog.commitTable(table, [requirement], appendOf(before.metadata, id).updates)).metadata
}

before(async () => {
  catalog = await openCatalog({ type: 'rest', uri: endpoints().rest.uri })
})
after(async () => {
  for (const table of made) await catalog.dropTable(table, { purge: true }).catch(() => false)
  await catalog.close()
})

describe('the REST catalog client on the real Iceberg REST catalog', () => {
  test('creates a namespace once, and says when one exists', async () => {
    const { namespace } = newTableName()
    assert.equal(await catalog.namespaceExists(namespace), false)
    await catalog.createNamespace(namespace)
    await catalog.createNamespace(namespace)
    assert.equal(await catalog.namespaceExists(namespace), true)
  })

  test('creates a table whose ids the catalog assigned exactly as newTableMetadata does', async () => {
    const { metadata } = await newTable()
    const local = newTableMetadata({ schema, spec, location: metadata.location, nowMs: 0 })
    assert.deepEqual(metadata.schemas, local.schemas)
    assert.deepEqual(metadata['partition-specs'], local['partition-specs'])
    assert.equal(metadata['last-column-id'], local['last-column-id'])
    assert.equal(metadata['last-partition-id'], local['last-partition-id'])
    assert.equal(metadata['current-snapshot-id'], null)
    assert.ok(metadata.location.startsWith(endpoints().rest.warehouse))
  })

  test('loads the table back as created', async () => {
    const { table } = await newTable()
    const { namespace } = table
    const loaded = await catalog.loadTable(table)
    assert.equal(loaded.metadata['format-version'], 2)
    assert.equal(loaded.metadata.schemas[0]?.fields[1]?.id, 2)
    assert.equal(await catalog.tableExists(table), true)
    assert.equal(await catalog.tableExists({ namespace, name: 'absent' }), false)
    await assert.rejects(catalog.loadTable({ namespace, name: 'absent' }), (e) => isFloeError(e, 'CATALOG_NOT_FOUND'))
  })

  test("lists a namespace's tables, sorted, and none of a namespace that does not exist", async () => {
    const { table } = await newTable()
    const { namespace } = table
    const others = ['b_events', 'a_events', 'c_events'].map((name) => ({ namespace, name }))
    made.push(...others)
    for (const other of others) await catalog.createTable(other, schema, spec)
    const listed = await catalog.listTables(namespace)
    assert.deepEqual(
      listed.map((identifier) => identifier.name),
      ['a_events', 'b_events', 'c_events', 'events'],
    )
    assert.deepEqual(listed[0]?.namespace, namespace)
    assert.deepEqual(await catalog.listTables([uniqueName('floe_rest_none')]), [])
  })

  test('refuses a second create, and loads the table when asked to', async () => {
    const { table } = await newTable()
    await assert.rejects(catalog.createTable(table, schema, spec), (e) => isFloeError(e, 'CATALOG_ALREADY_EXISTS'))
    const loaded = await catalog.createTable(table, schema, spec, { ifExists: 'load' })
    assert.equal(loaded.metadata['table-uuid'], (await catalog.loadTable(table)).metadata['table-uuid'])
  })

  test('commits an append whose 63-bit snapshot id round-trips exactly, also for pyiceberg', async () => {
    const { table, metadata } = await newTable()
    const id = 9223372036854775807n - 12345n
    const { updates } = appendOf(metadata, id)
    const committed = await catalog.commitTable(
      table,
      [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null }],
      updates,
    )
    assert.equal(committed.metadata['current-snapshot-id'], id)
    const loaded = await catalog.loadTable(table)
    assert.equal(loaded.metadata['current-snapshot-id'], id)
    assert.equal(loaded.metadata.snapshots[0]?.['snapshot-id'], id)
    assert.equal(loaded.metadataLocation, committed.metadataLocation)

    const seen = await pyiceberg('load', {
      catalog: { name: 'rest', type: 'rest', uri: endpoints().rest.uri },
      table: `${table.namespace[0]}.events`,
    })
    assert.equal(seen.current_snapshot_id, id.toString())
    assert.equal(seen.properties['floe.offsets.g'], loaded.metadata.properties['floe.offsets.g'])
  })

  test('applies an append the way the Java catalog does (applyUpdates agrees with the server)', async () => {
    // On top of a first snapshot, so the parent, the snapshot log and the metadata log are compared too.
    const { table } = await newTable()
    await append(table, 9223372036854775807n - 12345n)
    const before = await catalog.loadTable(table)
    const { updates } = appendOf(before.metadata, 3051729675574597004n)
    const requirements = [
      { type: 'assert-ref-snapshot-id' as const, ref: 'main', 'snapshot-id': before.metadata['current-snapshot-id'] },
    ]
    const server = await catalog.commitTable(table, requirements, updates)
    const local = applyUpdates(before.metadata, updates, Date.now(), before.metadataLocation)
    for (const field of [
      'snapshots',
      'refs',
      'current-snapshot-id',
      'last-sequence-number',
      'snapshot-log',
      'metadata-log',
      'properties',
      'last-updated-ms',
    ] as const) {
      assert.deepEqual(local[field], server.metadata[field], field)
    }
  })

  test('answers a commit on a stale assert-ref-snapshot-id with COMMIT_CONFLICT', async () => {
    const { table } = await newTable()
    await append(table, 9223372036854775807n - 12345n)
    await append(table, 3051729675574597004n)
    const current = await catalog.loadTable(table)
    const stale = current.metadata.snapshots[0]!['snapshot-id']
    const { updates } = appendOf(current.metadata, 1234567890123456789n)
    await assert.rejects(
      catalog.commitTable(table, [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': stale }], updates),
      (e) => isFloeError(e, 'COMMIT_CONFLICT') && e.retryable,
    )
    const after = await catalog.loadTable(table)
    assert.equal(after.metadataLocation, current.metadataLocation, 'nothing was committed')
  })

  test('refuses an update the table cannot take with CATALOG_BAD_REQUEST', async () => {
    const { table } = await newTable()
    await assert.rejects(
      catalog.commitTable(
        table,
        [],
        [{ action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 42n }],
      ),
      (e) => isFloeError(e, 'CATALOG_BAD_REQUEST'),
    )
  })
})
