// Proleptic Gregorian calendar arithmetic on epoch days and microseconds, and the ISO-8601 text
// forms Iceberg uses. Hand-written rather than built on `Date`: `Date.UTC` maps years 0-99 to the
// 1900s and silently rolls invalid days over (Feb 30 -> Mar 2), has millisecond precision only,
// and every `Date` is an allocation on the per-record path. Days-from-civil is Howard Hinnant's
// algorithm (public domain, http://howardhinnant.github.io/date_algorithms.html).

export const MICROS_PER_SECOND = 1_000_000
export const MICROS_PER_HOUR = 3_600_000_000
export const MICROS_PER_DAY = 86_400_000_000
const MICROS_PER_DAY_N = 86_400_000_000n

/** Days since 1970-01-01 of a proleptic Gregorian date; month 1-12. No validation. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  return era * 146097 + dayOfEra - 719468
}

// civilFromDays writes here instead of returning an object, so the year/month transforms allocate
// nothing per record. Read them right after the call (single-threaded, no re-entrancy).
let civilYear = 1970
let civilMonth = 1
let civilDay = 1

function civilFromDays(days: number): void {
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const dayOfEra = z - era * 146097
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) / 365,
  )
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const mp = Math.floor((5 * dayOfYear + 2) / 153)
  civilDay = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1
  civilMonth = mp < 10 ? mp + 3 : mp - 9
  civilYear = yearOfEra + era * 400 + (civilMonth <= 2 ? 1 : 0)
}

/** Years from 1970 of an epoch day (floor: 1969-12-31 is -1). */
export function yearsFromDays(days: number): number {
  civilFromDays(days)
  return civilYear - 1970
}

/** Months from 1970-01 of an epoch day (floor: 1969-12-31 is -1). */
export function monthsFromDays(days: number): number {
  civilFromDays(days)
  return (civilYear - 1970) * 12 + civilMonth - 1
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
}

const monthLengths = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

export function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : (monthLengths[month - 1] ?? 0)
}

// The largest |micros| handled in float arithmetic; beyond it (year 2255) BigInt takes over. Below
// it Math.floor(a / b) is exact: a quotient that is not an integer lies at least 1/b from one, and
// the rounding error, at most (a/b)·2^-53, is smaller than that while |a| < 2^53.
const SAFE_MICROS = BigInt(Number.MAX_SAFE_INTEGER)

/** Days since epoch of a timestamp in microseconds (floor, so pre-1970 instants work). */
export function daysFromMicros(micros: bigint): number {
  if (micros <= SAFE_MICROS && micros >= -SAFE_MICROS) return Math.floor(Number(micros) / MICROS_PER_DAY)
  const q = micros / MICROS_PER_DAY_N
  return Number(micros % MICROS_PER_DAY_N < 0n ? q - 1n : q)
}

/** Hours since epoch of a timestamp in microseconds (floor). */
export function hoursFromMicros(micros: bigint): number {
  if (micros <= SAFE_MICROS && micros >= -SAFE_MICROS) return Math.floor(Number(micros) / MICROS_PER_HOUR)
  const h = 3_600_000_000n
  const q = micros / h
  return Number(micros % h < 0n ? q - 1n : q)
}

// ---- parsing ---------------------------------------------------------------------------------

function digit(text: string, at: number): number {
  const c = text.charCodeAt(at) - 48
  return c >= 0 && c <= 9 ? c : Number.NaN
}

function digits2(text: string, at: number): number {
  return digit(text, at) * 10 + digit(text, at + 1)
}

/** Days since epoch of `YYYY-MM-DD` at `start`, or NaN if malformed or not a real date. */
function parseDateAt(text: string, start: number): number {
  if (text.charCodeAt(start + 4) !== 45 || text.charCodeAt(start + 7) !== 45) return Number.NaN
  const year = digits2(text, start) * 100 + digits2(text, start + 2)
  const month = digits2(text, start + 5)
  const day = digits2(text, start + 8)
  // NaN fails every comparison below.
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month))) return Number.NaN
  return daysFromCivil(year, month, day)
}

/** `YYYY-MM-DD` -> days since 1970-01-01, or NaN. */
export function parseIsoDate(text: string): number {
  return text.length === 10 ? parseDateAt(text, 0) : Number.NaN
}

/**
 * `HH:MM[:SS[.fraction]]` between start and end -> microseconds since midnight, or NaN. A fraction
 * has 1-9 digits; digits below the microsecond are truncated, as Iceberg's writers do for nanos.
 */
function parseTimeRange(text: string, start: number, end: number): number {
  const length = end - start
  if (length < 5 || text.charCodeAt(start + 2) !== 58) return Number.NaN
  const hour = digits2(text, start)
  const minute = digits2(text, start + 3)
  let second = 0
  let micros = 0
  if (length > 5) {
    if (length < 8 || text.charCodeAt(start + 5) !== 58) return Number.NaN
    second = digits2(text, start + 6)
    if (length > 8) {
      const fractionDigits = length - 9
      if (text.charCodeAt(start + 8) !== 46 || fractionDigits < 1 || fractionDigits > 9) return Number.NaN
      let scale = 100_000
      for (let i = start + 9; i < end; i++) {
        const d = digit(text, i)
        if (Number.isNaN(d)) return Number.NaN
        micros += d * scale
        scale /= 10
      }
      micros = Math.floor(micros)
    }
  }
  if (!(hour <= 23 && minute <= 59 && second <= 59)) return Number.NaN
  return (hour * 3600 + minute * 60 + second) * MICROS_PER_SECOND + micros
}

