// Why a record was refused: one closed list, so it can label a metric and fill the dead-letter
// header, and one error shape (RECORD_MALFORMED with `details.reason`) the runner acts on.
import { FloeError } from '../../shared/index.ts'

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
