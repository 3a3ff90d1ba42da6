// A dataset's table: created on first run (namespace and table, as the configuration describes
// them), loaded otherwise, and checked against the configuration so that a worker never writes
// columns the table does not have or has with another type.
import type { Catalog, LoadedTable, TableIdentifier } from '../shared/catalog/index.ts'
import type { DatasetConfig } from '../shared/config/index.ts'
import type { IcebergType } from '../shared/iceberg/index.ts'
import { currentSchema } from '../shared/iceberg/metadata/index.ts'
import { FloeError } from '../shared/index.ts'

export function tableIdentifier(dataset: DatasetConfig): TableIdentifier {
  return { namespace: dataset.namespace, name: dataset.tableName }
}

/** Types compared by shape: field ids differ between the config and the catalog's numbering. */
function sameType(a: IcebergType, b: IcebergType): boolean {
  if (typeof a === 'string' || typeof b === 'string') {
    return typeof a === 'string' && typeof b === 'string' && a.replace(/\s+/g, '') === b.replace(/\s+/g, '')
  }
  if (a.type === 'list' && b.type === 'list') return sameType(a.element, b.element)
  if (a.type === 'map' && b.type === 'map') return sameType(a.key, b.key) && sameType(a.value, b.value)
  if (a.type === 'struct' && b.type === 'struct') {
    return (
      a.fields.length === b.fields.length &&
      a.fields.every((f, i) => f.name === b.fields[i]?.name && sameType(f.type, b.fields[i]!.type))
    )
  }
  return false
}

export async function ensureDatasetTable(catalog: Catalog, dataset: DatasetConfig): Promise<LoadedTable> {
  const identifier = tableIdentifier(dataset)
  await catalog.createNamespace(identifier.namespace)
  const table = await catalog.createTable(identifier, dataset.icebergSchema, dataset.icebergSpec, {
    ifExists: 'load',
    properties: { 'format-version': '2', ...dataset.tableProperties },
  })
  const schema = currentSchema(table.metadata)
  for (const field of dataset.icebergSchema.fields) {
    const existing = schema.fields.find((f) => f.name === field.name)
    if (!existing) {
      throw new FloeError(
        'CONFIG_INVALID',
        `datasets.${dataset.name}: table ${dataset.table} has no column ${field.name}; add it to the table or remove it from the schema`,
      )
    }
    if (!sameType(existing.type, field.type)) {
      throw new FloeError(
        'CONFIG_INVALID',
        `datasets.${dataset.name}: column ${field.name} is ${JSON.stringify(existing.type)} in table ${dataset.table}, ${JSON.stringify(field.type)} in the configuration`,
      )
    }
  }
  return table
}
