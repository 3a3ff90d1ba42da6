// How Floe reaches Kafka, independent of the client library: brokers, client id, TLS and SASL.
// Internal to shared/kafka; the public surface is ./index.ts.
import type { ConnectionOptions as TlsOptions } from 'node:tls'

export interface KafkaConnection {
  brokers: string[]
  clientId: string
  ssl?: boolean | TlsOptions
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string }
  /** Per-request timeout, ms. */
  requestTimeoutMs?: number
  connectTimeoutMs?: number
}

const saslMechanisms = { plain: 'PLAIN', 'scram-sha-256': 'SCRAM-SHA-256', 'scram-sha-512': 'SCRAM-SHA-512' } as const

/** The client library's base options for a connection. */
export function clientOptions(connection: KafkaConnection, suffix: string) {
  return {
    clientId: `${connection.clientId}-${suffix}`,
    bootstrapBrokers: connection.brokers,
    connectTimeout: connection.connectTimeoutMs ?? 5000,
    requestTimeout: connection.requestTimeoutMs ?? 30_000,
    ...(connection.ssl ? { tls: connection.ssl === true ? {} : connection.ssl } : {}),
    ...(connection.sasl
      ? {
          sasl: {
            mechanism: saslMechanisms[connection.sasl.mechanism],
            username: connection.sasl.username,
            password: connection.sasl.password,
          },
        }
      : {}),
  }
}
