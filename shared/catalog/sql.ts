// The embedded catalog: Iceberg's JDBC catalog layout on a SQLite file, the layout pyiceberg's
// SqlCatalog and Java's JdbcCatalog (schema V1) share, so either opens a table Floe made:
//
//   iceberg_tables (catalog_name, table_namespace, table_name, metadata_location,
//                   previous_metadata_location, iceberg_type)   -- iceberg_type: Java V1 only
//   iceberg_namespace_properties (catalog_name, namespace, property_key, property_value)
//
// Namespaces are stored dot-joined; a namespace exists when it has properties (Java and pyiceberg
// both write `exists` = `true`) or holds a table, itself or below. Floe writes each metadata file
// itself, `<metadata dir>/<5-digit version>-<uuid>.metadata.json`, then swaps the table's pointer
// with a compare-and-set UPDATE ... WHERE metadata_location = <the one it read>: zero rows
// updated means another writer got there first (COMMIT_CONFLICT).
import type { DatabaseSync } from 'node:sqlite'
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
import { isBusy, isConstraint, openDatabase, retryWhileBusy } from './sqlite.ts'

export interface SqlCatalogOptions {
  /** The SQLite file; created with the catalog tables when missing. */
  path: string
  /** The catalog_name column: pyiceberg's catalog name, Java's catalog name. */
  name: string
  /** Where new tables go: `<warehouse>/<namespace levels>/<table>`. */
  warehouse: string
  /** Writes and reads the metadata files (whatever scheme the warehouse has). */
  storage: ObjectStorage
  /** How long a statement may wait for another process's write lock. Default 5 s. */
  busyTimeoutMs?: number
  /** Milliseconds since the epoch, for last-updated-ms and the logs. Default Date.now. */
  now?: () => number
}

