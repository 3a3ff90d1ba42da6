// A client of the Iceberg REST catalog protocol (open-api/rest-catalog-open-api.yaml), written
// here rather than taken from iceberg-js: that library parses with plain JSON.parse and types
// snapshot ids as numbers, so 63-bit ids come back rounded and assert-ref-snapshot-id then
// fails against every table another engine wrote.
import { FloeError } from '../errors.ts'
import type { Schema } from '../iceberg/index.ts'
import {
  type TableMetadata,
  type TableRequirement,
  type TableUpdate,
  tableMetadataFromJson,
  type UnboundPartitionSpec,
} from '../iceberg/metadata/index.ts'
import type { JsonObject, JsonValue } from '../json/index.ts'
import type {
  Catalog,
  CommittedTable,
  CreateTableOptions,
  LoadedTable,
  Namespace,
  StorageCredential,
  TableIdentifier,
} from './catalog.ts'
import { formatTableIdentifier } from './catalog.ts'
import { RestHttp, type RestOperation, type RestResponse, statusFailure } from './rest-http.ts'
import { RestTokenSource } from './rest-oauth.ts'

export interface RestCatalogOptions {
  uri: string
  warehouse?: string
  /** Bearer token sent on every request. */
  token?: string
  /**
   * `client_id:client_secret` for the OAuth 2 client-credentials grant: a token is fetched at open
   * and renewed before it expires (replaces `token`).
   */
  credential?: string
  /** The scope asked for. Default `catalog`, as Iceberg's clients ask. */
  scope?: string
  /** The token endpoint. Default `<uri>/v1/oauth/tokens`. */
  oauth2ServerUri?: string
  headers?: Record<string, string>
  /** Client catalog properties: applied over the server's defaults, under its overrides. */
  properties?: Record<string, string>
  /** Each request's limit, connect to last byte. Default 30 s. */
  requestTimeoutMs?: number
  /** Keep-alive connections to the catalog. Default 4. */
  connections?: number
  /** `X-Iceberg-Access-Delegation` for create and load, e.g. `vended-credentials`. */
  accessDelegation?: string
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function stringMap(value: JsonValue | undefined): Record<string, string> {
  const result: Record<string, string> = {}
  if (isObject(value))
    for (const [key, entry] of Object.entries(value)) if (typeof entry === 'string') result[key] = entry
  return result
}

function loadedTable(body: JsonValue | undefined, what: string): LoadedTable {
  if (!isObject(body) || typeof body['metadata-location'] !== 'string') {
    throw new FloeError('CATALOG_BAD_REQUEST', `${what}: the answer has no metadata-location`)
  }
  const credentials = Array.isArray(body['storage-credentials']) ? body['storage-credentials'] : []
  return {
    metadata: tableMetadataFromJson(body.metadata ?? null),
    metadataLocation: body['metadata-location'],
    config: stringMap(body.config),
    storageCredentials: credentials.filter(isObject).map(
      (c): StorageCredential => ({
        prefix: typeof c.prefix === 'string' ? c.prefix : '',
        config: stringMap(c.config),
      }),
    ),
  }
}

/** One page of a namespace's tables: the identifiers, and the token of the next page if there is one. */
function listedTables(body: JsonValue | undefined, what: string): { identifiers: TableIdentifier[]; next?: string } {
  const identifiers = isObject(body) ? body.identifiers : undefined
  if (!Array.isArray(identifiers)) throw new FloeError('CATALOG_BAD_REQUEST', `${what}: the answer has no identifiers`)
  const tables = identifiers.map((identifier): TableIdentifier => {
    const namespace = isObject(identifier) ? identifier.namespace : undefined
    const name = isObject(identifier) ? identifier.name : undefined
    if (
      !Array.isArray(namespace) ||
      !namespace.every((level) => typeof level === 'string') ||
      typeof name !== 'string'
    ) {
      throw new FloeError('CATALOG_BAD_REQUEST', `${what}: an identifier is not a namespace and a name`)
    }
    return { namespace: namespace as string[], name }
  })
  const next = isObject(body) ? body['next-page-token'] : undefined
  return typeof next === 'string' && next !== '' ? { identifiers: tables, next } : { identifiers: tables }
}

/** The endpoints a server that lists none is assumed to support (the spec's default set). */
const headEndpoints = {
  namespace: 'HEAD /v1/{prefix}/namespaces/{namespace}',
  table: 'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}',
}

export class RestCatalog implements Catalog {
  readonly description: string
  readonly #http: RestHttp
  readonly #prefix: string
  readonly #separator: string
  readonly #endpoints: Set<string> | undefined
  readonly #accessDelegation: Record<string, string>
  /** The merged catalog configuration (server defaults, client properties, server overrides). */
  readonly properties: Readonly<Record<string, string>>

