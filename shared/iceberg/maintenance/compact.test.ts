// compactTable on a real catalog (the embedded SQL catalog on SQLite, a local warehouse) with real
// Parquet files: the rows before and after are the same, the old files leave main in one replace
// snapshot, a writer committing during the rewrite is kept, a group whose file vanished is dropped
// whole, and the table's properties (Floe's progress marker) are never touched.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Catalog, parseTableIdentifier, SqlCatalog, type TableIdentifier } from '../../catalog/index.ts'
import { FloeError } from '../../errors.ts'
import { openDataFile, openDataFileReader, toDataFile } from '../../parquet/index.ts'
import { LocalFileStorage, localPath } from '../../storage/index.ts'
import { appendFiles, replaceFiles } from '../commit/index.ts'
import { ManifestEntryStatus, readManifest, readManifestList } from '../manifests/index.ts'
import {
  currentSchema,
  dataDirectory,
  refSnapshotId,
  snapshotById,
  type TableMetadata,
  type TableUpdate,
} from '../metadata/index.ts'
import { partitionPath } from '../partitioning/index.ts'
import type { DataFile, Schema, StructValue } from '../types.ts'
import { compactTable } from './index.ts'

const storage = new LocalFileStorage()
const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'region', required: false, type: 'string' },
  ],
}
const policy = { targetFileSizeBytes: 1024 * 1024, minInputFiles: 5 }
let dir: string
let catalog: SqlCatalog
let serial = 0
let nextId = 0n

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-compact-'))
  catalog = await SqlCatalog.open({
    path: join(dir, 'catalog.db'),
    name: 'floe',
    warehouse: `file://${dir}/wh`,
    storage,
  })
  await catalog.createNamespace(['m'])
})
after(async () => {
  await catalog.close()
  await rm(dir, { recursive: true, force: true })
})

async function newTable(partitioned = false): Promise<TableIdentifier> {
  const table = parseTableIdentifier(`m.t${++serial}`)
  const spec = partitioned ? [{ 'source-id': 2, name: 'region', transform: 'identity' }] : []
  await catalog.createTable(table, schema, { fields: spec })
  return table
}

/** Writes one real Parquet file of `count` new ids into the table's data directory. */
async function dataFile(metadata: TableMetadata, count: number, region: string | null = 'eu'): Promise<DataFile> {
  const spec = metadata['partition-specs'].find((s) => s['spec-id'] === metadata['default-spec-id'])
  assert.ok(spec)
  const partition: StructValue = spec.fields.length ? { region } : {}
  const directory = [dataDirectory(metadata), spec.fields.length ? partitionPath(spec, schema, partition) : '']
    .filter(Boolean)
    .join('/')
  const location = `${directory}/${randomUUID()}.parquet`
  await mkdir(localPath(directory), { recursive: true })
  const writer = await openDataFile({ path: localPath(location), schema: currentSchema(metadata) })
  await writer.append(Array.from({ length: count }, () => ({ id: nextId++, region })))
  return toDataFile(await writer.close(), { filePath: location, schema, specId: spec['spec-id'], partition })
}

async function append(table: TableIdentifier, count = 100, region: string | null = 'eu', on: Catalog = catalog) {
  const { metadata } = await catalog.loadTable(table)
  const file = await dataFile(metadata, count, region)
  await appendFiles({
    catalog: on,
    storage,
    table,
    commitId: randomUUID(),
    commitIdKey: 'test.commit-id',
    content: () => ({ files: [file], properties: { 'floe.marker': `after ${file.filePath}` } }),
  })
  return file
}

/** Every live data file of main and the ids in it, read back from the files. */
async function tableRows(table: TableIdentifier): Promise<{ files: string[]; ids: bigint[] }> {
  const { metadata } = await catalog.loadTable(table)
  const head = snapshotById(metadata, refSnapshotId(metadata) ?? -1n)
  if (!head) return { files: [], ids: [] }
  const files: string[] = []
  const ids: bigint[] = []
  for (const manifest of readManifestList(await storage.get(head['manifest-list'])).manifests) {
    for (const entry of readManifest(await storage.get(manifest.manifestPath)).entries) {
      if (entry.status === ManifestEntryStatus.DELETED) continue
      files.push(entry.dataFile.filePath)
      const reader = openDataFileReader(await storage.get(entry.dataFile.filePath), currentSchema(metadata))
      for (let i = 0; i < reader.rowGroupCount; i++) {
        for (const row of await reader.readRowGroup(i)) ids.push(row['id'] as bigint)
      }
    }
  }
  return { files, ids: ids.sort((a, b) => (a < b ? -1 : 1)) }
}

