// The local stack's OAuth 2 front of the Iceberg REST catalog (`stack up --rest-auth`): the
// fixture server checks no tokens, so this small proxy does what a secured catalog does. Its
// token endpoint (`/v1/oauth/tokens`, the REST spec's) issues client-credentials tokens that
// expire after a few seconds; a request with no token or an unknown one is answered 401, an
// expired one 401 or 419 in turn (servers answer either; Floe must renew on both); everything else
// goes to the real catalog. Its `/v1/config` adds a prefix to the overrides, which clients put in
// every catalog path and the front takes out (catalog paths without it are listed). A loadTable
// or createTable asked for vended credentials gets a real SAS for Azurite's warehouse container
// in its `config` and `storage-credentials`, under Iceberg's ADLS keys. `GET /_stack/issued` lists
// every token and SAS issued, for the tests that grep logs for them. With the S3 server up, paths
// under `/s3/` go to the REST catalog whose warehouse is on S3 instead, and what they vend is an
// S3 key under S3FileIO's names; under `/s3-scoped/`, a key of the table's own that S3 allows
// under the table's location only (an IAM user per table), as a catalog scoping credentials to
// each table does. Run as `node rest-auth.ts <stack dir>` by `npm run stack -- up`;
// its settings come in REST_AUTH_SETTINGS (JSON), never on the command line.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import {
  ContainerSASPermissions,
  generateBlobSASQueryParameters,
  SASProtocol,
  StorageSharedKeyCredential,
} from '@azure/storage-blob'
import { type JsonObject, type JsonValue, parseJson, stringifyJson } from '../../shared/json/index.ts'
import {
  azuriteAccount,
  azuriteKey,
  endpointsFor,
  paths,
  type RestAuthEndpoints,
  restOnS3Port,
  type S3Endpoints,
  type StackOptions,
  s3Prefix,
  s3ScopedPrefix,
  stackSources,
} from './layout.ts'
import { type ServiceRecord, startService, waitReady } from './processes.ts'

export interface RestAuthSettings {
  port: number
  /** The real REST catalog, on 127.0.0.1. */
  backendPort: number
  clientId: string
  clientSecret: string
  tokenSeconds: number
  azurite: { account: string; accountKey: string; blobEndpoint: string; container: string }
  /** The REST catalog on S3 behind `/s3/`, and the S3 key its loads vend. */
  s3?: {
    backendPort: number
    bucket: string
    accessKeyId: string
    secretAccessKey: string
    /** What makes a table's own key: S3's endpoint, its administrator's key, and the stack's python. */
    endpoint: string
    admin: { accessKeyId: string; secretAccessKey: string }
    python: string
  }
}

interface Issued {
  expiresAt: number
  serial: number
}

/**
 * The prefix the front's `/v1/config` tells clients to put in every catalog path, as catalogs that
 * serve several warehouses do; the front takes it out again before the fixture sees the path.
 */
export const catalogPrefix = 'stack-catalog'

/** A SAS is made again once this old, so a long test sees the client renew it. */
export const sasRenewSeconds = 20
const sasLifetimeMs = 60 * 60_000

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  response.end(text)
}

function notAuthorized(response: ServerResponse, status: 401 | 419, message: string): void {
  sendJson(response, status, { error: { message, type: 'NotAuthorizedException', code: status } })
}

async function bodyOf(message: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of message) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** loadTable (GET .../tables/<name>) or createTable (POST .../tables): the answers that vend. */
function vends(method: string, path: string): boolean {
  if (method === 'GET') return /^\/v1\/(?:[^/]+\/)?namespaces\/[^/]+\/tables\/[^/]+$/.test(path)
  if (method === 'POST') return /^\/v1\/(?:[^/]+\/)?namespaces\/[^/]+\/tables$/.test(path)
  return false
}

