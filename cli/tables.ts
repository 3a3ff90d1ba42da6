// A dataset's table: created on first run (namespace and table, as the configuration describes
// them), loaded otherwise, and checked against the configuration so that a worker never writes
// columns the table does not have or has with another type.
//
// Workers of one fleet start together and each creates what is missing. A catalog may answer the
// loser of two concurrent creations with a 5xx instead of a 409 (the Java REST catalog on SQLite:
// a duplicate key in iceberg_namespace_properties), so after a failed creation the worker looks
// whether the namespace or table is there now, and only tries again, a few times, if it is not.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Catalog, LoadedTable, TableIdentifier } from '../shared/catalog/index.ts'
import type { DatasetConfig } from '../shared/config/index.ts'
import type { IcebergType } from '../shared/iceberg/index.ts'
import { currentSchema, type TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { FloeError, isFloeError } from '../shared/index.ts'

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

/** How a failed creation is tried again: `attempts` in all, the wait doubling from `firstWaitMs`. */
export interface CreateRetry {
  attempts: number
  firstWaitMs: number
  wait?: (ms: number) => Promise<unknown>
}

const defaultRetry: CreateRetry = { attempts: 5, firstWaitMs: 200 }

/**
 * Runs `create`; when it fails with a retryable catalog error (a 5xx, no answer), asks `find`
 * whether another worker's creation made it unnecessary, and tries again otherwise. Anything not
 * retryable (a 4xx: a bad name, no permission) is fatal to the start at once.
 */
async function createOrFind<T>(
  create: () => Promise<T>,
  find: () => Promise<{ found: T } | undefined>,
  retry: CreateRetry,
): Promise<T> {
  const wait = retry.wait ?? sleep
  let waitMs = retry.firstWaitMs
  for (let attempt = 1; ; attempt++) {
    try {
      return await create()
    } catch (error) {
      if (!isFloeError(error) || !error.retryable) throw error
      const found = await find().catch(() => undefined)
      if (found !== undefined) return found.found
      if (attempt >= retry.attempts) throw error
      await wait(waitMs)
      waitMs *= 2
    }
  }
}

export async function ensureDatasetTable(
  catalog: Catalog,
  dataset: DatasetConfig,
  retry: CreateRetry = defaultRetry,
): Promise<LoadedTable> {
  const identifier = tableIdentifier(dataset)
  await createOrFind(
    () => catalog.createNamespace(identifier.namespace),
    async () => ((await catalog.namespaceExists(identifier.namespace)) ? { found: undefined } : undefined),
    retry,
  )
  const table = await createOrFind(
    () =>
      catalog.createTable(identifier, dataset.icebergSchema, dataset.icebergSpec, {
        ifExists: 'load',
        properties: { 'format-version': '2', ...dataset.tableProperties },
      }),
    async () => ((await catalog.tableExists(identifier)) ? { found: await catalog.loadTable(identifier) } : undefined),
    retry,
  )
  checkTableSchema(dataset, table.metadata)
  return table
}

/**
 * Refuses a table that lacks a configured column or has it with another type: a worker would
 * write columns the table cannot take. The check `floe run` makes at start, and `floe validate`.
 */
export function checkTableSchema(dataset: DatasetConfig, metadata: TableMetadata): void {
  const schema = currentSchema(metadata)
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
}
