// A SQL catalog in a temporary folder holding one empty table (one long column, unpartitioned),
// for this folder's tests that commit for real. Not exported by index.ts.
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SqlCatalog, type TableIdentifier } from '../shared/catalog/index.ts'
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
  await catalog.createTable(
    table,
    { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] },
    { fields: [] },
  )
  return { dir, catalog }
}