/** A table load's answer with the credentials of its backend in `config` and `storage-credentials`. */
function vended(loaded: JsonObject, prefix: string, credentials: Record<string, string>): JsonObject {
  const given = loaded.config
  const config = {
    ...(typeof given === 'object' && given !== null && !Array.isArray(given) ? given : {}),
    ...credentials,
  }
  return { ...loaded, config, 'storage-credentials': [{ prefix, config: credentials } as JsonValue] }
}

export function restAuthServer(settings: RestAuthSettings) {
  const tokens = new Map<string, Issued>()
  // `unprefixed`: catalog paths a client sent without the prefix `/v1/config` gave it.
  // `scoped`: the location of each table whose own key was made (`/s3-scoped`).
  const issued = { tokens: [] as string[], sas: [] as string[], unprefixed: [] as string[], scoped: [] as string[] }
  /** A table's location -> its own key, made once. */
  const tableKeys = new Map<string, Promise<Record<string, string>>>()
  let serial = 0
  let sas: { value: string; madeAt: number } | undefined
  const { account, accountKey, blobEndpoint, container } = settings.azurite
  const host = `${account}.dfs.core.windows.net`

  const currentSas = (): string => {
    if (sas && Date.now() - sas.madeAt < sasRenewSeconds * 1000) return sas.value
    const now = Date.now()
    const value = generateBlobSASQueryParameters(
      {
        containerName: container,
        permissions: ContainerSASPermissions.parse('racwdl'),
        startsOn: new Date(now - 5 * 60_000),
        expiresOn: new Date(now + sasLifetimeMs),
        protocol: SASProtocol.HttpsAndHttp,
      },
      new StorageSharedKeyCredential(account, accountKey),
    ).toString()
    sas = { value, madeAt: now }
    issued.sas.push(value)
    return value
  }

  /** A key S3 allows under the table's location only: an IAM user of its own, made on its first load. */
  const tableKey = (location: string): Promise<Record<string, string>> => {
    const s3 = settings.s3
    const match = /^s3a?:\/\/([^/]+)\/(.+?)\/?$/.exec(location)
    if (s3 === undefined || match === null) return Promise.reject(new Error(`no S3 location: ${location}`))
    let key = tableKeys.get(location)
    if (key === undefined) {
      const script = join(stackSources, 's3_users.py')
      const user = `table-${tableKeys.size + 1}`
      const { accessKeyId, secretAccessKey } = s3.admin
      const args = [script, 'mint', s3.endpoint, accessKeyId, secretAccessKey, user, match[1]!, `${match[2]}/`]
      key = promisify(execFile)(s3.python, args).then(({ stdout }) => {
        const made = JSON.parse(stdout) as { accessKeyId: string; secretAccessKey: string }
        issued.scoped.push(location)
        return { 's3.access-key-id': made.accessKeyId, 's3.secret-access-key': made.secretAccessKey }
      })
      key.catch(() => tableKeys.delete(location))
      tableKeys.set(location, key)
    }
    return key
  }

  const vendedConfig = (): Record<string, string> => ({
    [`adls.sas-token.${host}`]: currentSas(),
    [`adls.connection-string.${host}`]: blobEndpoint,
  })

  const issueToken = async (message: IncomingMessage, response: ServerResponse): Promise<void> => {
    const form = new URLSearchParams((await bodyOf(message)).toString('utf8'))
    let clientId = form.get('client_id') ?? undefined
    let clientSecret = form.get('client_secret') ?? undefined
    const basic = /^Basic (.+)$/.exec(message.headers.authorization ?? '')?.[1]
    if (basic) {
      const [id, secret] = Buffer.from(basic, 'base64').toString('utf8').split(':')
      clientId = decodeURIComponent(id ?? '')
      clientSecret = decodeURIComponent(secret ?? '')
    }
    if (form.get('grant_type') !== 'client_credentials') {
      sendJson(response, 400, { error: 'unsupported_grant_type' })
      return
    }
    if (clientId !== settings.clientId || clientSecret !== settings.clientSecret) {
      sendJson(response, 401, { error: 'invalid_client', error_description: 'unknown client or wrong secret' })
      return
    }
    const token = randomBytes(24).toString('base64url')
    tokens.set(token, { expiresAt: Date.now() + settings.tokenSeconds * 1000, serial: ++serial })
    issued.tokens.push(token)
    sendJson(response, 200, {
      access_token: token,
      token_type: 'bearer',
      expires_in: settings.tokenSeconds,
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    })
  }

  /**
   * The backend a path goes to, the path it has there, and what a vending answer carries (made
   * only when an answer vends: a SAS is issued on demand and counted).
   */
  const route = (given: string) => {
    const s3 = settings.s3
    const under = (prefix: string) => s3 !== undefined && (given === prefix || given.startsWith(`${prefix}/`))
    const front = under(s3Prefix) ? s3Prefix : under(s3ScopedPrefix) ? s3ScopedPrefix : ''
    const rest = given.slice(front.length) || '/'
    const prefixed = rest.startsWith(`/v1/${catalogPrefix}/`)
    const url = prefixed ? `/v1/${rest.slice(`/v1/${catalogPrefix}/`.length)}` : rest
    if (s3 !== undefined && front === s3Prefix) {
      const credentials = { 's3.access-key-id': s3.accessKeyId, 's3.secret-access-key': s3.secretAccessKey }
      return {
        port: s3.backendPort,
        url,
        prefixed,
        vend: async (loaded: JsonObject) => vended(loaded, `s3://${s3.bucket}/`, credentials),
      }
    }
    if (s3 !== undefined && front === s3ScopedPrefix) {
      const vend = async (loaded: JsonObject) => {
        const metadata = loaded.metadata as JsonObject | undefined
        const location = String(metadata?.location ?? '').replace(/\/+$/, '')
        return vended(loaded, `${location}/`, await tableKey(location))
      }
      return { port: s3.backendPort, url, prefixed, vend }
    }
    return {
      port: settings.backendPort,
      url,
      prefixed,
      vend: async (loaded: JsonObject) => vended(loaded, `abfs://${container}@${host}/`, vendedConfig()),
    }
  }

  /** `/v1/config` as the fixture answers it, with the prefix among its overrides. */
  const withPrefix = (answer: JsonObject): JsonObject => {
    const given = answer.overrides
    const overrides = typeof given === 'object' && given !== null && !Array.isArray(given) ? given : {}
    return { ...answer, overrides: { ...overrides, prefix: catalogPrefix } }
  }

  const proxy = async (
    message: IncomingMessage,
    response: ServerResponse,
    to: ReturnType<typeof route>,
    path: string,
  ): Promise<void> => {
    const body = await bodyOf(message)
    const delegated = /vended-credentials/.test(String(message.headers['x-iceberg-access-delegation'] ?? ''))
    const configRequest = message.method === 'GET' && path === '/v1/config'
    const rewrite = configRequest || (delegated && vends(message.method ?? '', path))
    // An answer the front rewrites must come uncompressed: the fixture gzips for a client that asks.
    const { 'accept-encoding': _encoding, ...asked } = message.headers
    const headers = { ...(rewrite ? asked : message.headers), host: `127.0.0.1:${to.port}` }
    const upstream = request({
      host: '127.0.0.1',
      port: to.port,
      method: message.method,
      path: to.url,
      headers,
    })
    upstream.on('error', () => sendJson(response, 502, { error: { message: 'catalog unreachable', code: 502 } }))
    upstream.on('response', async (answer) => {
      if (!rewrite || answer.statusCode !== 200) {
        response.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(response)
        return
      }
      // Lossless both ways: the metadata's 63-bit snapshot ids must come through unrounded.
      let text: string
      try {
        const loaded = parseJson((await bodyOf(answer)).toString('utf8')) as JsonObject
        text = stringifyJson(configRequest ? withPrefix(loaded) : await to.vend(loaded))
      } catch {
        sendJson(response, 502, { error: { message: 'the catalog answered with no JSON', code: 502 } })
        return
      }
      const { 'content-length': _length, 'transfer-encoding': _encoding, ...rest } = answer.headers
      response.writeHead(200, { ...rest, 'content-length': Buffer.byteLength(text) })
      response.end(text)
    })
    upstream.end(body)
  }

  return createServer((message, response) => {
    const routed = route(message.url ?? '/')
    const path = new URL(routed.url, 'http://127.0.0.1').pathname
    const handle = async () => {
      if (message.method === 'POST' && path === '/v1/oauth/tokens') return issueToken(message, response)
      if (message.method === 'GET' && path === '/_stack/issued') return sendJson(response, 200, issued)
      if (!routed.prefixed && path.startsWith('/v1/') && path !== '/v1/config') issued.unprefixed.push(path)
      const token = /^Bearer (.+)$/.exec(message.headers.authorization ?? '')?.[1]
      const known = token === undefined ? undefined : tokens.get(token)
      if (known === undefined) return notAuthorized(response, 401, token ? 'unknown token' : 'no token')
      if (Date.now() >= known.expiresAt)
        return notAuthorized(response, known.serial % 2 ? 419 : 401, 'the token has expired')
      return proxy(message, response, routed, path)
    }
    handle().catch(() => {
      if (!response.headersSent) sendJson(response, 500, { error: { message: 'auth front failed', code: 500 } })
      else response.destroy()
    })
  })
}