  private constructor(
    http: RestHttp,
    uri: string,
    properties: Record<string, string>,
    endpoints: Set<string> | undefined,
    options: RestCatalogOptions,
    tokenEndpoint: string | undefined,
  ) {
    this.#http = http
    this.properties = properties
    this.#prefix = properties.prefix ? `/${properties.prefix.replace(/^\/+|\/+$/g, '')}` : ''
    this.#separator = decodeURIComponent(properties['namespace-separator'] ?? '%1F')
    this.#endpoints = endpoints
    this.#accessDelegation = options.accessDelegation ? { 'x-iceberg-access-delegation': options.accessDelegation } : {}
    this.description = `rest ${uri}${tokenEndpoint ? `, OAuth 2 token from ${tokenEndpoint}` : ''}${
      options.accessDelegation ? `, ${options.accessDelegation}` : ''
    }`
  }

  /** Reads GET /v1/config first, as the spec asks, and configures itself from the answer. */
  static async open(options: RestCatalogOptions): Promise<RestCatalog> {
    const requestTimeoutMs = options.requestTimeoutMs ?? 30_000
    const tokens = options.credential
      ? new RestTokenSource({
          serverUri: options.oauth2ServerUri ?? `${options.uri.replace(/\/+$/, '')}/v1/oauth/tokens`,
          credential: options.credential,
          scope: options.scope ?? 'catalog',
          timeoutMs: requestTimeoutMs,
        })
      : undefined
    // The first token before the first request: a refused credential is named as such, at start.
    await tokens?.token()
    const httpOptions = {
      ...(tokens ? { tokens } : { token: options.token }),
      headers: options.headers,
      requestTimeoutMs,
      connections: options.connections ?? 4,
    }
    let http = new RestHttp({ uri: options.uri, ...httpOptions })
    try {
      const query: Record<string, string> = options.warehouse ? { warehouse: options.warehouse } : {}
      const response = await http.send('GET', '/v1/config', 'read', { query })
      if (response.status !== 200) throw statusFailure(response, 'read', 'GET /v1/config')
      const body = isObject(response.body) ? response.body : {}
      const client = { ...options.properties, ...(options.warehouse ? { warehouse: options.warehouse } : {}) }
      const overrides = stringMap(body.overrides)
      const properties: Record<string, string> = { ...stringMap(body.defaults), ...client, ...overrides }
      const endpoints = Array.isArray(body.endpoints)
        ? new Set(body.endpoints.filter((e): e is string => typeof e === 'string'))
        : undefined
      let uri = options.uri
      if (overrides.uri && overrides.uri !== options.uri) {
        // The server moved us elsewhere (an override of `uri`): talk to that from now on.
        await http.close()
        uri = overrides.uri
        http = new RestHttp({ uri, ...httpOptions, ...(tokens ? {} : { token: options.token ?? properties.token }) })
      }
      return new RestCatalog(http, uri, properties, endpoints, options, tokens?.serverUri)
    } catch (error) {
      await http.close()
      throw error
    }
  }

  #namespacePath(namespace: Namespace): string {
    if (namespace.length === 0) throw new TypeError('a namespace needs at least one level')
    return `${this.#prefix}/namespaces/${namespace.map(encodeURIComponent).join(encodeURIComponent(this.#separator))}`
  }

