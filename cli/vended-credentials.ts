// A dataset's view of the catalog that hands the storage credentials the catalog vends with its
// tables (catalog.accessDelegation: vended-credentials) to the dataset's own storage client, each
// time a table is created or loaded: the coordinator loads its table every round, so a SAS the
// catalog renews reaches the uploads and manifest writes before the old one expires. The dataset's
// table's credentials serve every location of the dataset; a table its route can name keeps its
// own for its location only, so a catalog that scopes each table's credentials to that table is
// answered with the right ones everywhere. Other tables' credentials (a shared catalog) never
// reach this dataset's storage.
import {
  type Catalog,
  formatTableIdentifier,
  type LoadedTable,
  type TableIdentifier,
  vendedCredentialsOf,
} from '../shared/catalog/index.ts'
import { dataDirectory, metadataDirectory, type TableMetadata } from '../shared/iceberg/metadata/index.ts'
import type { RoutedStorage } from '../shared/storage/index.ts'

/** The table's location, and its data and metadata folders where properties put them elsewhere. */
function scopesOf(metadata: TableMetadata): string[] {
  const folder = (location: string) => `${location.replace(/\/+$/, '')}/`
  const location = folder(metadata.location)
  const elsewhere = [dataDirectory(metadata), metadataDirectory(metadata)]
    .map(folder)
    .filter((f) => !f.startsWith(location))
  return [location, ...new Set(elsewhere)]
}

export function withVendedCredentials(
  catalog: Catalog,
  table: TableIdentifier,
  storage: Pick<RoutedStorage, 'useVendedCredentials'>,
  /** A routed dataset: whether its route can name the table (`namespace.name`). */
  routeNames?: (table: string) => boolean,
): Catalog {
  const name = formatTableIdentifier(table)
  const take = (identifier: TableIdentifier, loaded: LoadedTable): LoadedTable => {
    const loadedName = formatTableIdentifier(identifier)
    if (loadedName === name) storage.useVendedCredentials(vendedCredentialsOf(loaded))
    else if (routeNames?.(loadedName)) {
      // scoped to where the table writes, never wider, whatever prefix the catalog gave: a table
      // no longer written must not lend its ageing credentials to the others
      const credentials = vendedCredentialsOf(loaded)
      for (const scope of scopesOf(loaded.metadata)) storage.useVendedCredentials(credentials, scope)
    }
    return loaded
  }
  return {
    description: catalog.description,
    createNamespace: (namespace, properties) => catalog.createNamespace(namespace, properties),
    namespaceExists: (namespace) => catalog.namespaceExists(namespace),
    createTable: async (identifier, schema, spec, options) =>
      take(identifier, await catalog.createTable(identifier, schema, spec, options)),
    loadTable: async (identifier) => take(identifier, await catalog.loadTable(identifier)),
    tableExists: (identifier) => catalog.tableExists(identifier),
    listTables: (namespace) => catalog.listTables(namespace),
    commitTable: (identifier, requirements, updates) => catalog.commitTable(identifier, requirements, updates),
    dropTable: (identifier, options) => catalog.dropTable(identifier, options),
    // The worker's catalog is shared by its datasets: the worker closes it, not a dataset.
    close: async () => {},
  }
}
