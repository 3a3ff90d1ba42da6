// A dataset's view of the catalog that hands the storage credentials the catalog vends with its
// table (catalog.accessDelegation: vended-credentials) to the dataset's own storage client, each
// time the table is created or loaded: the coordinator loads it every round, so a SAS the catalog
// renews reaches the uploads and manifest writes before the old one expires. Other tables'
// credentials (a shared catalog) never reach this dataset's storage.
import {
  type Catalog,
  formatTableIdentifier,
  type LoadedTable,
  type TableIdentifier,
  vendedCredentialsOf,
} from '../shared/catalog/index.ts'
import type { RoutedStorage } from '../shared/storage/index.ts'

export function withVendedCredentials(catalog: Catalog, table: TableIdentifier, storage: RoutedStorage): Catalog {
  const name = formatTableIdentifier(table)
  const take = (identifier: TableIdentifier, loaded: LoadedTable): LoadedTable => {
    if (formatTableIdentifier(identifier) === name) storage.useVendedCredentials(vendedCredentialsOf(loaded))
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