// Java's JdbcUtil DDL (schema V1) verbatim in meaning; pyiceberg reads and writes it unchanged.
const createTables = `
CREATE TABLE IF NOT EXISTS iceberg_tables (
  catalog_name VARCHAR(255) NOT NULL,
  table_namespace VARCHAR(255) NOT NULL,
  table_name VARCHAR(255) NOT NULL,
  metadata_location VARCHAR(1000),
  previous_metadata_location VARCHAR(1000),
  iceberg_type VARCHAR(5),
  PRIMARY KEY (catalog_name, table_namespace, table_name));
CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
  catalog_name VARCHAR(255) NOT NULL,
  namespace VARCHAR(255) NOT NULL,
  property_key VARCHAR(255),
  property_value VARCHAR(1000),
  PRIMARY KEY (catalog_name, namespace, property_key));`

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
  readonly #db: DatabaseSync
  readonly #options: SqlCatalogOptions
  readonly #busyMs: number
  readonly #now: () => number
  /** Whether iceberg_tables has Java's iceberg_type column (a file pyiceberg created has not). */
  readonly #typed: boolean

  private constructor(db: DatabaseSync, options: SqlCatalogOptions, typed: boolean) {
    this.#db = db
    this.#options = options
    this.#busyMs = options.busyTimeoutMs ?? 5_000
    this.#now = options.now ?? Date.now
    this.#typed = typed
    this.description = `sql ${options.path} (${options.name})`
  }

  static async open(options: SqlCatalogOptions): Promise<SqlCatalog> {
    const busyMs = options.busyTimeoutMs ?? 5_000
    const db = await openDatabase(options.path, busyMs)
    try {
      await retryWhileBusy(busyMs, () => db.exec(createTables))
      const columns = db.prepare('PRAGMA table_info(iceberg_tables)').all()
      const typed = columns.some((column) => column.name === 'iceberg_type')
      return new SqlCatalog(db, options, typed)
    } catch (error) {
      db.close()
      throw failure(error, `open ${options.path}`)
    }
  }

  #run<T>(what: string, statement: () => T): Promise<T> {
    return retryWhileBusy(this.#busyMs, statement).catch((error: unknown) => {
      throw failure(error, what)
    })
  }

  #tableFilter(): string {
    return this.#typed ? ` AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)` : ''
  }

  async #pointer(identifier: TableIdentifier): Promise<string | undefined> {
    const row = await this.#run(`load ${formatTableIdentifier(identifier)}`, () =>
      this.#db
        .prepare(
          `SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?${this.#tableFilter()}`,
        )
        .get(this.#options.name, namespaceText(identifier.namespace), identifier.name),
    )
    const location = row?.metadata_location
    return typeof location === 'string' && location !== '' ? location : undefined
  }

  async #namespaceProperties(namespace: string): Promise<Record<string, string>> {
    const rows = await this.#run(`namespace ${namespace}`, () =>
      this.#db
        .prepare(
          'SELECT property_key, property_value FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?',
        )
        .all(this.#options.name, namespace),
    )
    const properties: Record<string, string> = {}
    for (const row of rows) {
      if (typeof row.property_key === 'string') properties[row.property_key] = String(row.property_value ?? '')
    }
    return properties
  }

  async namespaceExists(namespace: Namespace): Promise<boolean> {
    const text = namespaceText(namespace)
    const name = this.#options.name
    const found = await this.#run(`namespace ${text}`, () => {
      const table = this.#db
        .prepare(
          `SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND (table_namespace = ? OR table_namespace LIKE ? ESCAPE '!') LIMIT 1`,
        )
        .get(name, text, below(text))
      if (table !== undefined) return true
      const property = this.#db
        .prepare(
          `SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? AND (namespace = ? OR namespace LIKE ? ESCAPE '!') LIMIT 1`,
        )
        .get(name, text, below(text))
      return property !== undefined
    })
    return found
  }

  async createNamespace(namespace: Namespace, properties: Record<string, string> = {}): Promise<void> {
    if (await this.namespaceExists(namespace)) return
    const text = namespaceText(namespace)
    const entries = Object.entries({ ...properties, exists: 'true' })
    const values = entries.map(() => '(?, ?, ?, ?)').join(', ')
    const parameters = entries.flatMap(([key, value]) => [this.#options.name, text, key, value])
    // OR IGNORE: another worker creating the same namespace at the same time is no failure.
    await this.#run(`create namespace ${text}`, () =>
      this.#db
        .prepare(
          `INSERT OR IGNORE INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value) VALUES ${values}`,
        )
        .run(...parameters),
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
      await retryWhileBusy(this.#busyMs, () =>
        this.#db
          .prepare(
            `INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location${this.#typed ? ', iceberg_type' : ''}) VALUES (?, ?, ?, ?, NULL${this.#typed ? ", 'TABLE'" : ''})`,
          )
          .run(this.#options.name, namespace, identifier.name, metadataLocation),
      )
    } catch (error) {
      await this.#options.storage.delete(metadataLocation).catch(() => false)
      if (isConstraint(error)) return this.#exists(identifier, options, what)
      throw failure(error, what)
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
      swapped = await retryWhileBusy(this.#busyMs, () => {
        const result = this.#db
          .prepare(
            `UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?
             WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?`,
          )
          .run(
            metadataLocation,
            current.metadataLocation,
            this.#options.name,
            namespaceText(identifier.namespace),
            identifier.name,
            current.metadataLocation,
          )
        return Number(result.changes) === 1
      })
    } catch (error) {
      // Still locked at the deadline: SQLite ran nothing, so the commit did not happen.
      if (error instanceof FloeError || isBusy(error)) {
        await this.#options.storage.delete(metadataLocation).catch(() => false)
        throw failure(error, what)
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
    const result = await this.#run(what, () =>
      this.#db
        .prepare('DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?')
        .run(this.#options.name, namespaceText(identifier.namespace), identifier.name),
    )
    if (location !== undefined) {
      for await (const object of this.#options.storage.list(`${location}/`))
        await this.#options.storage.delete(object.location)
    }
    return Number(result.changes) > 0
  }

  async close(): Promise<void> {
    if (this.#db.isOpen) this.#db.close()
  }
}

function failure(error: unknown, what: string): unknown {
  if (error instanceof FloeError) return error
  return new FloeError('CATALOG_UNAVAILABLE', `${what}: SQLite failed`, { cause: error })
}
