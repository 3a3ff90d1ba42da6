// SASL/OAUTHBEARER's token: fetched from an OAuth 2 token endpoint by the client-credentials grant
// (RFC 6749 §4.4, the client authenticated with HTTP Basic as §2.3.1 asks), kept until shortly
// before it expires, then fetched again on the next connection that needs one. Concurrent
// connections share one request. Internal to shared/kafka.
import { FloeError } from '../errors.ts'

export interface OAuthClientCredentials {
  tokenEndpointUrl: string
  clientId: string
  clientSecret: string
  scope?: string
}

/** A token without `expires_in` is used this long before a new one is asked for. */
const defaultLifetimeMs = 5 * 60_000

export class OAuthTokenSource {
  readonly #credentials: OAuthClientCredentials
  readonly #now: () => number
  readonly #timeoutMs: number
  #token: { value: string; renewAt: number } | undefined
  #pending: Promise<string> | undefined

  constructor(credentials: OAuthClientCredentials, options: { now?: () => number; timeoutMs?: number } = {}) {
    this.#credentials = credentials
    this.#now = options.now ?? Date.now
    this.#timeoutMs = options.timeoutMs ?? 10_000
  }

  /** A token valid for a while yet: the kept one, or a new one from the endpoint. */
  token(): Promise<string> {
    if (this.#token && this.#now() < this.#token.renewAt) return Promise.resolve(this.#token.value)
    this.#pending ??= this.#fetch().finally(() => {
      this.#pending = undefined
    })
    return this.#pending
  }

  async #fetch(): Promise<string> {
    const { tokenEndpointUrl, clientId, clientSecret, scope } = this.#credentials
    const body = new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) })
    const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')
    const asked = this.#now()
    let response: Response
    try {
      response = await fetch(tokenEndpointUrl, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
        body,
        signal: AbortSignal.timeout(this.#timeoutMs),
      })
    } catch (error) {
      // The cause is the socket's (refused, timed out): it names no secret.
      throw new FloeError('KAFKA_UNAVAILABLE', `token endpoint ${tokenEndpointUrl}: no answer`, {
        cause: error,
        details: { tokenEndpoint: tokenEndpointUrl },
      })
    }
    if (!response.ok) {
      await response.body?.cancel()
      // 400 (invalid_client, invalid_scope) and 401 are refusals that asking again cannot change.
      const code = response.status >= 500 ? 'KAFKA_UNAVAILABLE' : 'KAFKA_AUTHENTICATION_FAILED'
      throw new FloeError(code, `token endpoint ${tokenEndpointUrl} answered ${response.status}`, {
        details: { tokenEndpoint: tokenEndpointUrl },
      })
    }
    const answer = (await response.json().catch(() => ({}))) as { access_token?: unknown; expires_in?: unknown }
    if (typeof answer.access_token !== 'string' || answer.access_token === '') {
      throw new FloeError(
        'KAFKA_AUTHENTICATION_FAILED',
        `token endpoint ${tokenEndpointUrl} answered without a token`,
        {
          details: { tokenEndpoint: tokenEndpointUrl },
        },
      )
    }
    const lifetimeMs = typeof answer.expires_in === 'number' ? answer.expires_in * 1000 : defaultLifetimeMs
    // Renewed at 80 % of its life, as Kafka's own login refresh does: a connection made just before
    // the expiry still presents a token the broker accepts.
    this.#token = { value: answer.access_token, renewAt: asked + lifetimeMs * 0.8 }
    return answer.access_token
  }
}