describe('compactTable', () => {
  test('five small files become one, rows and properties unchanged, one replace snapshot', async () => {
    const table = await newTable()
    for (let i = 0; i < 5; i++) await append(table)
    const before = await tableRows(table)
    const propertiesBefore = (await catalog.loadTable(table)).metadata.properties
    const result = await compactTable({ catalog, storage, table, policy })
    assert.equal(result.filesBefore, 5)
    assert.equal(result.filesAfter, 1)
    assert.equal(result.filesRewritten, 5)
    assert.equal(result.filesWritten, 1)
    const after = await tableRows(table)
    assert.equal(after.files.length, 1)
    assert.deepEqual(after.ids, before.ids)
    const { metadata } = await catalog.loadTable(table)
    assert.deepEqual(metadata.properties, propertiesBefore)
    const head = snapshotById(metadata, refSnapshotId(metadata) ?? -1n)
    assert.equal(head?.['snapshot-id'], result.snapshotId)
    assert.equal(head?.summary.operation, 'replace')
    assert.equal(head?.summary['deleted-data-files'], '5')
    assert.equal(head?.summary['total-records'], '500')
    assert.equal(head?.summary['total-data-files'], '1')
    // a second run finds nothing to do
    const again = await compactTable({ catalog, storage, table, policy })
    assert.equal(again.snapshotId, undefined)
    assert.equal(again.filesRewritten, 0)
  })

  test('only partitions with enough small files are rewritten, each into its own partition path', async () => {
    const table = await newTable(true)
    for (let i = 0; i < 5; i++) await append(table, 50, 'eu')
    for (let i = 0; i < 2; i++) await append(table, 50, 'us')
    const before = await tableRows(table)
    const result = await compactTable({ catalog, storage, table, policy })
    assert.equal(result.partitionsRewritten, 1)
    assert.equal(result.filesAfter, 3)
    const after = await tableRows(table)
    assert.deepEqual(after.ids, before.ids)
    const written = after.files.filter((f) => !before.files.includes(f))
    assert.equal(written.length, 1)
    assert.match(written[0] ?? '', /\/data\/region=eu\/[0-9a-f-]+\.parquet$/)
  })

  test('a writer appending during the rewrite is kept: the replace is rebuilt on its snapshot', async () => {
    const table = await newTable()
    for (let i = 0; i < 5; i++) await append(table)
    let racing: DataFile | undefined
    const racer = withCommitHook(catalog, async (updates) => {
      if (racing || !updates.some((u) => u.action === 'add-snapshot' && u.snapshot.summary.operation === 'replace'))
        return
      racing = await append(table)
    })
    const result = await compactTable({ catalog: racer, storage, table, policy })
    assert.ok(racing)
    assert.equal(result.filesRewritten, 5)
    const after = await tableRows(table)
    assert.equal(after.files.length, 2)
    assert.ok(after.files.includes(racing.filePath))
    assert.equal(after.ids.length, 600)
    assert.equal(new Set(after.ids).size, 600)
  })

  test('a group whose file left main during the rewrite is dropped whole, and what it wrote deleted', async () => {
    const table = await newTable()
    const files: DataFile[] = []
    for (let i = 0; i < 5; i++) files.push(await append(table))
    const gone = files[2] as DataFile
    const remover = withCommitHook(catalog, async (updates) => {
      if (!updates.some((u) => u.action === 'add-snapshot' && u.snapshot.summary.operation === 'replace')) return
      if ((await tableRows(table)).files.includes(gone.filePath)) await removeFile(table, gone)
    })
    const dataBefore = await readdir(localPath(`file://${dir}/wh/m/${table.name}/data`))
    const result = await compactTable({ catalog: remover, storage, table, policy })
    assert.equal(result.snapshotId, undefined)
    assert.equal(result.filesRewritten, 0)
    assert.deepEqual(
      result.skipped.map((s) => s.reason),
      ['its files changed during the rewrite'],
    )
    const dataAfter = await readdir(localPath(`file://${dir}/wh/m/${table.name}/data`))
    assert.deepEqual(dataAfter.sort(), dataBefore.sort())
  })

  test('an unknown outcome that landed is found by its id, not committed twice', async () => {
    const table = await newTable()
    for (let i = 0; i < 5; i++) await append(table)
    const lost = withCommitHook(catalog, async () => {}, {
      afterCommit: (updates) => {
        if (updates.some((u) => u.action === 'add-snapshot' && u.snapshot.summary.operation === 'replace')) {
          throw new FloeError('COMMIT_STATE_UNKNOWN', 'the answer was lost')
        }
      },
    })
    const result = await compactTable({ catalog: lost, storage, table, policy, retry: { minWaitMs: 1, maxWaitMs: 2 } })
    assert.ok(result.snapshotId)
    const { metadata } = await catalog.loadTable(table)
    assert.equal(metadata.snapshots.filter((s) => s.summary.operation === 'replace').length, 1)
    assert.equal((await tableRows(table)).ids.length, 500)
  })

  test('a dry run commits and writes nothing', async () => {
    const table = await newTable()
    for (let i = 0; i < 5; i++) await append(table)
    const before = (await catalog.loadTable(table)).metadata.snapshots.length
    const result = await compactTable({ catalog, storage, table, policy, dryRun: true })
    assert.equal(result.filesAfter, 1)
    assert.equal(result.snapshotId, undefined)
    assert.equal((await catalog.loadTable(table)).metadata.snapshots.length, before)
    assert.equal((await tableRows(table)).files.length, 5)
  })
})

/** The catalog, with `hook` run before each commit reaches it and `afterCommit` after. */
function withCommitHook(
  inner: Catalog,
  hook: (updates: readonly TableUpdate[]) => Promise<void>,
  options: { afterCommit?: (updates: readonly TableUpdate[]) => void } = {},
): Catalog {
  return new Proxy(inner, {
    get(target, key, receiver) {
      if (key !== 'commitTable') {
        const value = Reflect.get(target, key, receiver)
        return typeof value === 'function' ? value.bind(target) : value
      }
      return async (...args: Parameters<Catalog['commitTable']>) => {
        await hook(args[2])
        const committed = await target.commitTable(...args)
        options.afterCommit?.(args[2])
        return committed
      }
    },
  })
}

/** Another writer takes one file out of main (as a delete of all its rows does). */
async function removeFile(table: TableIdentifier, file: DataFile): Promise<void> {
  await replaceFiles({
    catalog,
    storage,
    table,
    groups: [{ removed: [file], added: [] }],
    commitId: randomUUID(),
    commitIdKey: 'test.delete-id',
  })
}
