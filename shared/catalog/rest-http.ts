// HTTP for the REST catalog: one keep-alive undici Pool per catalog origin, lossless JSON both
// ways, a timeout on every request, and the translation of what went wrong into FloeError codes.
//
// The one distinction that matters for exactly-once: did the request reach the server? A commit
// that failed before it was sent (connection refused, DNS) is CATALOG_UNAVAILABLE and may be
// sent again as it is; one that failed after (timeout, reset, a 5xx) is COMMIT_STATE_UNKNOWN and
// the caller must look at the table before trying again.
import { Pool } from 'undici'
import { type ErrorCode, FloeError } from '../errors.ts'
import { type JsonValue, parseJson, stringifyJson } from '../json/index.ts'
import type { RestTokenSource } from './rest-oauth.ts'

export type RestOperation = 'commit' | 'create' | 'read' | 'drop'

type Method = 'GET' | 'HEAD' | 'POST' | 'DELETE'

export interface RestResponse {
  status: number
  body: JsonValue | undefined
}

export interface RestHttpOptions {
  uri: string
  /** A static bearer token. */
  token?: string
  /** OAuth 2 tokens, renewed before they expire and once more when the catalog refuses one. */
  tokens?: RestTokenSource
  headers?: Record<string, string>
  requestTimeoutMs: number
  connections: number
}

/** Error codes of a connection that never carried the request. */
const notSent = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
])

function transportCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; name?: unknown; cause?: { code?: unknown }; errors?: { code?: unknown }[] }
  for (const code of [e?.code, e?.cause?.code, e?.errors?.[0]?.code]) if (typeof code === 'string') return code
  return typeof e?.name === 'string' ? e.name : undefined
}

function transportFailure(error: unknown, operation: RestOperation, what: string): FloeError {
  const code = transportCode(error)
  const details = { transport: code }
  if (code !== undefined && notSent.has(code)) {
    return new FloeError('CATALOG_UNAVAILABLE', `${what}: catalog unreachable (${code})`, { cause: error, details })
  }
  if (operation === 'commit') {
    return new FloeError('COMMIT_STATE_UNKNOWN', `${what}: connection failed after sending (${code ?? 'error'})`, {
      cause: error,
      details,
    })
  }
  return new FloeError('CATALOG_UNAVAILABLE', `${what}: ${code ?? 'request failed'}`, { cause: error, details })
}

/** The REST error model: `{"error": {"message", "type", "code"}}`. */
function errorModel(body: JsonValue | undefined): { message?: string; type?: string } {
  const error = typeof body === 'object' && body !== null && !Array.isArray(body) ? body.error : undefined
  if (typeof error !== 'object' || error === null || Array.isArray(error)) return {}
  return {
    ...(typeof error.message === 'string' ? { message: error.message } : {}),
    ...(typeof error.type === 'string' ? { type: error.type } : {}),
  }
}

function statusCode(status: number, operation: RestOperation): ErrorCode {
  // Refused even with a fresh token (or a static one): the same credential cannot do better.
  if (status === 401) return 'CATALOG_AUTHENTICATION_FAILED'
  if (status === 404) return 'CATALOG_NOT_FOUND'
  if (status === 409) return operation === 'commit' ? 'COMMIT_CONFLICT' : 'CATALOG_ALREADY_EXISTS'
  // Every 5xx answer to a commit leaves its fate open (the spec names 500, 502, 504; a 503 from a
  // proxy in front may have come after the backend applied it).
  if (status >= 500) return operation === 'commit' ? 'COMMIT_STATE_UNKNOWN' : 'CATALOG_UNAVAILABLE'
  // 419: the token expired; another try (with a fresh token) can succeed.
  if (status === 419 || status === 429) return 'CATALOG_UNAVAILABLE'
  return 'CATALOG_BAD_REQUEST'
}

export function statusFailure(response: RestResponse, operation: RestOperation, what: string): FloeError {
  const model = errorModel(response.body)
  const code = statusCode(response.status, operation)
  return new FloeError(code, `${what}: ${response.status} ${model.type ?? ''} ${model.message ?? ''}`.trim(), {
    details: { status: response.status, type: model.type },
  })
}

export class RestHttp {
  readonly #pool: Pool
  readonly #basePath: string
  readonly #headers: Record<string, string>
  readonly #timeoutMs: number
  readonly #tokens: RestTokenSource | undefined

  constructor(options: RestHttpOptions) {
    const url = new URL(options.uri)
    this.#basePath = url.pathname.replace(/\/+$/, '')
    this.#timeoutMs = options.requestTimeoutMs
    this.#tokens = options.tokens
    this.#pool = new Pool(url.origin, {
      connections: options.connections,
      headersTimeout: options.requestTimeoutMs,
      bodyTimeout: options.requestTimeoutMs,
    })
    this.#headers = {
      accept: 'application/json',
      'user-agent': 'floe',
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    }
  }

  /**
   * Sends one request and returns any HTTP answer (2xx or not); throws only for transport
   * failures, already classified for `operation`, and for a token that could not be had. With
   * OAuth, a 401 or 419 (the token expired on the way) is sent once more with a new token: the
   * catalog refused it before looking at it, so even a commit is safe to send again.
   */
  async send(
    method: Method,
    path: string,
    operation: RestOperation,
    options: { body?: unknown; query?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<RestResponse> {
    const query = options.query && Object.keys(options.query).length ? `?${new URLSearchParams(options.query)}` : ''
    const headers: Record<string, string> = { ...this.#headers, ...options.headers }
    let body: string | undefined
    if (options.body !== undefined) {
      body = stringifyJson(options.body)
      headers['content-type'] = 'application/json'
    }
    const request = { method, path: `${this.#basePath}${path}${query}`, what: `${method} ${path}`, operation, body }
    if (this.#tokens === undefined) return this.#sendOnce(request, headers)
    const token = await this.#tokens.token()
    const first = await this.#sendOnce(request, { ...headers, authorization: `Bearer ${token}` })
    if (first.status !== 401 && first.status !== 419) return first
    const fresh = await this.#tokens.refresh(token)
    return this.#sendOnce(request, { ...headers, authorization: `Bearer ${fresh}` })
  }

  async #sendOnce(
    request: { method: Method; path: string; what: string; operation: RestOperation; body: string | undefined },
    headers: Record<string, string>,
  ): Promise<RestResponse> {
    const { method, what, operation, body } = request
    let status: number
    let text: string
    try {
      const response = await this.#pool.request({
        method,
        path: request.path,
        headers,
        body,
        signal: AbortSignal.timeout(this.#timeoutMs),
      })
      status = response.statusCode
      text = await response.body.text()
    } catch (error) {
      throw transportFailure(error, operation, what)
    }
    let parsed: JsonValue | undefined
    if (text.length > 0) {
      try {
        parsed = parseJson(text)
      } catch (error) {
        // An error page (a proxy's HTML) carries no error model; a 2xx must be JSON.
        if (status >= 200 && status < 300) {
          throw new FloeError(
            operation === 'commit' ? 'COMMIT_STATE_UNKNOWN' : 'CATALOG_BAD_REQUEST',
            `${what}: ${status} answer is not JSON`,
            { cause: error, details: { status } },
          )
        }
      }
    }
    return { status, body: parsed }
  }

  close(): Promise<void> {
    return this.#pool.close()
  }
}
