// A dataset's table: created on first run (namespace and table, as the configuration describes
// them), loaded otherwise, evolved when the dataset allows it (schemaEvolution: addColumns), and
// checked against the configuration so that a worker never writes columns the table does not have
// or has with another type.
//
// Workers of one fleet start together and each creates what is missing. A catalog may answer the
// loser of two concurrent creations with a 5xx instead of a 409 (the Java REST catalog on SQLite:
// a duplicate key in iceberg_namespace_properties), so after a failed creation the worker looks
// whether the namespace or table is there now, and only tries again, a few times, if it is not.
import { setTimeout as sleep } from 'node:timers/promises'
import { tablesRouteCanName } from '../coordinator/index.ts'
import { type Catalog, formatTableIdentifier, type LoadedTable, type TableIdentifier } from '../shared/catalog/index.ts'
import { type DatasetConfig, routeDefinitionOf } from '../shared/config/index.ts'
import type { NestedField } from '../shared/iceberg/index.ts'
import {
  canPromote,
  currentSchema,
  dataDirectory,
  planSchemaChange,
  planWidening,
  type SchemaChange,
  sameType,
  type TableMetadata,
  widenFields,
} from '../shared/iceberg/metadata/index.ts'
import { FloeError, isFloeError } from '../shared/index.ts'
import { findProgress, isGroupOffsetsKey } from '../shared/progress/index.ts'

