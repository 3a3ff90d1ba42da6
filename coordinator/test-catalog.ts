// A SQL catalog in a temporary folder holding one empty table (one long column, unpartitioned),
// for this folder's tests that commit for real. Not exported by index.ts.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before } from 'node:test'
import { parseTableIdentifier, SqlCatalog, type TableIdentifier } from '../shared/catalog/index.ts'
import type { ObjectStorage } from '../shared/storage/index.ts'

/** Opens the catalog in a new folder named after `prefix` and creates `table` in it. */
export async function openTestCatalog(
  prefix: string,
  table: TableIdentifier,
  storage: ObjectStorage,
): Promise<{ dir: string; catalog: SqlCatalog }> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  const catalog = await SqlCatalog.open({
    path: join(dir, 'catalog.db'),
    name: 'floe',
    warehouse: `file://${dir}/warehouse`,
    storage,
  })
  await catalog.createNamespace(table.namespace)
  await catalog.createTable(table, oneLongColumn, { fields: [] })
  return { dir, catalog }
}

/** The schema of the test tables: one optional long column. */
export const oneLongColumn = {
  type: 'struct' as const,
  'schema-id': 0,
  fields: [{ id: 1, name: 'id', required: false, type: 'long' as const }],
}

/** A catalog opened before the file's tests and removed after them; `catalog` is read inside a test. */
export function catalogForFile(prefix: string, storage: ObjectStorage): { readonly catalog: SqlCatalog } {
  let opened: { dir: string; catalog: SqlCatalog } | undefined
  before(async () => {
    opened = await openTestCatalog(prefix, parseTableIdentifier('setup.ledger'), storage)
  })
  after(async () => {
    await opened?.catalog.close()
    if (opened) await rm(opened.dir, { recursive: true, force: true })
  })
  return {
    get catalog() {
      if (!opened) throw new Error('the test catalog is opened before the tests')
      return opened.catalog
    },
  }
}
