import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Catalog, formatTableIdentifier, parseTableIdentifier, SqlCatalog } from '../shared/catalog/index.ts'
import { parseConfig } from '../shared/config/index.ts'
import type { Schema } from '../shared/iceberg/index.ts'
import { FloeError } from '../shared/index.ts'
import { offsetsKey } from '../shared/progress/index.ts'
import { LocalFileStorage } from '../shared/storage/index.ts'
import { ensureDatasetTable, RoutedTables, routedTablesOf } from './tables.ts'

const dataset = (table: string) =>
  parseConfig(
    `kafka: {brokers: [127.0.0.1:9092]}
catalog: {type: rest, uri: http://127.0.0.1:8181}
ingestion: {wal: {dir: /tmp/unused}}
datasets:
  - {name: events, topic: events, table: ${table}, customMapping: {id: id}, schema: {id: string}, badRecords: skip}
`,
    'floe.yaml',
    {},
  ).datasets[0]!

/**
 * A dataset of the given columns (`name: [expression, type]`), its schema evolved by the worker
 * when `evolve`, with `extra` keys (a route) added.
 */
const datasetOf = (
  table: string,
  columns: Record<string, [string, string]>,
  evolve: boolean,
  extra: Record<string, unknown> = {},
) =>
  parseConfig(
    JSON.stringify({
      kafka: { brokers: ['127.0.0.1:9092'] },
      catalog: { type: 'rest', uri: 'http://127.0.0.1:8181' },
      ingestion: { wal: { dir: '/tmp/unused' } },
      datasets: [
        {
          name: 'events',
          topic: 'events',
          table,
          customMapping: Object.fromEntries(Object.entries(columns).map(([name, [expression]]) => [name, expression])),
          schema: Object.fromEntries(Object.entries(columns).map(([name, [, type]]) => [name, type])),
          badRecords: 'skip',
          ...(evolve ? { schemaEvolution: 'addColumns' } : {}),
          ...extra,
        },
      ],
    }),
    'floe.yaml',
    {},
  ).datasets[0]!

const serverError = (what: string) =>
  new FloeError('CATALOG_UNAVAILABLE', `${what}: 500 UncheckedSQLException`, { details: { status: 500 } })

/**
 * A real SQLite catalog whose next `failures` creations answer like the REST catalog that lost a
 * race: the other worker's creation happens (when `racing`), and this one gets a 500.
 */
function losingCatalog(
  inner: Catalog,
  options: { failures: number; racing: boolean; error?: FloeError; only?: 'table' },
) {
  let failures = options.failures
  const creates: string[] = []
  const catalog: Catalog = {
    description: inner.description,
    async createNamespace(namespace, properties) {
      creates.push(`namespace ${namespace.join('.')}`)
      if (options.only !== 'table' && failures-- > 0) {
        if (options.racing) await inner.createNamespace(namespace, properties)
        throw options.error ?? serverError('create namespace')
      }
      return inner.createNamespace(namespace, properties)
    },
    namespaceExists: (namespace) => inner.namespaceExists(namespace),
    listTables: (namespace) => inner.listTables(namespace),
    async createTable(identifier, schema, spec, createOptions) {
      creates.push(`table ${identifier.name}`)
      if (failures-- > 0) {
        if (options.racing) await inner.createTable(identifier, schema, spec, createOptions)
        throw options.error ?? serverError('create table')
      }
      return inner.createTable(identifier, schema, spec, createOptions)
    },
    loadTable: (identifier) => inner.loadTable(identifier),
    tableExists: (identifier) => inner.tableExists(identifier),
    commitTable: (identifier, requirements, updates) => inner.commitTable(identifier, requirements, updates),
    dropTable: (identifier, dropOptions) => inner.dropTable(identifier, dropOptions),
    close: () => inner.close(),
  }
  return { catalog, creates }
}

