// The catalog section as a catalog client needs it, and its secrets. A SQL catalog's database is
// resolved to a SQLite file or a PostgreSQL connection (from `uri` or from host, port, database
// and user). Secrets come from the environment (FLOE_CATALOG__PASSWORD, __CREDENTIAL, __TOKEN) or
// a file the configuration names (passwordFile, credentialFile); one written in the YAML itself,
// or a password inside the uri, is refused, as Kafka's are. Azure storage without a connection
// string is only accepted when the catalog vends the credentials. Internal to shared/config.
import { FloeError } from '../errors.ts'
import { readSecret } from './kafka-security.ts'
import type { RawCatalogConfig, RawConfig } from './schema.ts'

type RawRest = Extract<RawCatalogConfig, { type: 'rest' }>
type RawSql = Extract<RawCatalogConfig, { type: 'sql' }>

export interface PostgresSettings {
  host: string
  port: number
  database: string
  user: string
  password?: string
  connectTimeoutMs: number
  queryTimeoutMs: number
}

interface SqlCommon {
  type: 'sql'
  name: string
  warehouse: string
}

export type CatalogSettings =
  | RawRest
  | (SqlCommon & { path: string; postgres?: undefined })
  | (SqlCommon & { postgres: PostgresSettings; path?: undefined })

/** How logs and `floe validate` name the catalog: its uri, its SQLite file, or `postgresql://user@host:port/db`. */
export function catalogLabel(catalog: CatalogSettings): string {
  if (catalog.type === 'rest') return catalog.uri
  if (catalog.postgres === undefined) return catalog.path
  const { user, host, port, database } = catalog.postgres
  return `postgresql://${user}@${host}:${port}/${database}`
}

const writtenSecrets = [
  ['token', 'FLOE_CATALOG__TOKEN', undefined],
  ['credential', 'FLOE_CATALOG__CREDENTIAL', 'credentialFile'],
  ['password', 'FLOE_CATALOG__PASSWORD', 'passwordFile'],
] as const

/** Refuses a catalog secret in the file's own tree (before the environment's overrides are applied). */
export function refuseWrittenCatalogSecrets(tree: Record<string, unknown>, source: string): void {
  const catalog = tree['catalog'] as Record<string, unknown> | undefined
  for (const [key, variable, file] of writtenSecrets) {
    if (catalog && typeof catalog === 'object' && catalog[key] !== undefined) {
      throw new FloeError(
        'CONFIG_INVALID',
        `${source}: catalog.${key}: a secret is not written in the configuration file: set ${variable}${file ? ` or catalog.${file}` : ''}`,
      )
    }
  }
}

const postgresKeys = ['host', 'port', 'database', 'user', 'password', 'passwordFile'] as const

export function resolveCatalog(raw: RawCatalogConfig, source: string): CatalogSettings {
  if (raw.type === 'rest') {
    if (raw.credentialFile === undefined) return raw
    const { credentialFile, ...rest } = raw
    return { ...rest, credential: readSecret(source, 'catalog.credentialFile', credentialFile) }
  }
  const refuse = (key: string, problem: string) =>
    new FloeError('CONFIG_INVALID', `${source}: catalog.${key}: ${problem}`)
  const common: SqlCommon = { type: 'sql', name: raw.name, warehouse: raw.warehouse }
  if (raw.path !== undefined) {
    const stray = postgresKeys.find((key) => raw[key] !== undefined)
    if (stray) throw refuse(stray, 'a SQLite catalog (path) takes no PostgreSQL settings')
    return { ...common, path: raw.path }
  }
  const password =
    raw.passwordFile === undefined ? raw.password : readSecret(source, 'catalog.passwordFile', raw.passwordFile)
  return {
    ...common,
    postgres: {
      ...(raw.uri === undefined ? fromKeys(raw, refuse) : fromUri(raw, raw.uri, refuse)),
      ...(password === undefined ? {} : { password }),
      connectTimeoutMs: raw.connectTimeoutSeconds * 1000,
      queryTimeoutMs: raw.queryTimeoutSeconds * 1000,
    },
  }
}

type Refuse = (key: string, problem: string) => FloeError
type Address = Pick<PostgresSettings, 'host' | 'port' | 'database' | 'user'>

function fromKeys(raw: RawSql, refuse: Refuse): Address {
  if (raw.database === undefined) throw refuse('database', 'missing (the PostgreSQL database of the catalog)')
  if (raw.user === undefined) throw refuse('user', 'missing (the PostgreSQL user Floe connects as)')
  return { host: raw.host as string, port: raw.port ?? 5432, database: raw.database, user: raw.user }
}

function fromUri(raw: RawSql, uri: string, refuse: Refuse): Address {
  const mixed = (['port', 'database', 'user'] as const).find((key) => raw[key] !== undefined)
  if (mixed) throw refuse(mixed, 'give uri or host, port, database and user, not both')
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    throw refuse('uri', 'expected postgresql://user@host:port/database')
  }
  if (url.password !== '')
    throw refuse('uri', 'a password is not written in the uri: set FLOE_CATALOG__PASSWORD or catalog.passwordFile')
  if (url.search !== '' || url.hash !== '') throw refuse('uri', 'query parameters are not supported')
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''))
  if (url.hostname === '') throw refuse('uri', 'name the server (postgresql://user@HOST:port/database)')
  if (url.username === '') throw refuse('uri', 'name the user (postgresql://USER@host:port/database)')
  if (database === '' || database.includes('/'))
    throw refuse('uri', 'name the database (postgresql://user@host:port/DATABASE)')
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? 5432 : Number(url.port),
    database,
    user: decodeURIComponent(url.username),
  }
}

/** Azure storage with no connection string of its own needs the catalog to vend its SAS tokens. */
export function checkStorageCredentials(config: Pick<RawConfig, 'catalog' | 'storage' | 'datasets'>, source: string) {
  const vended = config.catalog.type === 'rest' && config.catalog.accessDelegation === 'vended-credentials'
  const sections: [string, string, RawConfig['storage'] | undefined][] = [
    ['storage', 'FLOE_STORAGE__AZURE__CONNECTION_STRING', config.storage],
    ...config.datasets.map((d, i): [string, string, RawConfig['storage'] | undefined] => [
      `datasets[${i}].storage`,
      `FLOE_DATASETS__${d.name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}__STORAGE__AZURE__CONNECTION_STRING`,
      d.storage,
    ]),
  ]
  for (const [path, variable, storage] of sections) {
    if (storage?.type === 'azure' && storage.azure.connectionString === undefined && !vended) {
      throw new FloeError(
        'CONFIG_INVALID',
        `${source}: ${path}.azure.connectionString: missing (set ${variable}, or catalog.accessDelegation: vended-credentials)`,
      )
    }
  }
}