  #tablePath(identifier: TableIdentifier): string {
    return `/v1${this.#namespacePath(identifier.namespace)}/tables/${encodeURIComponent(identifier.name)}`
  }

  #supports(endpoint: string): boolean {
    return this.#endpoints?.has(endpoint) ?? false
  }

  async #exists(path: string, headEndpoint: string, what: string): Promise<boolean> {
    const method = this.#supports(headEndpoint) ? 'HEAD' : 'GET'
    const response = await this.#http.send(method, path, 'read')
    if (response.status === 404) return false
    if (response.status >= 200 && response.status < 300) return true
    throw statusFailure(response, 'read', what)
  }

  #expect(response: RestResponse, ok: number[], operation: RestOperation, what: string): RestResponse {
    if (ok.includes(response.status)) return response
    throw statusFailure(response, operation, what)
  }

  async createNamespace(namespace: Namespace, properties: Record<string, string> = {}): Promise<void> {
    const what = `create namespace ${namespace.join('.')}`
    const path = `/v1${this.#prefix}/namespaces`
    const response = await this.#http.send('POST', path, 'create', { body: { namespace, properties } })
    if (response.status === 409) return
    this.#expect(response, [200], 'create', what)
  }

  namespaceExists(namespace: Namespace): Promise<boolean> {
    return this.#exists(
      `/v1${this.#namespacePath(namespace)}`,
      headEndpoints.namespace,
      `namespace ${namespace.join('.')}`,
    )
  }

  async createTable(
    identifier: TableIdentifier,
    schema: Schema,
    spec: UnboundPartitionSpec,
    options: CreateTableOptions = {},
  ): Promise<LoadedTable> {
    const what = `create table ${formatTableIdentifier(identifier)}`
    const body = {
      name: identifier.name,
      location: options.location,
      schema,
      // The Java server refuses a spec without spec-id, though the spec marks it read-only.
      'partition-spec': { 'spec-id': 0, ...spec },
      'write-order': options.sortOrder ?? { 'order-id': 0, fields: [] },
      'stage-create': false,
      properties: { 'format-version': '2', ...options.properties },
    }
    const path = `/v1${this.#namespacePath(identifier.namespace)}/tables`
    const response = await this.#http.send('POST', path, 'create', { body, headers: this.#accessDelegation })
    if (response.status === 409 && options.ifExists === 'load') return this.loadTable(identifier)
    return loadedTable(this.#expect(response, [200], 'create', what).body, what)
  }

  async loadTable(identifier: TableIdentifier): Promise<LoadedTable> {
    const what = `load table ${formatTableIdentifier(identifier)}`
    const response = await this.#http.send('GET', this.#tablePath(identifier), 'read', {
      headers: this.#accessDelegation,
    })
    return loadedTable(this.#expect(response, [200], 'read', what).body, what)
  }

  tableExists(identifier: TableIdentifier): Promise<boolean> {
    return this.#exists(this.#tablePath(identifier), headEndpoints.table, `table ${formatTableIdentifier(identifier)}`)
  }

  async listTables(namespace: Namespace): Promise<TableIdentifier[]> {
    const what = `list tables of ${namespace.join('.')}`
    const path = `/v1${this.#namespacePath(namespace)}/tables`
    const tables: TableIdentifier[] = []
    // an empty page token asks a server that pages for its first page; one that does not page ignores it
    for (let token: string | undefined = ''; token !== undefined; ) {
      const response = await this.#http.send('GET', `${path}?pageToken=${encodeURIComponent(token)}`, 'read')
      if (response.status === 404) return []
      const page = listedTables(this.#expect(response, [200], 'read', what).body, what)
      tables.push(...page.identifiers)
      token = page.next !== undefined && page.next !== token ? page.next : undefined
    }
    return tables.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  async commitTable(
    identifier: TableIdentifier,
    requirements: readonly TableRequirement[],
    updates: readonly TableUpdate[],
  ): Promise<CommittedTable> {
    const what = `commit to ${formatTableIdentifier(identifier)}`
    const body = { identifier: { namespace: identifier.namespace, name: identifier.name }, requirements, updates }
    const response = await this.#http.send('POST', this.#tablePath(identifier), 'commit', { body })
    const answer = this.#expect(response, [200], 'commit', what).body
    let metadata: TableMetadata
    try {
      if (!isObject(answer) || typeof answer['metadata-location'] !== 'string')
        throw new TypeError('no metadata-location')
      metadata = tableMetadataFromJson(answer.metadata ?? null)
      return { metadata, metadataLocation: answer['metadata-location'] }
    } catch (error) {
      // The server said 200: the commit happened, but its answer cannot be used. Make the
      // caller reload rather than assume either way.
      throw new FloeError('COMMIT_STATE_UNKNOWN', `${what}: committed, but the answer is unreadable`, { cause: error })
    }
  }

  async dropTable(identifier: TableIdentifier, options: { purge?: boolean } = {}): Promise<boolean> {
    const what = `drop table ${formatTableIdentifier(identifier)}`
    const query = { purgeRequested: String(options.purge ?? false) }
    const response = await this.#http.send('DELETE', this.#tablePath(identifier), 'drop', { query })
    if (response.status === 404) return false
    this.#expect(response, [200, 204], 'drop', what)
    return true
  }

  close(): Promise<void> {
    return this.#http.close()
  }
}
