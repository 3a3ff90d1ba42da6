// A record's value -> its top-level JSON object, or the RECORD_MALFORMED refusal naming why: the
// first step of every decoder that reads the value as JSON (a mapping's and an inferring one's).
import { messageOf } from '../../shared/index.ts'
import { malformed } from './reasons.ts'
import { utf8Text, withinDepth } from './text.ts'

/** Refuses a value longer than `maxRecordBytes` (ingestion.maxRecordBytes) as too-large. */
export function refuseTooLarge(value: Buffer, maxRecordBytes: number): void {
  if (value.length <= maxRecordBytes) return
  throw malformed(
    'too-large',
    `record of ${value.length} bytes is larger than ingestion.maxRecordBytes (${maxRecordBytes})`,
    { details: { bytes: value.length, maxRecordBytes } },
  )
}

/** Bytes -> the parsed top-level JSON object (not an array, not null). */
export function parseJsonObject(value: Buffer | undefined, maxRecordBytes: number, maxDepth: number): object {
  if (value === undefined || value.length === 0) {
    throw malformed('empty', 'record has no value (a tombstone or zero bytes)')
  }
  refuseTooLarge(value, maxRecordBytes)
  const text = utf8Text(value)
  if (text === undefined) throw malformed('invalid-utf8', 'record is not valid UTF-8')
  if (!withinDepth(text, maxDepth)) {
    throw malformed('too-deep', `record nests JSON deeper than ${maxDepth} levels`, { details: { maxDepth } })
  }
  let data: unknown
  // A SyntaxError of bad text needs no stack (it becomes a RECORD_MALFORMED at once), and
  // capturing one costs more than parsing a good record.
  const stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    data = JSON.parse(text)
  } catch (error) {
    throw malformed('not-json', `record is not JSON: ${messageOf(error)}`, { cause: error })
  } finally {
    Error.stackTraceLimit = stackTraceLimit
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw malformed('not-object', `record is JSON ${jsonKind(data)}, not an object`)
  }
  return data
}

function jsonKind(json: unknown): string {
  if (json === null) return 'null'
  if (Array.isArray(json)) return 'array'
  return typeof json
}
