// A dataset's table made ready by several workers at once, on the real REST catalog: workers of
// one fleet start together, and each creates the namespace and the table it is missing. The
// catalog's SQLite store answers one of two concurrent namespace creations with a 500 (a
// duplicate key in iceberg_namespace_properties) instead of a 409; that must not stop a worker.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { ensureDatasetTable, RoutedTables, widenTable } from '../../cli/tables.ts'
import { type Catalog, openCatalog } from '../../shared/catalog/index.ts'
import { parseConfig } from '../../shared/config/index.ts'
import type { NestedField } from '../../shared/iceberg/index.ts'
import { currentSchema } from '../../shared/iceberg/metadata/index.ts'
import { endpoints, uniqueName } from '../harness.ts'

function datasetOn(table: string, evolved = false, extra = '') {
  const config = parseConfig(
    `kafka:
  brokers: [127.0.0.1:9092]
catalog:
  type: rest
  uri: ${endpoints().rest.uri}
ingestion:
  wal:
    dir: /tmp/unused
datasets:
  - name: events
    topic: events
    table: ${table}
    customMapping: {event_id: id${evolved ? ', note: note' : ''}}
    schema: {event_id: string${evolved ? ', note: string' : ''}}
    badRecords: skip
${evolved ? '    schemaEvolution: addColumns\n' : ''}${extra}`,
    'floe.yaml',
    {},
  )
  return config.datasets[0]!
}

describe('a dataset table made ready by workers starting together', () => {
  const catalogs: Catalog[] = []
  before(async () => {
    for (let i = 0; i < 6; i++) catalogs.push(await openCatalog({ type: 'rest', uri: endpoints().rest.uri }))
  })
  after(async () => {
    for (const catalog of catalogs) await catalog.close()
  })

  test('every worker gets the table when all create the namespace and the table at once', async () => {
    for (let round = 0; round < 5; round++) {
      const dataset = datasetOn(`${uniqueName('it_ns_together')}.events`)
      const results = await Promise.allSettled(catalogs.map((catalog) => ensureDatasetTable(catalog, dataset)))
      const failures = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []))
      assert.deepEqual(failures, [], `round ${round}`)
      const uuids = new Set(results.map((r) => (r.status === 'fulfilled' ? r.value.metadata['table-uuid'] : undefined)))
      assert.equal(uuids.size, 1, 'one table, the same for every worker')
    }
  })

  test('one schema change when every worker adds the same new column at once (schemaEvolution: addColumns)', async () => {
    const table = `${uniqueName('it_ns_evolve')}.events`
    await ensureDatasetTable(catalogs[0]!, datasetOn(table))
    const changes: string[] = []
    const results = await Promise.allSettled(
      catalogs.map((catalog) =>
        ensureDatasetTable(catalog, datasetOn(table, true), {
          onSchemaChange: (change) => changes.push(change.added.join()),
        }),
      ),
    )
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []))
    assert.deepEqual(failures, [])
    assert.deepEqual(changes, ['note'])
    for (const result of results) {
      assert.ok(result.status === 'fulfilled')
      const metadata = result.value.metadata
      assert.equal(metadata.schemas.length, 2)
      const current = metadata.schemas.find((schema) => schema['schema-id'] === metadata['current-schema-id'])
      assert.deepEqual(
        current?.fields.map((f) => [f.id, f.name, f.required]),
        [
          [1, 'event_id', false],
          [2, 'note', false],
        ],
      )
    }
  })

  test('a dataset that infers its columns: workers widening the table at once each add a field once', async () => {
    const table = `${uniqueName('it_ns_widen')}.events`
    const inferred = parseConfig(
      `kafka: {brokers: [127.0.0.1:9092]}
catalog: {type: rest, uri: ${endpoints().rest.uri}}
ingestion: {wal: {dir: /tmp/unused}}
datasets:
  - {name: events, topic: events, table: ${table}, badRecords: skip, timestampFields: [at]}
`,
      'floe.yaml',
      {},
    ).datasets[0]!
    await ensureDatasetTable(catalogs[0]!, inferred)
    const field = (name: string, type: NestedField['type']): NestedField => ({ id: 0, name, required: false, type })
    // what six workers' records brought: a field all of them met, one of three others, a nested one
    const requests = catalogs.map((_, i) => [
      field('shared', 'string'),
      field(`only_${i % 3}`, 'long'),
      field('ctx', { type: 'struct', fields: [field(`seen_${i % 2}`, 'boolean')] }),
    ])
    const added: string[] = []
    const results = await Promise.allSettled(
      catalogs.map((catalog, i) =>
        widenTable(catalog, inferred, [requests[i]!], (change) => added.push(...change.added)),
      ),
    )
    assert.deepEqual(
      results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : [])),
      [],
    )
    const { metadata } = await catalogs[0]!.loadTable({ namespace: [table.split('.')[0]!], name: 'events' })
    const fields = currentSchema(metadata).fields
    assert.deepEqual(fields.map((f) => f.name).sort(), ['at', 'ctx', 'only_0', 'only_1', 'only_2', 'shared'])
    const ctx = fields.find((f) => f.name === 'ctx')?.type
    assert.ok(typeof ctx === 'object' && ctx.type === 'struct')
    assert.deepEqual(ctx.fields.map((f) => f.name).sort(), ['seen_0', 'seen_1'])
    // every column added by exactly one commit, whoever made it
    for (const name of ['shared', 'only_0', 'only_1', 'only_2', 'ctx']) {
      assert.equal(added.filter((a) => a === name).length, 1, `${name} added once`)
    }
  })

  test("a route's tables: workers meeting the same new tables at once each find one table, made as the dataset says", async () => {
    const namespace = uniqueName('it_ns_routed')
    const dataset = datasetOn(
      `${namespace}.progress`,
      false,
      `    partitionSpec: ['bucket[4](event_id)']\n    route: {field: region, table: '${namespace}.events_{value}'}\n`,
    )
    const workers = catalogs.map((catalog) => new RoutedTables(catalog, dataset))
    const tables = Array.from({ length: 12 }, (_, i) => `${namespace}.events_${i}`)
    // every worker asks for every table, each several times, as its records name them
    const asks = workers.flatMap((worker, w) =>
      [...tables, ...tables].map((table, i) => worker.ensure(tables[(i + w) % tables.length] ?? table)),
    )
    const results = await Promise.allSettled(asks)
    assert.deepEqual(
      results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : [])),
      [],
    )
    assert.deepEqual(
      workers.map((worker) => worker.size),
      workers.map(() => tables.length),
    )
    for (const table of tables) {
      assert.equal(await catalogs[0]!.tableExists({ namespace: [namespace], name: table.split('.')[1]! }), true, table)
    }
    const { metadata } = await catalogs[0]!.loadTable({ namespace: [namespace], name: 'events_7' })
    assert.deepEqual(
      currentSchema(metadata).fields.map((f) => [f.name, f.type]),
      [['event_id', 'string']],
    )
    const spec = metadata['partition-specs'].find((s) => s['spec-id'] === metadata['default-spec-id'])
    assert.deepEqual(
      spec?.fields.map((f) => [f.name, f.transform]),
      [['event_id_bucket', 'bucket[4]']],
    )
  })
})