/** `HH:MM[:SS[.ffffff]]` -> microseconds since midnight, or NaN. */
export function parseIsoTime(text: string): number {
  return parseTimeRange(text, 0, text.length)
}

/** Zone offset in seconds of `Z`, `±HH`, `±HHMM` or `±HH:MM` at start..end, or NaN. */
function parseZone(text: string, start: number, end: number): number {
  const length = end - start
  const sign = text.charCodeAt(start)
  if (length === 1 && (sign === 90 || sign === 122)) return 0
  if (sign !== 43 && sign !== 45) return Number.NaN
  const hours = digits2(text, start + 1)
  let minutes = 0
  if (length === 5) minutes = digits2(text, start + 3)
  else if (length === 6 && text.charCodeAt(start + 3) === 58) minutes = digits2(text, start + 4)
  else if (length !== 3) return Number.NaN
  if (!(hours <= 18 && minutes <= 59)) return Number.NaN
  const seconds = hours * 3600 + minutes * 60
  return sign === 45 ? -seconds : seconds
}

/**
 * Parses `YYYY-MM-DD(T| )HH:MM[:SS[.fraction]][zone]` to microseconds since epoch (UTC when a zone
 * is given). `zone` says whether an offset must be present (timestamptz) or absent (timestamp).
 * Returns the reason as a string when the text is not acceptable, so the caller's message can say
 * why without an exception or an object per call.
 */
export function parseIsoTimestamp(text: string, zone: 'required' | 'forbidden'): bigint | string {
  const length = text.length
  if (length < 16) return 'not an ISO-8601 timestamp'
  const days = parseDateAt(text, 0)
  if (Number.isNaN(days)) return 'not an ISO-8601 timestamp'
  const separator = text.charCodeAt(10)
  if (separator !== 84 && separator !== 116 && separator !== 32) return 'not an ISO-8601 timestamp'
  let zoneStart = length
  for (let i = 16; i < length; i++) {
    const c = text.charCodeAt(i)
    if (c === 90 || c === 122 || c === 43 || c === 45) {
      zoneStart = i
      break
    }
  }
  const timeOfDay = parseTimeRange(text, 11, zoneStart)
  if (Number.isNaN(timeOfDay)) return 'not an ISO-8601 timestamp'
  let offsetSeconds = 0
  if (zoneStart < length) {
    if (zone === 'forbidden') return 'has a zone offset; a timestamp without zone takes none, use timestamptz'
    offsetSeconds = parseZone(text, zoneStart, length)
    if (Number.isNaN(offsetSeconds)) return 'bad zone offset'
  } else if (zone === 'required') {
    return 'no zone offset; timestamptz needs one, e.g. Z or +01:00'
  }
  // Below |days| of 100,000 (year 2243) the sum stays a safe integer; beyond, BigInt.
  if (days < 100_000 && days > -100_000) {
    return BigInt(days * MICROS_PER_DAY + timeOfDay - offsetSeconds * MICROS_PER_SECOND)
  }
  return BigInt(days) * MICROS_PER_DAY_N + BigInt(timeOfDay - offsetSeconds * MICROS_PER_SECOND)
}

// ---- formatting ------------------------------------------------------------------------------

function pad2(n: number): string {
  return n < 10 ? `0${n}` : `${n}`
}

function padYear(year: number): string {
  if (year > 9999) return `+${year}`
  if (year < 0) return `-${String(-year).padStart(4, '0')}`
  return String(year).padStart(4, '0')
}

/** `YYYY-MM-DD` of an epoch day. */
export function formatIsoDate(days: number): string {
  civilFromDays(days)
  return `${padYear(civilYear)}-${pad2(civilMonth)}-${pad2(civilDay)}`
}

/** `YYYY` of years from 1970 (the year transform's human form). */
export function formatYearOrdinal(years: number): string {
  return padYear(1970 + years)
}

/** `YYYY-MM` of months from 1970-01 (the month transform's human form). */
export function formatMonthOrdinal(months: number): string {
  const years = Math.floor(months / 12)
  return `${padYear(1970 + years)}-${pad2(months - years * 12 + 1)}`
}

/** `YYYY-MM-DD-HH` of hours from epoch (the hour transform's human form). */
export function formatHourOrdinal(hours: number): string {
  const days = Math.floor(hours / 24)
  return `${formatIsoDate(days)}-${pad2(hours - days * 24)}`
}

/**
 * `HH:MM:SS` plus `.ffffff` when the microseconds are not zero: Python's `isoformat`, which is what
 * pyiceberg writes; every ISO-8601 reader (Java's included) parses it.
 */
export function formatIsoTime(microsOfDay: number): string {
  const seconds = Math.floor(microsOfDay / MICROS_PER_SECOND)
  const micros = microsOfDay - seconds * MICROS_PER_SECOND
  const base = `${pad2(Math.floor(seconds / 3600))}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(seconds % 60)}`
  return micros === 0 ? base : `${base}.${String(micros).padStart(6, '0')}`
}

/** `YYYY-MM-DDTHH:MM:SS[.ffffff]`, with `+00:00` appended for timestamptz. */
export function formatIsoTimestamp(micros: bigint, withZone: boolean): string {
  const days = daysFromMicros(micros)
  const microsOfDay = Number(micros - BigInt(days) * MICROS_PER_DAY_N)
  const text = `${formatIsoDate(days)}T${formatIsoTime(microsOfDay)}`
  return withZone ? `${text}+00:00` : text
}
