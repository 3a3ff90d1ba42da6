// The SQL catalog: Iceberg's JDBC catalog layout on a SQLite file or a PostgreSQL database, the
// layout pyiceberg's SqlCatalog and Java's JdbcCatalog (schema V1) share, so either opens a table
// Floe made. The logic is written once here, in SQL both dialects take; sqlite.ts and postgres.ts
// run it (sql-database.ts is the seam):
//
//   iceberg_tables (catalog_name, table_namespace, table_name, metadata_location,
//                   previous_metadata_location, iceberg_type)   -- iceberg_type: Java V1 only
//   iceberg_namespace_properties (catalog_name, namespace, property_key, property_value)
//
// Namespaces are stored dot-joined; a namespace exists when it has properties (Java and pyiceberg
// both write `exists` = `true`) or holds a table, itself or below. Floe writes each metadata file
// itself, `<metadata dir>/<5-digit version>-<uuid>.metadata.json`, then swaps the table's pointer
// with a compare-and-set UPDATE ... WHERE metadata_location = <the one it read>: zero rows
// updated means another writer got there first (COMMIT_CONFLICT). Both databases give that
// single-statement compare-and-set its atomicity (PostgreSQL re-checks the WHERE on the row
// version the concurrent winner left, under READ COMMITTED).
import { FloeError } from '../errors.ts'
import type { Schema } from '../iceberg/index.ts'
import {
  applyUpdates,
  checkRequirements,
  metadataFileLocation,
  metadataFileVersion,
  newTableMetadata,
  parseTableMetadata,
  serializeTableMetadata,
  type TableRequirement,
  type TableUpdate,
  type UnboundPartitionSpec,
} from '../iceberg/metadata/index.ts'
import type { ObjectStorage } from '../storage/index.ts'
import type { Catalog, CommittedTable, CreateTableOptions, LoadedTable, Namespace, TableIdentifier } from './catalog.ts'
import { formatTableIdentifier } from './catalog.ts'
import { formatPostgres, type PostgresConnection, PostgresDatabase } from './postgres.ts'
import type { SqlDatabase, SqlValue } from './sql-database.ts'
import { SqliteDatabase } from './sqlite.ts'

interface SqlCatalogCommonOptions {
  /** The catalog_name column: pyiceberg's catalog name, Java's catalog name. */
  name: string
  /** Where new tables go: `<warehouse>/<namespace levels>/<table>`. */
  warehouse: string
  /** Writes and reads the metadata files (whatever scheme the warehouse has). */
  storage: ObjectStorage
  /** Milliseconds since the epoch, for last-updated-ms and the logs. Default Date.now. */
  now?: () => number
}

/** Where the catalog's tables are: a SQLite file, or a PostgreSQL database. */
export type SqlCatalogOptions = SqlCatalogCommonOptions &
  (
    | {
        /** The SQLite file; created with the catalog tables when missing. */
        path: string
        /** How long a statement may wait for another process's write lock. Default 5 s. */
        busyTimeoutMs?: number
        postgres?: undefined
      }
    | { postgres: PostgresConnection; path?: undefined }
  )

/** `sqlite <path>` or `postgresql user@host:port/database`, without opening anything. */
export function describeSqlDatabase(options: SqlCatalogOptions): string {
  return options.postgres ? `postgresql ${formatPostgres(options.postgres)}` : `sqlite ${options.path}`
}

// Java's JdbcUtil DDL (schema V1) verbatim in meaning; pyiceberg reads and writes it unchanged.
const createTables = [
  `CREATE TABLE IF NOT EXISTS iceberg_tables (
  catalog_name VARCHAR(255) NOT NULL,
  table_namespace VARCHAR(255) NOT NULL,
  table_name VARCHAR(255) NOT NULL,
  metadata_location VARCHAR(1000),
  previous_metadata_location VARCHAR(1000),
  iceberg_type VARCHAR(5),
  PRIMARY KEY (catalog_name, table_namespace, table_name))`,
  `CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
  catalog_name VARCHAR(255) NOT NULL,
  namespace VARCHAR(255) NOT NULL,
  property_key VARCHAR(255),
  property_value VARCHAR(1000),
  PRIMARY KEY (catalog_name, namespace, property_key))`,
]

function namespaceText(namespace: Namespace): string {
  if (namespace.length === 0) throw new TypeError('a namespace needs at least one level')
  return namespace.join('.')
}

/** `ns.%` with LIKE's wildcards in `ns` escaped, as pyiceberg matches sub-namespaces. */
function below(namespace: string): string {
  return `${namespace.replace(/[!_%]/g, (c) => `!${c}`)}.%`
}

function trimSlashes(location: string): string {
  return location.replace(/\/+$/, '')
}

export class SqlCatalog implements Catalog {
  readonly description: string
  readonly #db: SqlDatabase
  readonly #options: SqlCatalogOptions
  readonly #now: () => number
  /** Whether iceberg_tables has Java's iceberg_type column (tables pyiceberg created have not). */
  readonly #typed: boolean