describe('making a dataset table ready', () => {
  let dir: string
  let sql: SqlCatalog
  const waits: number[] = []
  const retry = { attempts: 3, firstWaitMs: 100, wait: async (ms: number) => waits.push(ms) }
  let n = 0
  const fresh = () => dataset(`ns${++n}.events`)

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-tables-'))
    sql = await SqlCatalog.open({
      path: join(dir, 'catalog.db'),
      name: 'floe',
      warehouse: `file://${dir}/warehouse`,
      storage: new LocalFileStorage(),
    })
  })
  after(async () => {
    await sql.close()
    await rm(dir, { recursive: true, force: true })
  })

  test('carries on when the namespace creation failed because another worker created it', async () => {
    waits.length = 0
    const { catalog, creates } = losingCatalog(sql, { failures: 1, racing: true })
    const table = await ensureDatasetTable(catalog, fresh(), { retry })
    assert.equal(table.metadata['format-version'], 2)
    assert.deepEqual(creates, ['namespace ns1', 'table events'])
    assert.deepEqual(waits, [])
  })

  test('loads the table another worker created while its own creation failed', async () => {
    waits.length = 0
    const { catalog, creates } = losingCatalog(sql, { failures: 1, racing: true, only: 'table' })
    const table = await ensureDatasetTable(catalog, fresh(), { retry })
    assert.ok(table.metadata['table-uuid'])
    assert.deepEqual(creates, ['namespace ns2', 'table events'])
    assert.deepEqual(waits, [])
  })

  test('tries a failed creation again, waiting longer each time, while nothing is there', async () => {
    waits.length = 0
    const { catalog, creates } = losingCatalog(sql, { failures: 2, racing: false })
    await ensureDatasetTable(catalog, fresh(), { retry })
    assert.deepEqual(creates, ['namespace ns3', 'namespace ns3', 'namespace ns3', 'table events'])
    assert.deepEqual(waits, [100, 200])
  })

  test('gives up with the catalog error after the last attempt', async () => {
    waits.length = 0
    const { catalog } = losingCatalog(sql, { failures: 10, racing: false })
    await assert.rejects(ensureDatasetTable(catalog, fresh(), { retry }), { code: 'CATALOG_UNAVAILABLE' })
    assert.deepEqual(waits, [100, 200])
  })

  test("a route's tables: one creation for asks made together, and one that failed is made on a later ask", async () => {
    waits.length = 0
    const { catalog, creates } = losingCatalog(sql, { failures: 3, racing: false })
    const routed = new RoutedTables(catalog, dataset('routed.progress'), { retry })
    const together = [routed.ensure('routed.e_eu'), routed.ensure('routed.e_eu')]
    await assert.rejects(together[0]!, { code: 'CATALOG_UNAVAILABLE' })
    await assert.rejects(together[1]!, { code: 'CATALOG_UNAVAILABLE' })
    assert.deepEqual(creates, ['namespace routed', 'namespace routed', 'namespace routed'])
    assert.equal(routed.size, 0, 'the failure is forgotten')
    await Promise.all([routed.ensure('routed.e_eu'), routed.ensure('routed.e_eu'), routed.ensure('routed.e_us')])
    await routed.ensure('routed.e_eu')
    assert.deepEqual(creates.slice(3).sort(), ['namespace routed', 'namespace routed', 'table e_eu', 'table e_us'])
    assert.equal(routed.size, 2)
    const loaded = await sql.loadTable({ namespace: ['routed'], name: 'e_us' })
    assert.deepEqual(
      loaded.metadata.schemas[0]?.fields.map((f) => f.name),
      ['id'],
    )
  })

  test("a route's ready table is loaded again once its last load is reloadAfterMs old, once at a time", async () => {
    let now = 0
    const loads: string[] = []
    const { catalog: inner } = losingCatalog(sql, { failures: 0, racing: false })
    const counting: Catalog = {
      ...inner,
      loadTable: (identifier) => {
        loads.push(formatTableIdentifier(identifier))
        return sql.loadTable(identifier)
      },
    }
    const routed = new RoutedTables(counting, dataset('reload.progress'), {
      retry,
      reloadAfterMs: 1_000,
      now: () => now,
    })
    const location = await routed.ensure('reload.e_eu')
    const first = loads.length
    now = 999
    assert.equal(await routed.ensure('reload.e_eu'), location)
    assert.equal(loads.length, first, 'not yet')
    now = 1_000
    await Promise.all([routed.ensure('reload.e_eu'), routed.ensure('reload.e_eu')])
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(loads.slice(first), ['reload.e_eu'], 'one reload for asks made together')
    now = 1_500
    await routed.ensure('reload.e_eu')
    assert.equal(loads.length, first + 1, 'the reload counts from its own time')
    const unreloaded = new RoutedTables(counting, dataset('reload.progress'), { retry })
    await unreloaded.ensure('reload.e_eu')
    const before = loads.length
    now = 1e9
    await unreloaded.ensure('reload.e_eu')
    assert.equal(loads.length, before, 'without reloadAfterMs, never again')
  })

  test("maintenance finds a route's tables: those it can name that hold the dataset's marker", async () => {
    const columns: Record<string, [string, string]> = { id: ['id', 'string'], kind: ['kind', 'string'] }
    const routed = datasetOf('maint.events', columns, false, {
      route: { field: 'kind', table: 'maint.events_{value}', fallback: 'spare.rest' },
    })
    const schema: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [{ id: 1, name: 'id', required: false, type: 'string' }],
    }
    const made = async (name: string, group?: string) => {
      const table = parseTableIdentifier(name)
      await sql.createNamespace(table.namespace)
      await sql.createTable(table, schema, { fields: [] })
      if (group === undefined) return
      const marker = { action: 'set-properties' as const, updates: { [offsetsKey(group)]: '{"events":{"0":1}}' } }
      await sql.commitTable(table, [], [marker])
    }
    await made('maint.events', 'g') // the ledger
    await made('maint.events_eu', 'g')
    await made('maint.events_us', 'another-group')
    await made('maint.events_apac') // made on first use, never committed to
    await made('maint.orders_eu', 'g')
    await made('maint.events_EU_x', 'g')
    await made('spare.rest', 'g')
    const found = await routedTablesOf(sql, routed, 'g')
    assert.deepEqual(found.map(formatTableIdentifier), ['maint.events_eu', 'spare.rest'])
    assert.deepEqual(await routedTablesOf(sql, dataset('plain.events'), 'g'), [], 'an unrouted dataset has none')
  })

  test('does not try again what the catalog refused (a 4xx)', async () => {
    waits.length = 0
    const refused = new FloeError('CATALOG_BAD_REQUEST', 'create namespace: 400 bad name')
    const { catalog, creates } = losingCatalog(sql, { failures: 10, racing: false, error: refused })
    await assert.rejects(ensureDatasetTable(catalog, fresh(), { retry }), { code: 'CATALOG_BAD_REQUEST' })
    assert.equal(creates.length, 1)
    assert.deepEqual(waits, [])
  })

  test('schemaEvolution addColumns: adds the missing columns and widens a type, once for workers starting together', async () => {
    const table = `ns${++n}.events`
    const first = { id: ['id', 'string not null'], count: ['n', 'int'] } as Record<string, [string, string]>
    await ensureDatasetTable(sql, datasetOf(table, first, false), { retry })
    const second = { ...first, count: ['n', 'long'], note: ['note', 'string not null'] } as Record<
      string,
      [string, string]
    >
    await assert.rejects(ensureDatasetTable(sql, datasetOf(table, second, false), { retry }), {
      code: 'CONFIG_INVALID',
      message:
        /column count is "int" in table .*, "long" in the configuration; set schemaEvolution: addColumns to widen it/,
    })
    await assert.rejects(
      ensureDatasetTable(sql, datasetOf(table, { ...first, ...{ note: second.note! } }, false), { retry }),
      {
        code: 'CONFIG_INVALID',
        message:
          /has no column note; add it to the table, remove it from the schema, or set schemaEvolution: addColumns/,
      },
    )

    const changes: string[] = []
    const evolving = datasetOf(table, second, true)
    const tables = await Promise.all(
      [0, 1, 2].map(() =>
        ensureDatasetTable(sql, evolving, { retry, onSchemaChange: (change) => changes.push(change.added.join()) }),
      ),
    )
    assert.deepEqual(changes, ['note'], 'one worker changed the schema')
    for (const evolved of tables) {
      const schema = evolved.metadata.schemas.find((s) => s['schema-id'] === evolved.metadata['current-schema-id'])
      assert.deepEqual(
        schema?.fields.map((f) => [f.id, f.name, f.required, f.type]),
        [
          [1, 'id', true, 'string'],
          [2, 'count', false, 'long'],
          // a column added to a table that may hold rows is optional, whatever the configuration says
          [3, 'note', false, 'string'],
        ],
      )
      assert.equal(evolved.metadata.schemas.length, 2)
    }

    const narrowing = { ...second, count: ['n', 'int'] } as Record<string, [string, string]>
    await assert.rejects(ensureDatasetTable(sql, datasetOf(table, narrowing, true), { retry }), {
      code: 'CONFIG_INVALID',
      message: /column count is "long" in table .*, "int" in the configuration/,
    })
  })

  test('a dataset that infers its columns adds a declared column the table lacks at start, and refuses one of another type', async () => {
    const table = `ns${++n}.events`
    const inferred = (schema: Record<string, string>) =>
      parseConfig(
        JSON.stringify({
          kafka: { brokers: ['127.0.0.1:9092'] },
          catalog: { type: 'rest', uri: 'http://127.0.0.1:8181' },
          ingestion: { wal: { dir: '/tmp/unused' } },
          datasets: [{ name: 'events', topic: 'events', table, badRecords: 'skip', schema }],
        }),
        'floe.yaml',
        {},
      ).datasets[0]!
    await ensureDatasetTable(sql, inferred({ n: 'long' }), { retry })
    const changes: string[] = []
    const evolved = await ensureDatasetTable(sql, inferred({ n: 'long', amount: 'double' }), {
      retry,
      onSchemaChange: (change) => changes.push(change.added.join()),
    })
    assert.deepEqual(changes, ['amount'])
    const current = evolved.metadata.schemas.find((s) => s['schema-id'] === evolved.metadata['current-schema-id'])
    assert.deepEqual(
      current?.fields.map((f) => [f.name, f.type]),
      [
        ['n', 'long'],
        ['amount', 'double'],
      ],
    )
    await assert.rejects(ensureDatasetTable(sql, inferred({ n: 'double' }), { retry }), {
      code: 'CONFIG_INVALID',
      message: /column n is "long" in table .*, "double" in the configuration/,
    })

    // docs/operations.md, "A column inferred with the wrong type": renamed by another engine, the
    // field declared anew comes back as a column of its own, the old one keeping its id and rows
    const identifier = { namespace: [table.split('.')[0]!], name: 'events' }
    const schema = evolved.metadata.schemas.find((s) => s['schema-id'] === evolved.metadata['current-schema-id'])!
    const renamed = {
      ...schema,
      'schema-id': schema['schema-id'] + 1,
      fields: schema.fields.map((f) => (f.name === 'n' ? { ...f, name: 'n_int' } : f)),
    }
    await sql.commitTable(
      identifier,
      [],
      [
        { action: 'add-schema', schema: renamed, 'last-column-id': evolved.metadata['last-column-id'] },
        { action: 'set-current-schema', 'schema-id': -1 },
      ],
    )
    const again = await ensureDatasetTable(sql, inferred({ n: 'double', amount: 'double' }), { retry })
    const fields = again.metadata.schemas.find((s) => s['schema-id'] === again.metadata['current-schema-id'])?.fields
    assert.deepEqual(
      fields?.map((f) => [f.id, f.name, f.type]),
      [
        [1, 'n_int', 'long'],
        [2, 'amount', 'double'],
        [3, 'n', 'double'],
      ],
    )
  })
})
