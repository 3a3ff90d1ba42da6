// Iceberg catalogs: the Catalog interface, a REST catalog client (undici, lossless JSON) and the
// SQL catalog on SQLite or PostgreSQL in the JdbcCatalog / pyiceberg SqlCatalog layout. Files not
// re-exported here are internal to shared/catalog.
export {
  type Catalog,
  type CommittedTable,
  type CreateTableOptions,
  formatTableIdentifier,
  type LoadedTable,
  type Namespace,
  parseTableIdentifier,
  type StorageCredential,
  type TableIdentifier,
  vendedCredentialsOf,
} from './catalog.ts'
export { type CatalogConfig, openCatalog } from './open.ts'
export type { PostgresConnection } from './postgres.ts'
export { RestCatalog, type RestCatalogOptions } from './rest.ts'
export { SqlCatalog, type SqlCatalogOptions } from './sql.ts'
