// Test support: writes rows into an Iceberg table the way Floe does — Parquet data files per
// partition, uploaded to the table's data location, then one atomic append — using only Floe's
// own modules. Kept beside the end-to-end tests that use it.
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Catalog, TableIdentifier } from '../../shared/catalog/index.ts'
import { type AppendResult, appendFiles } from '../../shared/iceberg/commit/index.ts'
import type { DataFile, StructValue } from '../../shared/iceberg/index.ts'
import { currentSchema, defaultSpec, type TableMetadata } from '../../shared/iceberg/metadata/index.ts'
import { compilePartitioner } from '../../shared/iceberg/partitioning/index.ts'
import { type DataFileCodec, openDataFile, toDataFile } from '../../shared/parquet/index.ts'
import type { ObjectStorage } from '../../shared/storage/index.ts'

/** Writes `rows` as one Parquet file per partition under the table's data location. */
export async function writeDataFiles(
  storage: ObjectStorage,
  metadata: TableMetadata,
  rows: readonly StructValue[],
  options: { codec?: DataFileCodec; rowGroupRows?: number } = {},
): Promise<DataFile[]> {
  const schema = currentSchema(metadata)
  const spec = defaultSpec(metadata)
  const partitioner = compilePartitioner(spec, schema)
  const groups = new Map<string, { partition: StructValue; rows: StructValue[] }>()
  for (const row of rows) {
    const key = partitioner.key(row)
    let group = groups.get(key)
    if (!group) {
      group = { partition: partitioner.partition(row), rows: [] }
      groups.set(key, group)
    }
    group.rows.push(row)
  }
  const scratch = await mkdtemp(join(tmpdir(), 'floe-it-'))
  try {
    const files: DataFile[] = []
    for (const { partition, rows: groupRows } of groups.values()) {
      const local = join(scratch, `${randomUUID()}.parquet`)
      const writer = await openDataFile({
        path: local,
        schema,
        ...(options.codec ? { codec: options.codec } : {}),
        ...(options.rowGroupRows ? { rowGroupRows: options.rowGroupRows } : {}),
      })
      await writer.append(groupRows)
      const metrics = await writer.close()
      const dir = partitioner.unpartitioned ? '' : `${partitioner.path(partition)}/`
      const filePath = `${metadata.location}/data/${dir}${randomUUID()}.parquet`
      await storage.putFile(filePath, local)
      files.push(toDataFile(metrics, { filePath, schema, specId: spec['spec-id'], partition }))
    }
    return files
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

/** Writes and commits `rows` in one append, as a Floe round would. */
export async function appendRows(
  catalog: Catalog,
  storage: ObjectStorage,
  table: TableIdentifier,
  rows: readonly StructValue[],
  summary: Record<string, string> = {},
): Promise<AppendResult> {
  const { metadata } = await catalog.loadTable(table)
  const files = await writeDataFiles(storage, metadata, rows)
  return appendFiles({
    catalog,
    storage,
    table,
    commitId: randomUUID(),
    commitIdKey: 'floe.commit-id',
    content: () => ({ files, summary }),
  })
}