export function tableIdentifier(dataset: DatasetConfig): TableIdentifier {
  return { namespace: dataset.namespace, name: dataset.tableName }
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

export interface EnsureTableOptions {
  retry?: CreateRetry
  /** Told of a schema change this worker committed (schemaEvolution: addColumns). */
  onSchemaChange?: (change: SchemaChange) => void
}

export async function ensureDatasetTable(
  catalog: Catalog,
  dataset: DatasetConfig,
  options: EnsureTableOptions = {},
): Promise<LoadedTable> {
  const retry = options.retry ?? defaultRetry
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
  // A dataset that infers its columns evolves its table by nature: a column its schema declares is
  // added at start like one a record brings.
  const evolves = dataset.schemaEvolution === 'addColumns' || dataset.inferColumns
  const ready = evolves ? await evolveTable(catalog, dataset, table, options) : table
  checkTableSchema(dataset, ready.metadata)
  return ready
}

/**
 * The dataset as one of the tables its route names sees it: the same columns, spec and
 * properties, another name, and no route of its own.
 */
export function routedDataset(dataset: DatasetConfig, table: string): DatasetConfig {
  const parts = table.split('.')
  return { ...dataset, table, namespace: parts.slice(0, -1), tableName: parts.at(-1) ?? table, route: undefined }
}

/**
 * The tables a routed dataset has written to: those of its route's namespaces that the route can
 * name (routeCanName) and that hold a progress marker of the dataset's group, sorted by name.
 * What maintenance works on beside the ledger: a table made on first use and not yet committed
 * to holds nothing to maintain, and a table of a like name Floe never wrote is not Floe's to
 * compact or expire. One catalog read per candidate, so it is asked once per maintenance run.
 */
export async function routedTablesOf(
  catalog: Catalog,
  dataset: DatasetConfig,
  group: string,
): Promise<TableIdentifier[]> {
  const route = dataset.route
  if (route === undefined) return []
  const found: TableIdentifier[] = []
  for (const table of await tablesRouteCanName(catalog, routeDefinitionOf(route), dataset.table)) {
    const loaded = await catalog.loadTable(table).catch((error: unknown) => {
      // dropped since the listing
      if (isFloeError(error, 'CATALOG_NOT_FOUND')) return undefined
      throw error
    })
    if (loaded && holdsMarkerOf(loaded.metadata, group)) found.push(table)
  }
  return found.sort((a, b) => compareText(formatTableIdentifier(a), formatTableIdentifier(b)))
}

/** The table holds a marker of `group`, of any route generation (each is mirrored in a property). */
function holdsMarkerOf(metadata: TableMetadata, group: string): boolean {
  return (
    findProgress(metadata, group).source.kind !== 'none' ||
    Object.keys(metadata.properties).some((key) => isGroupOffsetsKey(key, group))
  )
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * The tables a routed dataset's records name, each made ready once per worker (created with the
 * dataset's schema and spec on first use, or checked against them): the first record of a table
 * asks, every later one finds it ready. Workers that meet a new table at once each create it, and
 * createOrFind makes every one of them find the one table. A failed ensure is forgotten, so the
 * next record asks again. Only the names are kept, not the tables' metadata: a dataset may route
 * to thousands.
 */
export class RoutedTables {
  readonly #catalog: Catalog
  readonly #dataset: DatasetConfig
  readonly #options: RoutedTablesOptions
  /** Table -> where its data files go, once it is ready, and when it was last loaded. */
  readonly #ready = new Map<string, { location: Promise<string>; loadedAt: number; reloading?: boolean }>()

  constructor(catalog: Catalog, dataset: DatasetConfig, options: RoutedTablesOptions = {}) {
    this.#catalog = catalog
    this.#dataset = dataset
    this.#options = options
  }

  /** Tables made ready (or being made ready) by this worker. */
  get size(): number {
    return this.#ready.size
  }

  /**
   * Makes the table ready (created, or checked) once; resolves to where its data files go. With
   * `reloadAfterMs`, a table last loaded longer ago is loaded again meanwhile (the catalog view
   * takes the credentials it vends); a failed reload is tried again at the next ensure.
   */
  ensure(table: string): Promise<string> {
    const now = this.#options.now ?? Date.now
    const ready = this.#ready.get(table)
    if (ready === undefined) {
      const location = ensureDatasetTable(this.#catalog, routedDataset(this.#dataset, table), this.#options).then(
        (loaded) => dataDirectory(loaded.metadata),
      )
      this.#ready.set(table, { location, loadedAt: now() })
      location.catch(() => this.#ready.delete(table))
      return location
    }
    const reloadAfterMs = this.#options.reloadAfterMs
    if (reloadAfterMs !== undefined && !ready.reloading && now() - ready.loadedAt >= reloadAfterMs) {
      ready.reloading = true
      this.#catalog
        .loadTable(tableIdentifier(routedDataset(this.#dataset, table)))
        .then(
          () => {
            ready.loadedAt = now()
          },
          () => undefined,
        )
        .finally(() => {
          ready.reloading = false
        })
    }
    return ready.location
  }
}

export interface RoutedTablesOptions extends EnsureTableOptions {
  /**
   * Load a ready table again once its last load is this old: a catalog that vends each table its
   * own short-lived credentials renews them only with a load, and only the coordinator loads a
   * routed table every round it commits it.
   */
  reloadAfterMs?: number
  now?: () => number
}

/** How often a schema change is planned again after another writer changed the table first. */
const evolveAttempts = 5

/**
 * Adds the configured columns the table lacks and widens the types that may widen, in one commit
 * on the schema it read. Workers of one fleet start together and each makes the same change: the
 * loser's commit conflicts, it reads the table again and finds nothing left to do.
 */
function evolveTable(
  catalog: Catalog,
  dataset: DatasetConfig,
  loaded: LoadedTable,
  options: EnsureTableOptions,
): Promise<LoadedTable> {
  const plan = (metadata: TableMetadata) => planSchemaChange(metadata, dataset.icebergSchema.fields)
  return commitPlanned(catalog, tableIdentifier(dataset), loaded, plan, options.onSchemaChange)
}

/**
 * A dataset that infers its columns: widens the table's schema to take every request (the fields
 * records brought), in one commit on the schema it read. Workers that meet the same new field at
 * once each commit it: the losers' commits conflict, they read the table again, and find nothing
 * left to do or only their own part. Returns the table as it is after.
 */
export async function widenTable(
  catalog: Catalog,
  dataset: DatasetConfig,
  requests: readonly (readonly NestedField[])[],
  onSchemaChange?: (change: SchemaChange) => void,
): Promise<LoadedTable> {
  const identifier = tableIdentifier(dataset)
  let wanted: readonly NestedField[] = []
  for (const fields of requests) wanted = widenFields(wanted, fields)
  const plan = (metadata: TableMetadata) => planWidening(metadata, wanted)
  return commitPlanned(catalog, identifier, await catalog.loadTable(identifier), plan, onSchemaChange)
}

/** Commits the schema change `plan` makes of the table; after a conflict, reads the table and plans again. */
async function commitPlanned(
  catalog: Catalog,
  identifier: TableIdentifier,
  loaded: LoadedTable,
  plan: (metadata: TableMetadata) => SchemaChange,
  onSchemaChange: ((change: SchemaChange) => void) | undefined,
): Promise<LoadedTable> {
  let table = loaded
  for (let attempt = 1; ; attempt++) {
    const change = plan(table.metadata)
    if (!change.commit) return table
    try {
      // the committed metadata with the load's FileIO settings and credentials, which it does not change
      const committed = await catalog.commitTable(identifier, change.commit.requirements, change.commit.updates)
      onSchemaChange?.(change)
      return { ...table, ...committed }
    } catch (error) {
      if (!isFloeError(error, 'COMMIT_CONFLICT') || attempt >= evolveAttempts) throw error
      table = await catalog.loadTable(identifier)
    }
  }
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
        `datasets.${dataset.name}: table ${dataset.table} has no column ${field.name}; add it to the table, remove it from the schema, or set schemaEvolution: addColumns`,
      )
    }
    if (!sameType(existing.type, field.type)) {
      const hint = canPromote(existing.type, field.type) ? '; set schemaEvolution: addColumns to widen it' : ''
      throw new FloeError(
        'CONFIG_INVALID',
        `datasets.${dataset.name}: column ${field.name} is ${JSON.stringify(existing.type)} in table ${dataset.table}, ${JSON.stringify(field.type)} in the configuration${hint}`,
      )
    }
  }
}
