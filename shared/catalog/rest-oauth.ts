// The REST catalog's OAuth 2 token by the client-credentials grant, the way Iceberg's Java client
// and pyiceberg ask for it: a form POST to the catalog's token endpoint (default
// `<uri>/v1/oauth/tokens`, as the REST spec has it) with grant_type, client_id, client_secret and
// scope in the body. The token is kept until 80 % of its `expires_in`, then fetched again on the
// next request that needs one; requests that need one at the same moment share one fetch. Not the
// Kafka client's token source (shared/kafka): that one sends the client in HTTP Basic, as Kafka's
// OAUTHBEARER login does, and fails with Kafka's error codes.
//
// No message or detail made here names the secret or a token: only the endpoint and the OAuth
// `error` code (invalid_client, invalid_scope).
import { request } from 'undici'
import { FloeError } from '../errors.ts'

export interface RestOAuthOptions {
  /** The token endpoint. */
  serverUri: string
  /** `client_id:client_secret` (no colon: a secret without a client id, as pyiceberg reads it). */
  credential: string
  scope: string
  now?: () => number
  timeoutMs?: number
}

/** A token without `expires_in` is used this long before a new one is asked for. */
const defaultLifetimeMs = 60 * 60_000

export class RestTokenSource {
  readonly serverUri: string
  readonly #clientId: string | undefined
  readonly #clientSecret: string
  readonly #scope: string
  readonly #now: () => number
  readonly #timeoutMs: number
  #token: { value: string; renewAt: number } | undefined
  #pending: Promise<string> | undefined

  constructor(options: RestOAuthOptions) {
    this.serverUri = options.serverUri
    const colon = options.credential.indexOf(':')
    this.#clientId = colon < 0 ? undefined : options.credential.slice(0, colon)
    this.#clientSecret = colon < 0 ? options.credential : options.credential.slice(colon + 1)
    this.#scope = options.scope
    this.#now = options.now ?? Date.now
    this.#timeoutMs = options.timeoutMs ?? 10_000
  }

  /** A token valid for a while yet: the kept one, or a new one from the endpoint. */
  token(): Promise<string> {
    if (this.#token && this.#now() < this.#token.renewAt) return Promise.resolve(this.#token.value)
    return this.#fetchShared()
  }

  /**
   * A token other than `refused` (the one the catalog just answered 401 or 419 to): a new one from
   * the endpoint, unless a concurrent request already fetched one since.
   */
  refresh(refused: string): Promise<string> {
    if (this.#token && this.#token.value !== refused && this.#now() < this.#token.renewAt)
      return Promise.resolve(this.#token.value)
    this.#token = undefined
    return this.#fetchShared()
  }

  #fetchShared(): Promise<string> {
    this.#pending ??= this.#fetch().finally(() => {
      this.#pending = undefined
    })
    return this.#pending
  }

  async #fetch(): Promise<string> {
    const where = `token endpoint ${this.serverUri}`
    // Not `tokenEndpoint`: that detail marks a Kafka OAUTHBEARER failure (shared/kafka).
    const details = { oauth2ServerUri: this.serverUri }
    const form = new URLSearchParams({ grant_type: 'client_credentials' })
    if (this.#clientId !== undefined) form.set('client_id', this.#clientId)
    form.set('client_secret', this.#clientSecret)
    form.set('scope', this.#scope)
    const asked = this.#now()
    let status: number
    let text: string
    try {
      const response = await request(this.serverUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(this.#timeoutMs),
      })
      status = response.statusCode
      text = await response.body.text()
    } catch (error) {
      // The cause is the socket's (refused, timed out): it names no secret.
      const code = (error as { code?: unknown }).code
      throw new FloeError('CATALOG_UNAVAILABLE', `${where}: no answer (${typeof code === 'string' ? code : 'error'})`, {
        cause: error,
        details,
      })
    }
    let answer: { access_token?: unknown; expires_in?: unknown; error?: unknown } = {}
    try {
      answer = JSON.parse(text) as typeof answer
    } catch {
      // An error page: the status says enough.
    }
    if (status < 200 || status >= 300) {
      const oauthError = typeof answer.error === 'string' && /^[\w.-]{1,64}$/.test(answer.error) ? answer.error : ''
      // 400 (invalid_client, invalid_scope), 401 and 403 are refusals that asking again cannot change.
      const code = status >= 500 || status === 429 ? 'CATALOG_UNAVAILABLE' : 'CATALOG_AUTHENTICATION_FAILED'
      const reason = code === 'CATALOG_UNAVAILABLE' ? 'answered' : 'refused the credential:'
      throw new FloeError(code, `${where} ${reason} ${status}${oauthError ? ` ${oauthError}` : ''}`, {
        details: { ...details, status, oauthError },
      })
    }
    if (typeof answer.access_token !== 'string' || answer.access_token === '') {
      throw new FloeError('CATALOG_AUTHENTICATION_FAILED', `${where} answered without a token`, { details })
    }
    const lifetimeMs =
      typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in * 1000 : defaultLifetimeMs
    // Renewed at 80 % of its life: a request sent just before the renewal still arrives with a
    // token the catalog accepts, and one that does not is retried once with a new token.
    this.#token = { value: answer.access_token, renewAt: asked + lifetimeMs * 0.8 }
    return answer.access_token
  }
}
