// One error taxonomy for all of Floe. Code decides by `code` and the flags, never by message text.
// A code says what went wrong in the domain; `retryable` says whether trying the same thing again
// can succeed; `fatal` says the worker must stop (configuration, corruption of an invariant).

export const errorCodes = {
  // configuration and usage
  CONFIG_INVALID: { retryable: false, fatal: true },
  // the servers Floe depends on
  KAFKA_UNAVAILABLE: { retryable: true, fatal: false },
  /**
   * Kafka refused a request for a reason that asking again cannot fix: a record or batch too large,
   * a topic that does not exist, no authorization. `details.reason` names which (producer.ts).
   */
  KAFKA_REFUSED: { retryable: false, fatal: false },
  /**
   * The broker (or the OAuth token endpoint) refused Floe's credentials: a wrong password, an
   * unknown user, a refused client. Retrying with the same ones cannot succeed; the worker stops.
   */
  KAFKA_AUTHENTICATION_FAILED: { retryable: false, fatal: true },
  /** The TLS handshake with a broker failed: an untrusted or wrong certificate on either side. */
  KAFKA_TLS_FAILED: { retryable: false, fatal: true },
  CATALOG_UNAVAILABLE: { retryable: true, fatal: false },
  /**
   * The catalog's database answered and refused Floe: a wrong password, an unknown user, a
   * database that does not exist, no privilege. The same credentials cannot succeed; the worker stops.
   */
  CATALOG_REFUSED: { retryable: false, fatal: true },
  /**
   * The REST catalog (or its OAuth 2 token endpoint) refused Floe's credential or token: a wrong
   * client secret, a revoked client, a token refused even when just issued. The worker stops.
   */
  CATALOG_AUTHENTICATION_FAILED: { retryable: false, fatal: true },
  STORAGE_UNAVAILABLE: { retryable: true, fatal: false },
  // catalog answers
  CATALOG_NOT_FOUND: { retryable: false, fatal: false },
  CATALOG_ALREADY_EXISTS: { retryable: false, fatal: false },
  CATALOG_BAD_REQUEST: { retryable: false, fatal: false },
  /** The table changed under us (409 / failed compare-and-set): reload, re-check, retry. */
  COMMIT_CONFLICT: { retryable: true, fatal: false },
  /** The commit may or may not have been applied (5xx, timeout, lost connection): look before retrying. */
  COMMIT_STATE_UNKNOWN: { retryable: true, fatal: false },
  /** The caller's re-check refused the commit (e.g. a range no longer contiguous with the table). */
  COMMIT_REJECTED: { retryable: false, fatal: false },
  // data
  CONVERSION_FAILED: { retryable: false, fatal: false },
  RECORD_MALFORMED: { retryable: false, fatal: false },
  /** A bad record the dataset cannot keep anywhere, under `badRecords: stop`: the worker stops. */
  BAD_RECORD_STOP: { retryable: false, fatal: true },
  STORAGE_NOT_FOUND: { retryable: false, fatal: false },
  /**
   * A routed dataset's ledger is not at this worker's route (a switch to it is under way, or it is
   * at another): the worker's partitions wait and ask again.
   */
  ROUTE_SWITCH_PENDING: { retryable: true, fatal: false },
  // protocol
  PROTOCOL_UNDECODABLE: { retryable: false, fatal: false },
  PROTOCOL_VERSION_UNSUPPORTED: { retryable: false, fatal: false },
  // invariants that must never break
  INVARIANT_BROKEN: { retryable: false, fatal: true },
  /** Another live worker holds the WAL directory's lock: two writers would corrupt each other's files. */
  WAL_IN_USE: { retryable: false, fatal: true },
  /** An exception Floe's own code did not expect (a TypeError in the record path): a bug, not bad input. */
  INTERNAL_ERROR: { retryable: false, fatal: true },
} as const satisfies Record<string, { retryable: boolean; fatal: boolean }>

export type ErrorCode = keyof typeof errorCodes

// Errors about a record's data are facts about input, raised per bad record on the hot path: a
// stack says nothing there (the record's coordinates do), and capturing one costs more than the
// whole decode of a good record. Measured on the fuzz generator's records (2-core box): a refused
// record cost 30-150 µs with a stack, a few µs without.
const stackless: ReadonlySet<ErrorCode> = new Set(['RECORD_MALFORMED', 'CONVERSION_FAILED'])

export class FloeError extends Error {
  readonly code: ErrorCode
  readonly retryable: boolean
  readonly fatal: boolean
  /** Structured facts for logs (never secrets). */
  readonly details: Readonly<Record<string, unknown>>

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    const stackTraceLimit = Error.stackTraceLimit
    if (stackless.has(code)) Error.stackTraceLimit = 0
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    Error.stackTraceLimit = stackTraceLimit
    this.name = 'FloeError'
    this.code = code
    this.retryable = errorCodes[code].retryable
    this.fatal = errorCodes[code].fatal
    this.details = options.details ?? {}
  }
}

/**
 * Whether an error must stop the worker instead of being retried: a FloeError whose code is fatal
 * (a broken invariant, a damaged progress marker, a configuration the servers contradict). Anything
 * else, including errors from libraries, is taken as passing and left to the caller's retry.
 */
export function isFatal(error: unknown): error is FloeError {
  return error instanceof FloeError && error.fatal
}

/** Whether a code, as carried in a summary or over the wire, names a fatal error. */
export function isFatalCode(code: string | undefined): boolean {
  return code !== undefined && Object.hasOwn(errorCodes, code) && errorCodes[code as ErrorCode].fatal
}

export function isFloeError(error: unknown, code?: ErrorCode): error is FloeError {
  return error instanceof FloeError && (code === undefined || error.code === code)
}

/** The message of anything thrown, for a one-line log or CLI error. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
