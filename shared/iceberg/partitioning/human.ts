// Partition values as text for the data file's directory (`ts_day=2017-11-16/id_bucket=3`). The
// path is for people and tools that browse storage; readers take partition values from the
// manifest. The forms follow pyiceberg's `to_human_string` + `quote_plus`, the implementation the
// tests check against. Iceberg's Java writer differs in small ways: it prints timestamps with `Z`
// and may drop `:00` seconds, floats as `1.0E10`, and its URL encoder keeps `*` and escapes `~`.
import type { IcebergValue, PrimitiveType } from '../types.ts'
import { decimalParams } from '../types.ts'
import {
  encodeBase64,
  formatDecimal,
  formatHourOrdinal,
  formatIsoDate,
  formatIsoTime,
  formatIsoTimestamp,
  formatMonthOrdinal,
  formatUuid,
  formatYearOrdinal,
} from '../values/index.ts'
import type { Transform } from './transform.ts'

/** Python's `repr(float)`: shortest round-trip digits, scientific below 1e-4 and from 1e16. */
function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan'
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf'
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0'
  const [mantissa = '', exponentText = '0'] = value.toExponential().split('e')
  const exponent = Number(exponentText)
  const sign = value < 0 ? '-' : ''
  const digits = mantissa.replace('-', '').replace('.', '')
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`
    const integer = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0')
    return `${sign}${integer}.${digits.slice(exponent + 1) || '0'}`
  }
  const scientific = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
  return `${sign}${scientific}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`
}

/** A value of a primitive type as text (identity and truncate partitions). */
function valueText(type: PrimitiveType, value: IcebergValue): string {
  switch (type) {
    case 'date':
      return formatIsoDate(value as number)
    case 'time':
      return formatIsoTime(Number(value as bigint))
    case 'timestamp':
    case 'timestamptz':
      return formatIsoTimestamp(value as bigint, type === 'timestamptz')
    case 'uuid':
      return formatUuid(value as Uint8Array)
    case 'float':
    case 'double':
      return formatFloat(value as number)
  }
  if (value instanceof Uint8Array) return encodeBase64(value)
  const decimal = decimalParams(type)
  if (decimal) return formatDecimal(value as bigint, decimal.scale)
  return String(value)
}

/** The human form of a partition value: `2017`, `2017-11`, `2017-11-16`, `2017-11-16-22`, or the value. */
export function humanString(transform: Transform, source: PrimitiveType, value: IcebergValue): string {
  if (value === null) return 'null'
  switch (transform.kind) {
    case 'year':
      return formatYearOrdinal(value as number)
    case 'month':
      return formatMonthOrdinal(value as number)
    case 'day':
      return formatIsoDate(value as number)
    case 'hour':
      return formatHourOrdinal(value as number)
    case 'bucket':
      return String(value)
    case 'void':
      return 'null'
    default:
      return valueText(source, value)
  }
}

// String.prototype.toWellFormed is ES2024; Node 22 has it, the project's lib (ES2023) does not.
type MaybeWellFormed = string & { toWellFormed(): string }

/**
 * Python's `quote_plus(text, safe="")`: UTF-8 percent-encoding of everything but letters, digits
 * and `_.-~`, space as `+`. encodeURIComponent also spares `!'()*`, so those are escaped after.
 */
export function escapePathSegment(text: string): string {
  return encodeURIComponent((text as MaybeWellFormed).toWellFormed())
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+')
}
