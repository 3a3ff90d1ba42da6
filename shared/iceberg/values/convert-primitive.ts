// JSON -> IcebergValue for each primitive type. Each factory runs once per column and returns a
// function that assumes a non-null input (null handling wraps it in convert.ts). The returned
// functions test `typeof` first and allocate nothing but the result; every error path builds its
// message only when it throws.
import type { IcebergValue, PrimitiveType } from '../types.ts'
import { decimalParams, fixedLength } from '../types.ts'
import { decodeBase64, parseUuid } from './bytes.ts'
import { parseIsoDate, parseIsoTime, parseIsoTimestamp } from './calendar.ts'
import { decimalDigits, parseDecimalText } from './decimal.ts'
import { conversionError } from './describe.ts'

/** Unit of a JSON number given for a timestamp or timestamptz column. */
export type EpochUnit = 'seconds' | 'milliseconds' | 'microseconds'

export type PrimitiveConverter = (json: unknown) => IcebergValue

const INT_MIN = -2147483648
const INT_MAX = 2147483647
const LONG_MIN = -(2n ** 63n)
const LONG_MAX = 2n ** 63n - 1n
const microsPerUnit: Record<EpochUnit, number> = { seconds: 1_000_000, milliseconds: 1_000, microseconds: 1 }

/** Why a JSON number is no integer of the wanted kind, for the message. */
function integerReason(n: number, range: string): string {
  if (!Number.isFinite(n)) return 'not a finite number'
  if (!Number.isInteger(n)) return 'not an integer'
  return `out of range for ${range}`
}

// String.prototype.isWellFormed is ES2024; Node 22 has it, the project's lib setting (ES2023) does not.
type MaybeWellFormed = string & { isWellFormed(): boolean }

/** The special float values, as Jackson writes them in JSON (quoted). */
function specialFloat(text: string): number | undefined {
  if (text === 'NaN') return Number.NaN
  if (text === 'Infinity') return Number.POSITIVE_INFINITY
  if (text === '-Infinity') return Number.NEGATIVE_INFINITY
  return undefined
}

export function compilePrimitive(type: PrimitiveType, path: string, epochUnit: EpochUnit): PrimitiveConverter {
  switch (type) {
    case 'boolean':
      return (json) => {
        if (typeof json === 'boolean') return json
        throw conversionError(path, type, json)
      }
    case 'int':
      return (json) => {
        if (typeof json === 'number') {
          // `| 0` also turns -0 into 0.
          if (Number.isInteger(json) && json >= INT_MIN && json <= INT_MAX) return json | 0
          throw conversionError(path, type, json, integerReason(json, 'a 32-bit int'))
        }
        if (typeof json === 'bigint' && json >= INT_MIN && json <= INT_MAX) return Number(json)
        throw conversionError(path, type, json, typeof json === 'bigint' ? 'out of range for a 32-bit int' : undefined)
      }
    case 'long':
      return (json) => toLong(json, path)
    case 'float':
      return (json) => {
        if (typeof json === 'number') {
          if (!Number.isFinite(json)) throw overflowed(path, type)
          const float = Math.fround(json)
          if (Number.isFinite(float)) return float
          throw conversionError(path, type, json, 'out of range for a 32-bit float')
        }
        const special = typeof json === 'string' ? specialFloat(json) : undefined
        if (special !== undefined) return special
        throw conversionError(path, type, json)
      }
    case 'double':
      return (json) => {
        if (typeof json === 'number') {
          if (Number.isFinite(json)) return json
          throw overflowed(path, type)
        }
        const special = typeof json === 'string' ? specialFloat(json) : undefined
        if (special !== undefined) return special
        throw conversionError(path, type, json)
      }
    case 'date':
      return (json) => {
        if (typeof json === 'string') {
          const days = parseIsoDate(json)
          if (!Number.isNaN(days)) return days
          throw conversionError(path, type, json, 'not a YYYY-MM-DD date')
        }
        if (typeof json === 'number') {
          if (Number.isInteger(json) && json >= INT_MIN && json <= INT_MAX) return json | 0
          throw conversionError(path, type, json, integerReason(json, 'epoch days'))
        }
        if (typeof json === 'bigint' && json >= INT_MIN && json <= INT_MAX) return Number(json)
        throw conversionError(path, type, json)
      }
    case 'time':
      return (json) => {
        if (typeof json === 'string') {
          const micros = parseIsoTime(json)
          if (!Number.isNaN(micros)) return BigInt(micros)
          throw conversionError(path, type, json, 'not an HH:MM:SS[.ffffff] time')
        }
        throw conversionError(path, type, json)
      }
    case 'timestamp':
    case 'timestamptz': {
      const zone = type === 'timestamptz' ? 'required' : 'forbidden'
      const unitMicros = microsPerUnit[epochUnit]
      return (json) => {
        if (typeof json === 'string') {
          const micros = parseIsoTimestamp(json, zone)
          if (typeof micros === 'bigint') return micros
          throw conversionError(path, type, json, micros)
        }
        if (typeof json === 'number') return epochToMicros(json, unitMicros, epochUnit, path, type)
        if (typeof json === 'bigint') {
          const micros = json * BigInt(unitMicros)
          if (micros >= LONG_MIN && micros <= LONG_MAX) return micros
          throw conversionError(path, type, json, `out of range as epoch ${epochUnit}`)
        }
        throw conversionError(path, type, json)
      }
    }
    case 'string':
      return (json) => {
        if (typeof json === 'string') {
          // A lone surrogate has no UTF-8 form; the Parquet writer would silently replace it.
          if ((json as MaybeWellFormed).isWellFormed()) return json
          throw conversionError(path, type, json, 'contains a lone surrogate, not valid UTF-8')
        }
        throw conversionError(path, type, json)
      }
    case 'uuid':
      return (json) => {
        const bytes = typeof json === 'string' ? parseUuid(json) : undefined
        if (bytes) return bytes
        throw conversionError(path, type, json, typeof json === 'string' ? 'not a canonical UUID' : undefined)
      }
    case 'binary':
      return (json) => {
        const bytes = typeof json === 'string' ? decodeBase64(json) : undefined
        if (bytes) return bytes
        throw conversionError(path, type, json, typeof json === 'string' ? 'not base64' : undefined)
      }
    default:
      return compileParameterized(type, path)
  }
}

