// The catalog seam: what Floe asks of an Iceberg catalog, whichever kind it is (REST or SQL).
//
// Errors are FloeErrors; the commit loop decides by code:
// - CATALOG_NOT_FOUND: no such namespace or table.
// - CATALOG_ALREADY_EXISTS: createTable of a table that exists (unless ifExists: 'load').
// - COMMIT_CONFLICT: a requirement failed or the compare-and-set lost: reload, re-check, retry.
// - COMMIT_STATE_UNKNOWN: the commit was sent and may or may not have been applied (5xx, timeout,
//   connection lost after sending): reload and look for the commit before retrying.
// - CATALOG_UNAVAILABLE: the request never reached the catalog (connection refused, SQLite
//   busy past its timeout): safe to retry as it is.
// - CATALOG_BAD_REQUEST: the catalog refused the request itself (400, 401/403, an update the
//   table cannot take, unreadable metadata): retrying the same request cannot succeed.

import type { Schema, SortOrder } from '../iceberg/index.ts'
import type { TableMetadata, TableRequirement, TableUpdate, UnboundPartitionSpec } from '../iceberg/metadata/index.ts'

export type Namespace = readonly string[]

export interface TableIdentifier {
  namespace: Namespace
  name: string
}

/** `analytics.events` -> namespace [analytics], name events; the last dot separates the name. */
export function parseTableIdentifier(text: string): TableIdentifier {
  const parts = text.split('.')
  const name = parts.pop()
  if (!name || parts.length === 0 || parts.some((part) => part === '')) {
    throw new TypeError(`not a table identifier (namespace.table): ${text}`)
  }
  return { namespace: parts, name }
}

export function formatTableIdentifier(identifier: TableIdentifier): string {
  return [...identifier.namespace, identifier.name].join('.')
}

/** A storage credential vended by a REST catalog, for locations under `prefix`. */
export interface StorageCredential {
  prefix: string
  config: Record<string, string>
}

export interface LoadedTable {
  metadata: TableMetadata
  metadataLocation: string
  /** The REST load-table `config` (FileIO settings, credentials); {} from the SQL catalog. */
  config: Record<string, string>
  storageCredentials: StorageCredential[]
}

/**
 * The storage properties a loaded table came with: its `config`, under the storage-credentials
 * entry whose prefix is the longest one the table's location starts with (the spec's rule).
 */
export function vendedCredentialsOf(table: LoadedTable): Record<string, string> {
  const location = table.metadata.location
  const best = table.storageCredentials
    .filter((credential) => location.startsWith(credential.prefix))
    .sort((a, b) => b.prefix.length - a.prefix.length)[0]
  return { ...table.config, ...best?.config }
}

export interface CommittedTable {
  metadata: TableMetadata
  metadataLocation: string
}

export interface CreateTableOptions {
  properties?: Record<string, string>
  /** Defaults to the namespace's `location` property, else `<warehouse>/<namespace levels>/<table>`. */
  location?: string
  sortOrder?: SortOrder
  /**
   * 'load': if the table exists already (or another worker creates it first), load and return
   * it. Its schema and spec are then whatever the table has: compare before writing.
   */
  ifExists?: 'fail' | 'load'
}

export interface Catalog {
  /** For logs: `rest <uri>` or `sql <path> (<catalog name>)`. */
  readonly description: string

  /** Creates the namespace if it does not exist yet; never fails because it exists. */
  createNamespace(namespace: Namespace, properties?: Record<string, string>): Promise<void>
  namespaceExists(namespace: Namespace): Promise<boolean>

  /**
   * Creates a format v2 table. Field ids, spec ids and partition field ids are reassigned by the
   * catalog (see newTableMetadata): write with the returned metadata's schema, not `schema`.
   * Partition source ids refer to the field ids of `schema` as given.
   */
  createTable(
    identifier: TableIdentifier,
    schema: Schema,
    spec: UnboundPartitionSpec,
    options?: CreateTableOptions,
  ): Promise<LoadedTable>
  loadTable(identifier: TableIdentifier): Promise<LoadedTable>
  tableExists(identifier: TableIdentifier): Promise<boolean>
  /** The tables of one namespace (not of the namespaces under it), sorted by name; none if it does not exist. */
  listTables(namespace: Namespace): Promise<TableIdentifier[]>

  /**
   * Applies the updates atomically if every requirement holds, and returns the table as it is
   * after the commit. An append is `add-snapshot` + `set-snapshot-ref` main (+ `set-properties`)
   * with the requirement `assert-ref-snapshot-id` main = the snapshot it was built on.
   */
  commitTable(
    identifier: TableIdentifier,
    requirements: readonly TableRequirement[],
    updates: readonly TableUpdate[],
  ): Promise<CommittedTable>

  /** Removes the table from the catalog; `purge` also deletes its files. False if there was none. */
  dropTable(identifier: TableIdentifier, options?: { purge?: boolean }): Promise<boolean>

  close(): Promise<void>
}
