// Why a record was refused: one closed list, so it can label a metric and fill the dead-letter
// header, and one error shape (RECORD_MALFORMED with `details.reason`) the runner acts on.
import { FloeError, isFloeError } from '../../shared/index.ts'

/** Every reason a record goes to the dead-letter path; the values of the `floe.dlq.reason` header. */
export const dlqReasons = [
  /** No value (a tombstone) or zero bytes. */
  'empty',
  /** More bytes than `ingestion.maxRecordBytes`. */
  'too-large',
  /** Bytes that are not UTF-8. */
  'invalid-utf8',
  /** Not JSON text (truncated, trailing garbage, ...). */
  'not-json',
  /** JSON, but the top level is not an object (an array, a string, null, ...). */
  'not-object',
  /** Containers nested deeper than the decoder's maxDepth. */
  'too-deep',
  /** A column's JMESPath expression threw (e.g. a function given the wrong type). */
  'mapping-failed',
  /** A column's value does not convert to its Iceberg type (CONVERSION_FAILED's message kept). */
  'conversion-failed',
  /** A dataset that infers its columns: a field name that cannot be a column (empty, dotted, reserved, a case twin). */
  'field-name',
  /** A dataset that infers its columns: the record's new fields would take the table past its column limit. */
  'too-many-columns',
  /** A dataset that infers its columns: the catalog refused the schema the record's new fields make. */
  'schema-refused',
  /** A routed dataset without a fallback table: the record's route value names no table (absent, not a name, not listed). */
  'no-route',
] as const

export type DlqReason = (typeof dlqReasons)[number]

const known: ReadonlySet<string> = new Set(dlqReasons)

export function isDlqReason(value: unknown): value is DlqReason {
  return typeof value === 'string' && known.has(value)
}

/** The RECORD_MALFORMED error every decoder refusal is. `column` is set for the per-column reasons. */
export function malformed(
  reason: DlqReason,
  message: string,
  extra: { column?: string; cause?: unknown; details?: Record<string, unknown> } = {},
): FloeError {
  const details: Record<string, unknown> = { reason, ...extra.details }
  if (extra.column !== undefined) details.column = extra.column
  return new FloeError('RECORD_MALFORMED', message, { cause: extra.cause, details })
}

/**
 * A value converter's refusal as the record's: the converter's message already names the column
 * path (user.tags[3]), the JSON found and the type expected; kept, with its facts, under
 * RECORD_MALFORMED (`hint` appended to the message). Anything else a converter throws is a bug of
 * Floe's, not a fact about the record: returned as it is.
 */
export function conversionRefusal(error: unknown, fallbackColumn: string, hint = ''): unknown {
  if (!isFloeError(error, 'CONVERSION_FAILED')) return error
  const { column, expected, found, reason } = error.details
  return malformed('conversion-failed', `${error.message}${hint}`, {
    column: typeof column === 'string' ? column : fallbackColumn,
    cause: error,
    details: { expected, found, ...(reason === undefined ? {} : { problem: reason }) },
  })
}