function compileParameterized(type: PrimitiveType, path: string): PrimitiveConverter {
  const length = fixedLength(type)
  if (length !== undefined) {
    return (json) => {
      const bytes = typeof json === 'string' ? decodeBase64(json) : undefined
      if (bytes && bytes.length === length) return bytes
      const reason = bytes
        ? `${bytes.length} bytes, not ${length}`
        : typeof json === 'string'
          ? 'not base64'
          : undefined
      throw conversionError(path, type, json, reason)
    }
  }
  const decimal = decimalParams(type)
  if (decimal !== undefined) {
    const { precision, scale } = decimal
    return (json) => {
      let text: string
      if (typeof json === 'string') text = json
      else if (typeof json === 'number') {
        if (!Number.isFinite(json)) throw conversionError(path, type, json, 'not a finite number')
        if (significantDigits(json) > EXACT_DOUBLE_DIGITS) {
          const reason = `more than ${EXACT_DOUBLE_DIGITS} significant digits, where JSON numbers lose precision; send it as a string`
          throw conversionError(path, type, json, reason)
        }
        // The shortest text that reads back as this double: 0.1 is "0.1", not 0.1000000000000000055...
        text = String(json)
      } else if (typeof json === 'bigint') {
        if (decimalDigits(json) + scale <= precision) return json * 10n ** BigInt(scale)
        throw conversionError(path, type, json, `more than ${precision} digits (precision ${precision})`)
      } else throw conversionError(path, type, json)
      const unscaled = parseDecimalText(text, precision, scale)
      if (typeof unscaled === 'bigint') return unscaled
      throw conversionError(path, type, json, unscaled)
    }
  }
  throw new TypeError(`not an Iceberg primitive type: ${type}`)
}

// The widest decimal text a double is guaranteed to carry exactly (DBL_DIG): every decimal of at
// most 15 digits survives JSON.parse exactly, beyond that it may not (12345678901234567890 arrives
// as 12345678901234567000). A decimal sent as a string is read exactly.
const EXACT_DOUBLE_DIGITS = 15

/** The number of significant decimal digits of a double's shortest text (1.50e-7 -> 2). */
export function significantDigits(value: number): number {
  const text = String(value)
  const exponent = text.indexOf('e')
  const mantissa = exponent === -1 ? text : text.slice(0, exponent)
  const digits = mantissa.replace(/[-.]/g, '').replace(/^0+/, '').replace(/0+$/, '')
  return digits.length
}

/**
 * JSON has no Infinity: a JSON number that parses to one (1e400) overflowed the double, and
 * storing Infinity would change the data without a word. The quoted "Infinity" of Jackson's form
 * still converts.
 */
function overflowed(path: string, type: string): Error {
  return conversionError(
    path,
    type,
    Number.POSITIVE_INFINITY,
    `out of range for a ${type}: JSON has no Infinity; send "Infinity" as a string`,
  )
}

function toLong(json: unknown, path: string): bigint {
  if (typeof json === 'number') {
    if (Number.isSafeInteger(json)) return BigInt(json)
    const reason =
      Number.isInteger(json) && Math.abs(json) < 2 ** 63
        ? 'beyond 2^53, where JSON numbers lose precision; send it as a string'
        : integerReason(json, 'a 64-bit long')
    throw conversionError(path, 'long', json, reason)
  }
  if (typeof json === 'string') {
    if (/^-?\d{1,19}$/.test(json)) {
      const value = BigInt(json)
      if (value >= LONG_MIN && value <= LONG_MAX) return value
      throw conversionError(path, 'long', json, 'out of range for a 64-bit long')
    }
    throw conversionError(path, 'long', json, 'not an integer')
  }
  if (typeof json === 'bigint') {
    if (json >= LONG_MIN && json <= LONG_MAX) return json
    throw conversionError(path, 'long', json, 'out of range for a 64-bit long')
  }
  throw conversionError(path, 'long', json)
}

/**
 * An epoch number in `unit` -> microseconds. Fractions are rounded to the nearest microsecond: the
 * double is already a binary approximation of the producer's decimal (1.001 s is 1000999.99... µs).
 */
function epochToMicros(json: number, unitMicros: number, unit: EpochUnit, path: string, type: string): bigint {
  const micros = json * unitMicros
  if (Number.isSafeInteger(micros)) return BigInt(micros)
  if (!Number.isFinite(json)) throw conversionError(path, type, json, 'not a finite number')
  if (Number.isSafeInteger(json)) {
    const exact = BigInt(json) * BigInt(unitMicros)
    if (exact >= LONG_MIN && exact <= LONG_MAX) return exact
  } else if (!Number.isInteger(json)) {
    const rounded = Math.round(micros)
    if (Number.isSafeInteger(rounded)) return BigInt(rounded)
  }
  throw conversionError(path, type, json, `out of range as epoch ${unit}`)
}
