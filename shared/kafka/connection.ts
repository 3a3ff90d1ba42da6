// How Floe reaches Kafka, independent of the client library: brokers, client id, TLS and SASL.
// Internal to shared/kafka; the public surface is ./index.ts.
import type { ConnectionOptions as TlsOptions } from 'node:tls'
import { OAuthTokenSource } from './oauth-token.ts'

/** TLS with the brokers: PEM of the CA (unset: the system's), of a client certificate and its key. */
export interface KafkaTls {
  ca?: string
  cert?: string
  key?: string
  /** Default true: the broker's certificate must name the host connected to. */
  verifyHostname?: boolean
}

export type KafkaSasl =
  | { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
  | { mechanism: 'oauthbearer'; tokenEndpointUrl: string; clientId: string; clientSecret: string; scope?: string }

export interface KafkaConnection {
  brokers: string[]
  clientId: string
  /** `true`: TLS trusting the system's CAs. */
  ssl?: boolean | KafkaTls
  sasl?: KafkaSasl
  /** Per-request timeout, ms. */
  requestTimeoutMs?: number
  connectTimeoutMs?: number
}

const saslMechanisms = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
  oauthbearer: 'OAUTHBEARER',
} as const

// One token source per SASL settings object (the configuration's, shared by every client of a
// worker): every consumer, producer and admin client of the process reuses one token until it
// is due for renewal, instead of asking the token endpoint for one each.
const tokenSources = new WeakMap<object, OAuthTokenSource>()

function tokenSourceOf(sasl: Extract<KafkaSasl, { mechanism: 'oauthbearer' }>): OAuthTokenSource {
  let source = tokenSources.get(sasl)
  if (!source) {
    source = new OAuthTokenSource(sasl)
    tokenSources.set(sasl, source)
  }
  return source
}

function tlsOptions(tls: true | KafkaTls): TlsOptions {
  if (tls === true) return {}
  return {
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls.key === undefined ? {} : { key: tls.key }),
    // The chain is still verified against the CA; only the name check is skipped.
    ...(tls.verifyHostname === false ? { checkServerIdentity: () => undefined } : {}),
  }
}

function saslOptions(sasl: KafkaSasl) {
  if (sasl.mechanism === 'oauthbearer') {
    const source = tokenSourceOf(sasl)
    return { mechanism: saslMechanisms.oauthbearer, token: () => source.token() }
  }
  return { mechanism: saslMechanisms[sasl.mechanism], username: sasl.username, password: sasl.password }
}

/** The client library's base options for a connection. */
export function clientOptions(connection: KafkaConnection, suffix: string) {
  return {
    clientId: `${connection.clientId}-${suffix}`,
    bootstrapBrokers: connection.brokers,
    connectTimeout: connection.connectTimeoutMs ?? 5000,
    requestTimeout: connection.requestTimeoutMs ?? 30_000,
    ...(connection.ssl ? { tls: tlsOptions(connection.ssl) } : {}),
    ...(connection.sasl ? { sasl: saslOptions(connection.sasl) } : {}),
  }
}
