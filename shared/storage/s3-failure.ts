// What an S3 failure means for Floe, decided by the SDK's error name (S3's error code) and HTTP
// status, never by message text. Classes, as for Azure (object-storage.ts):
//   - a missing object on get: STORAGE_NOT_FOUND (exists says false);
//   - everything else S3 or the network says: STORAGE_UNAVAILABLE, retried with backoff by the
//     uploader. That includes a missing bucket, refused credentials and a denied access: an
//     operator fixes those without restarting Floe (a bucket created, a key or policy rotated),
//     and meanwhile the topic lags instead of data being lost. Those few are named in the message
//     (`bucket x does not exist`, `S3 refused the credentials`) and in details.reason, so the log
//     line and `floe validate` say what to fix;
//   - a location this storage does not serve: CONFIG_INVALID (raised before any request).
import { FloeError } from '../errors.ts'

export type S3FailureReason =
  | 'no-such-key'
  | 'no-such-bucket'
  | 'credentials-refused'
  | 'no-credentials'
  | 'access-denied'
  | 'throttled'
  | 'server-error'
  | 'unreachable'
  | 'other'

interface SdkErrorShape {
  name?: unknown
  code?: unknown
  $metadata?: { httpStatusCode?: unknown }
  cause?: unknown
}

const credentialCodes = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'TokenRefreshRequired',
  'InvalidSecurity',
  'AuthorizationHeaderMalformed',
])
const throttleCodes = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TooManyRequests',
])
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
])

/** The socket-level code under an SDK error, if any (the SDK wraps some, not all). */
function networkCodeOf(error: unknown): string | undefined {
  let current: unknown = error
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const shape = current as SdkErrorShape
    if (typeof shape.code === 'string' && networkCodes.has(shape.code)) return shape.code
    if (shape.name === 'TimeoutError') return 'ETIMEDOUT'
    current = shape.cause
  }
  return undefined
}

export function s3ReasonOf(
  error: unknown,
  operation: string,
): { reason: S3FailureReason; code?: string; status?: number } {
  const shape = (error ?? {}) as SdkErrorShape
  const code = typeof shape.name === 'string' ? shape.name : undefined
  const rawStatus = shape.$metadata?.httpStatusCode
  const status = typeof rawStatus === 'number' ? rawStatus : undefined
  const tag = { ...(code ? { code } : {}), ...(status ? { status } : {}) }
  const network = networkCodeOf(error)
  if (network) return { reason: 'unreachable', code: network }
  if (code === 'CredentialsProviderError') return { reason: 'no-credentials', ...tag }
  if (code === 'NoSuchBucket') return { reason: 'no-such-bucket', ...tag }
  if (code === 'NoSuchKey' || (status === 404 && operation === 'get')) return { reason: 'no-such-key', ...tag }
  if (code !== undefined && credentialCodes.has(code)) return { reason: 'credentials-refused', ...tag }
  if (code === 'AccessDenied' || status === 403) return { reason: 'access-denied', ...tag }
  if ((code !== undefined && throttleCodes.has(code)) || status === 429 || status === 503)
    return { reason: 'throttled', ...tag }
  if (status !== undefined && status >= 500) return { reason: 'server-error', ...tag }
  return { reason: 'other', ...tag }
}

function describe(reason: S3FailureReason, bucket: string, code: string | undefined, status?: number): string {
  switch (reason) {
    case 'no-such-bucket':
      return `bucket ${bucket} does not exist`
    case 'credentials-refused':
      return `S3 refused the credentials (${code})`
    case 'no-credentials':
      return 'no S3 credentials: set FLOE_STORAGE__S3__ACCESS_KEY_ID and FLOE_STORAGE__S3__SECRET_ACCESS_KEY, or the AWS credential chain'
    case 'access-denied':
      return `S3 denied access to bucket ${bucket} (${code ?? status})`
    case 'unreachable':
      return `S3 endpoint unreachable (${code})`
    default:
      return `${code ?? 'error'}${status ? ` ${status}` : ''}`
  }
}

/** The FloeError for an SDK failure of `operation` on `location`; FloeErrors and aborts pass as they are. */
export function s3Failure(error: unknown, operation: string, location: string, bucket: string): unknown {
  if (error instanceof FloeError || (error as Error | undefined)?.name === 'AbortError') return error
  const { reason, code, status } = s3ReasonOf(error, operation)
  const details = { location, operation, reason, ...(code ? { code } : {}), ...(status ? { status } : {}) }
  if (reason === 'no-such-key') {
    return new FloeError('STORAGE_NOT_FOUND', `no object at ${location}`, { cause: error, details })
  }
  return new FloeError(
    'STORAGE_UNAVAILABLE',
    `S3 ${operation} failed for ${location}: ${describe(reason, bucket, code, status)}`,
    {
      cause: error,
      details,
    },
  )
}

/**
 * The message of a storage failure that names its cause itself (a missing bucket, refused or
 * missing credentials, a denied access), for one-line reports such as `floe validate`'s; undefined
 * for the rest, whose cause chain says more.
 */
export function namedStorageFailure(error: unknown): string | undefined {
  if (!(error instanceof FloeError)) return undefined
  const reason = error.details['reason']
  const named: unknown[] = ['no-such-bucket', 'credentials-refused', 'no-credentials', 'access-denied']
  return named.includes(reason) ? error.message : undefined
}
