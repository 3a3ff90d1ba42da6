// One entry point from configuration to a Catalog, so callers never name an implementation.
import type { Catalog } from './catalog.ts'
import { RestCatalog, type RestCatalogOptions } from './rest.ts'
import { SqlCatalog, type SqlCatalogOptions } from './sql.ts'

export type CatalogConfig = ({ type: 'rest' } & RestCatalogOptions) | ({ type: 'sql' } & SqlCatalogOptions)

/** Opens the configured catalog: a REST client reads /v1/config first; SQL opens (or creates) the file. */
export function openCatalog(config: CatalogConfig): Promise<Catalog> {
  return config.type === 'rest' ? RestCatalog.open(config) : SqlCatalog.open(config)
}
