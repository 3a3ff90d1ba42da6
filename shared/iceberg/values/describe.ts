// The CONVERSION_FAILED error: one message shape for every converter, and the structured facts
// (column path, expected type, what was found) in `details` so a dead-letter header or a log
// field needs no message parsing.
import { FloeError, isFloeError } from '../../errors.ts'

const excerptLength = 40

/** `string "abc"`, `number 1.5`, `boolean true`, `null`, `missing`, `array`, `object`: short. */
export function describeJson(json: unknown): string {
  switch (typeof json) {
    case 'string': {
      const excerpt = json.length > excerptLength ? `${json.slice(0, excerptLength)}…` : json
      return `string ${JSON.stringify(excerpt)}`
    }
    case 'number':
    case 'bigint':
      return `number ${String(json)}`
    case 'boolean':
      return `boolean ${json}`
    case 'undefined':
      return 'missing'
    case 'object':
      if (json === null) return 'null'
      return Array.isArray(json) ? `array of ${json.length}` : 'object'
    default:
      return typeof json
  }
}

function message(column: string, expected: string, found: string, reason: string | undefined): string {
  return `column ${column}: expected ${expected}, got ${found}${reason ? ` (${reason})` : ''}`
}

/** The error a converter throws: `column amount: expected double, got string "abc"`. */
export function conversionError(column: string, expected: string, json: unknown, reason?: string): FloeError {
  const found = describeJson(json)
  return new FloeError('CONVERSION_FAILED', message(column, expected, found, reason), {
    details: { column, expected, found, ...(reason ? { reason } : {}) },
  })
}

/**
 * A list or map converter compiles its element's path with a `[]` placeholder at `at` (the index is
 * only known per record); when an element fails, this fills it in, e.g. `user.tags[]` -> `user.tags[3]`.
 * Placeholders to the right were filled by inner lists first, so `at` is still exact.
 */
export function withIndex(error: unknown, at: number, index: string): unknown {
  if (!isFloeError(error, 'CONVERSION_FAILED')) return error
  const { column, expected, found, reason } = error.details
  if (typeof column !== 'string' || typeof expected !== 'string' || typeof found !== 'string') return error
  const filled = `${column.slice(0, at)}[${index}]${column.slice(at + 2)}`
  const why = typeof reason === 'string' ? reason : undefined
  return new FloeError('CONVERSION_FAILED', message(filled, expected, found, why), {
    details: { ...error.details, column: filled },
  })
}

/** A map key as it appears in a path: quoted, short. */
export function keyExcerpt(key: string): string {
  return JSON.stringify(key.length > excerptLength ? `${key.slice(0, excerptLength)}…` : key)
}