/** A new client of the front: its id and a random secret. */
export function newRestClient(): { clientId: string; clientSecret: string } {
  return { clientId: 'floe', clientSecret: randomBytes(18).toString('base64url') }
}

export async function startRestAuth(
  options: StackOptions,
  dir: string,
  client: { clientId: string; clientSecret: string },
  s3?: Pick<S3Endpoints, 'endpoint' | 'bucket' | 'accessKeyId' | 'secretAccessKey' | 'admin'>,
): Promise<ServiceRecord> {
  const { blobEndpoint, container } = endpointsFor(options, dir).azurite
  const settings: RestAuthSettings = {
    port: options.ports.restAuth,
    backendPort: options.ports.rest,
    ...client,
    tokenSeconds: options.restAuthTokenSeconds,
    azurite: { account: azuriteAccount, accountKey: azuriteKey, blobEndpoint, container },
    ...(s3
      ? {
          s3: {
            backendPort: restOnS3Port(options),
            bucket: s3.bucket,
            accessKeyId: s3.accessKeyId,
            secretAccessKey: s3.secretAccessKey,
            endpoint: s3.endpoint,
            admin: s3.admin,
            python: paths(dir).python,
          },
        }
      : {}),
  }
  const record = startService(dir, {
    name: 'rest-auth',
    command: process.execPath,
    // The stack folder on the command line, so `down` recognises the pid as ours.
    args: [fileURLToPath(import.meta.url), dir],
    env: { ...process.env, REST_AUTH_SETTINGS: JSON.stringify(settings) },
  })
  await waitReady(dir, record, () => restAuthAnswers(settings), 30_000)
  return record
}

/** Ready: a token is issued, and /v1/config answers through the front with it. */
async function restAuthAnswers(settings: RestAuthSettings): Promise<boolean> {
  const base = `http://127.0.0.1:${settings.port}`
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: settings.clientId,
    client_secret: settings.clientSecret,
    scope: 'catalog',
  })
  const answer = await fetch(`${base}/v1/oauth/tokens`, {
    method: 'POST',
    body: form,
    signal: AbortSignal.timeout(2000),
  })
  const { access_token: token } = (await answer.json()) as { access_token?: string }
  if (!answer.ok || !token) return false
  const config = await fetch(`${base}/v1/config`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(2000),
  })
  await config.arrayBuffer()
  return config.ok
}

export type { RestAuthEndpoints }

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const settings = JSON.parse(process.env.REST_AUTH_SETTINGS ?? '{}') as RestAuthSettings
  const server = restAuthServer(settings)
  server.listen(settings.port, '127.0.0.1', () => console.log(`rest auth front on 127.0.0.1:${settings.port}`))
  process.on('SIGTERM', () => {
    server.close()
    server.closeAllConnections()
    process.exit(0)
  })
}
