// Why a connection to Kafka failed, in the three words an operator acts on: the TLS handshake
// failed (a certificate on either side), authentication failed (SASL credentials, the token
// endpoint), or the broker is unreachable. Read from the client library's error codes and Node's
// socket and TLS codes, never from message text. Internal to shared/kafka; see ./index.ts.
import { type ErrorCode, FloeError } from '../errors.ts'

export interface KafkaConnectionFailure {
  kind: 'tls' | 'authentication' | 'unreachable'
  code: ErrorCode
  /** One line, e.g. "TLS handshake failed: self-signed certificate in certificate chain". */
  reason: string
}

const unreachable: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
}

// Node's certificate verification codes (OpenSSL's X509_V_ERR_* names) for the broker's chain.
const certificateCodes = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
  'HOSTNAME_MISMATCH',
])

function isTlsCode(code: string): boolean {
  return certificateCodes.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_')
}

/** OpenSSL's alert messages carry a whole error queue entry; its reason is the part an operator reads. */
function tlsReason(error: Error): string {
  const alert = /:SSL routines:[^:]*:([^:]+):/.exec(error.message)
  if (alert?.[1]) return `${alert[1]} (the broker refused the handshake: does it require a client certificate?)`
  return error.message.split('\n')[0] ?? error.message
}

/** Every error below `error`: its causes and the members of the library's error lists. */
function* chain(error: unknown, depth = 0): Generator<Error> {
  if (!(error instanceof Error) || depth > 12) return
  yield error
  const errors = (error as { errors?: unknown }).errors
  if (Array.isArray(errors)) for (const member of errors) yield* chain(member, depth + 1)
  if (error.cause !== undefined) yield* chain(error.cause, depth + 1)
}

/** The kind of a failed connection, or undefined when `error` is none of the three. */
export function kafkaConnectionFailureOf(error: unknown): KafkaConnectionFailure | undefined {
  let found: KafkaConnectionFailure | undefined
  for (const link of chain(error)) {
    const code = (link as { code?: unknown }).code
    // The token endpoint's own answer says more than the library's wrapper around it.
    if (link instanceof FloeError && link.details['tokenEndpoint'] !== undefined) {
      if (link.code === 'KAFKA_UNAVAILABLE') return { kind: 'unreachable', code: link.code, reason: link.message }
      return { kind: 'authentication', code: link.code, reason: `authentication failed: ${link.message}` }
    }
    if (typeof code !== 'string') continue
    if (code === 'PLT_KFK_AUTHENTICATION' && found?.kind !== 'authentication') {
      found = {
        kind: 'authentication',
        code: 'KAFKA_AUTHENTICATION_FAILED',
        reason: `authentication failed: ${link.message.replace(/\.$/, '')}`,
      }
    } else if (isTlsCode(code) && !found) {
      found = { kind: 'tls', code: 'KAFKA_TLS_FAILED', reason: `TLS handshake failed: ${tlsReason(link)}` }
    } else if (unreachable[code] && !found) {
      found = { kind: 'unreachable', code: 'KAFKA_UNAVAILABLE', reason: unreachable[code] }
    }
  }
  return found
}