  private constructor(db: SqlDatabase, options: SqlCatalogOptions, typed: boolean) {
    this.#db = db
    this.#options = options
    this.#now = options.now ?? Date.now
    this.#typed = typed
    this.description = `sql ${options.postgres ? db.description : options.path} (${options.name})`
  }

  static async open(options: SqlCatalogOptions): Promise<SqlCatalog> {
    const what = `open ${describeSqlDatabase(options)}`
    let db: SqlDatabase
    try {
      db = options.postgres
        ? await PostgresDatabase.open(options.postgres)
        : await SqliteDatabase.open(options.path, options.busyTimeoutMs ?? 5_000)
    } catch (error) {
      if (error instanceof FloeError) throw error
      throw new FloeError('CATALOG_UNAVAILABLE', `${what}: ${String(error)}`, { cause: error })
    }
    try {
      await db.createTables(createTables)
      const typed = (await db.columns('iceberg_tables')).includes('iceberg_type')
      return new SqlCatalog(db, options, typed)
    } catch (error) {
      await db.close().catch(() => {})
      throw db.failure(error, what)
    }
  }

  async #run(
    what: string,
    sql: string,
    parameters: readonly SqlValue[],
  ): Promise<{ rows: Record<string, unknown>[]; changes: number }> {
    try {
      return await this.#db.query(sql, parameters)
    } catch (error) {
      throw this.#db.failure(error, what)
    }
  }

  #tableFilter(): string {
    return this.#typed ? ` AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)` : ''
  }

  async #pointer(identifier: TableIdentifier): Promise<string | undefined> {
    const { rows } = await this.#run(
      `load ${formatTableIdentifier(identifier)}`,
      `SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?${this.#tableFilter()}`,
      [this.#options.name, namespaceText(identifier.namespace), identifier.name],
    )
    const location = rows[0]?.metadata_location
    return typeof location === 'string' && location !== '' ? location : undefined
  }

  async #namespaceProperties(namespace: string): Promise<Record<string, string>> {
    const { rows } = await this.#run(
      `namespace ${namespace}`,
      'SELECT property_key, property_value FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?',
      [this.#options.name, namespace],
    )
    const properties: Record<string, string> = {}
    for (const row of rows) {
      if (typeof row.property_key === 'string') properties[row.property_key] = String(row.property_value ?? '')
    }
    return properties
  }

  async namespaceExists(namespace: Namespace): Promise<boolean> {
    const text = namespaceText(namespace)
    const parameters = [this.#options.name, text, below(text)]
    for (const [table, column] of [
      ['iceberg_tables', 'table_namespace'],
      ['iceberg_namespace_properties', 'namespace'],
    ] as const) {
      const { rows } = await this.#run(
        `namespace ${text}`,
        `SELECT 1 AS found FROM ${table} WHERE catalog_name = ? AND (${column} = ? OR ${column} LIKE ? ESCAPE '!') LIMIT 1`,
        parameters,
      )
      if (rows.length > 0) return true
    }
    return false
  }

  async createNamespace(namespace: Namespace, properties: Record<string, string> = {}): Promise<void> {
    if (await this.namespaceExists(namespace)) return
    const text = namespaceText(namespace)
    const entries = Object.entries({ ...properties, exists: 'true' })
    const values = entries.map(() => '(?, ?, ?, ?)').join(', ')
    const parameters = entries.flatMap(([key, value]) => [this.#options.name, text, key, value])
    // DO NOTHING: another worker creating the same namespace at the same time is no failure.
    await this.#run(
      `create namespace ${text}`,
      `INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value) VALUES ${values} ON CONFLICT DO NOTHING`,
      parameters,
    )
  }

  async createTable(
    identifier: TableIdentifier,
    schema: Schema,
    spec: UnboundPartitionSpec,
    options: CreateTableOptions = {},
  ): Promise<LoadedTable> {
    const what = `create table ${formatTableIdentifier(identifier)}`
    const namespace = namespaceText(identifier.namespace)
    if (!(await this.namespaceExists(identifier.namespace))) {
      throw new FloeError('CATALOG_NOT_FOUND', `${what}: namespace ${namespace} does not exist`)
    }
    if ((await this.#pointer(identifier)) !== undefined) return this.#exists(identifier, options, what)

    const namespaceLocation = (await this.#namespaceProperties(namespace)).location
    const location = trimSlashes(
      options.location ??
        (namespaceLocation
          ? `${trimSlashes(namespaceLocation)}/${identifier.name}`
          : `${trimSlashes(this.#options.warehouse)}/${identifier.namespace.join('/')}/${identifier.name}`),
    )
    const metadata = newTableMetadata({
      schema,
      spec,
      ...(options.sortOrder ? { sortOrder: options.sortOrder } : {}),
      location,
      properties: options.properties ?? {},
      nowMs: this.#now(),
    })
    const metadataLocation = metadataFileLocation(metadata, 0)
    await this.#options.storage.put(metadataLocation, new TextEncoder().encode(serializeTableMetadata(metadata)))
    try {
      await this.#db.query(
        `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location${this.#typed ? ', iceberg_type' : ''}) VALUES (?, ?, ?, ?, NULL${this.#typed ? ", 'TABLE'" : ''})`,
        [this.#options.name, namespace, identifier.name, metadataLocation],
      )
    } catch (error) {
      await this.#options.storage.delete(metadataLocation).catch(() => false)
      if (this.#db.isUniqueViolation(error)) return this.#exists(identifier, options, what)
      throw this.#db.failure(error, what)
    }
    return { metadata, metadataLocation, config: {}, storageCredentials: [] }
  }

  #exists(identifier: TableIdentifier, options: CreateTableOptions, what: string): Promise<LoadedTable> {
    if (options.ifExists === 'load') return this.loadTable(identifier)
    throw new FloeError('CATALOG_ALREADY_EXISTS', `${what}: the table exists`)
  }

  async loadTable(identifier: TableIdentifier): Promise<LoadedTable> {
    const metadataLocation = await this.#pointer(identifier)
    if (metadataLocation === undefined) {
      throw new FloeError('CATALOG_NOT_FOUND', `table ${formatTableIdentifier(identifier)} does not exist`)
    }
    const metadata = parseTableMetadata(await this.#options.storage.get(metadataLocation))
    return { metadata, metadataLocation, config: {}, storageCredentials: [] }
  }

  async tableExists(identifier: TableIdentifier): Promise<boolean> {
    return (await this.#pointer(identifier)) !== undefined
  }

  async listTables(namespace: Namespace): Promise<TableIdentifier[]> {
    const { rows } = await this.#run(
      `list tables of ${namespace.join('.')}`,
      `SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?${this.#tableFilter()} ORDER BY table_name`,
      [this.#options.name, namespaceText(namespace)],
    )
    return rows.map((row) => ({ namespace: [...namespace], name: String(row.table_name) }))
  }

  async commitTable(
    identifier: TableIdentifier,
    requirements: readonly TableRequirement[],
    updates: readonly TableUpdate[],
  ): Promise<CommittedTable> {
    const what = `commit to ${formatTableIdentifier(identifier)}`
    // A commit that creates its table (assert-create, stage-create) is not supported: the table
    // must exist, so the requirement check below meets a table or this throws CATALOG_NOT_FOUND.
    const current = await this.loadTable(identifier)
    checkRequirements(current.metadata, requirements)
    const next = applyUpdates(current.metadata, updates, this.#now(), current.metadataLocation)
    if (next === current.metadata) return { metadata: current.metadata, metadataLocation: current.metadataLocation }

    const version = metadataFileVersion(current.metadataLocation) + 1
    const metadataLocation = metadataFileLocation(next, version)
    await this.#options.storage.put(metadataLocation, new TextEncoder().encode(serializeTableMetadata(next)))

    let swapped: boolean
    try {
      const { changes } = await this.#db.query(
        `UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?
         WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?`,
        [
          metadataLocation,
          current.metadataLocation,
          this.#options.name,
          namespaceText(identifier.namespace),
          identifier.name,
          current.metadataLocation,
        ],
      )
      swapped = changes === 1
    } catch (error) {
      // The database ran nothing (never reached, still locked, refused the statement).
      if (this.#db.neverApplied(error)) {
        await this.#options.storage.delete(metadataLocation).catch(() => false)
        throw this.#db.failure(error, what)
      }
      throw new FloeError('COMMIT_STATE_UNKNOWN', `${what}: the pointer update failed`, { cause: error })
    }
    if (!swapped) {
      // Never referenced: removing it leaves no trace of the lost attempt.
      await this.#options.storage.delete(metadataLocation).catch(() => false)
      throw new FloeError('COMMIT_CONFLICT', `${what}: the table changed since ${current.metadataLocation}`, {
        details: { expected: current.metadataLocation },
      })
    }
    return { metadata: next, metadataLocation }
  }

  async dropTable(identifier: TableIdentifier, options: { purge?: boolean } = {}): Promise<boolean> {
    const what = `drop table ${formatTableIdentifier(identifier)}`
    const location = options.purge
      ? (await this.loadTable(identifier).catch(() => undefined))?.metadata.location
      : undefined
    const result = await this.#run(
      what,
      'DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?',
      [this.#options.name, namespaceText(identifier.namespace), identifier.name],
    )
    if (location !== undefined) {
      for await (const object of this.#options.storage.list(`${location}/`))
        await this.#options.storage.delete(object.location)
    }
    return result.changes > 0
  }

  async close(): Promise<void> {
    await this.#db.close()
  }
}
