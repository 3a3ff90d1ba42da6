import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Catalog, LoadedTable, TableIdentifier } from '../shared/catalog/index.ts'
import { newTableMetadata } from '../shared/iceberg/metadata/index.ts'
import { withVendedCredentials } from './vended-credentials.ts'

const warehouse = 's3://bucket/wh'

/** A table at `<warehouse>/<name>` whose load vends `key` (with `properties` on the table). */
function loaded(name: string, key: string, properties: Record<string, string> = {}): LoadedTable {
  const metadata = newTableMetadata({
    schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'string' }] },
    location: `${warehouse}/${name}`,
    properties,
    nowMs: 0,
  })
  return {
    metadata,
    metadataLocation: `${warehouse}/${name}/metadata/v1.metadata.json`,
    config: {},
    storageCredentials: [{ prefix: `${warehouse}/`, config: { 's3.access-key-id': key, 's3.secret-access-key': 's' } }],
  }
}

function catalogOf(tables: Record<string, LoadedTable>): Catalog {
  const load = async ({ name }: TableIdentifier) => tables[name] as LoadedTable
  const unused = () => Promise.reject(new Error('not used'))
  return {
    description: 'fake',
    createNamespace: unused,
    namespaceExists: unused,
    createTable: (identifier) => load(identifier),
    loadTable: load,
    tableExists: unused,
    listTables: unused,
    commitTable: unused,
    dropTable: unused,
    close: async () => {},
  }
}

describe("a dataset's view of a catalog that vends credentials", () => {
  test("the dataset's table's serve everywhere, a routed table's its own folders only, another's none", async () => {
    const given: Array<[string, string | undefined]> = []
    const storage = {
      useVendedCredentials: (properties: Readonly<Record<string, string>>, scope?: string) => {
        given.push([properties['s3.access-key-id'] as string, scope])
      },
    }
    const catalog = withVendedCredentials(
      catalogOf({
        events: loaded('events', 'ledger'),
        events_eu: loaded('events_eu', 'eu'),
        // data written elsewhere than under the table: that folder is the table's too
        events_us: loaded('events_us', 'us', { 'write.data.path': 's3://other/us-data/' }),
        orders: loaded('orders', 'orders'),
      }),
      { namespace: ['ns'], name: 'events' },
      storage,
      (table) => table.startsWith('ns.events_'),
    )
    for (const name of ['events', 'events_eu', 'events_us', 'orders']) {
      await catalog.loadTable({ namespace: ['ns'], name })
    }
    const schema = { type: 'struct' as const, 'schema-id': 0, fields: [] }
    await catalog.createTable({ namespace: ['ns'], name: 'events_eu' }, schema, { 'spec-id': 0, fields: [] })
    assert.deepEqual(given, [
      ['ledger', undefined],
      ['eu', `${warehouse}/events_eu/`],
      ['us', `${warehouse}/events_us/`],
      ['us', 's3://other/us-data/'],
      ['eu', `${warehouse}/events_eu/`],
    ])
  })
})
