// The order Iceberg uses for a column's lower and upper bounds, and the truncation of string and
// binary bounds (Iceberg's default metrics mode is truncate(16)).
import type { IcebergValue, PrimitiveType } from '../types.ts'
import { decimalParams, fixedLength } from '../types.ts'

/** Iceberg's default metrics mode truncates string and binary bounds to this many characters/bytes. */
export const DEFAULT_BOUND_LENGTH = 16

/**
 * Strings in Unicode code point order, which is UTF-8 byte order. JavaScript's `<` compares UTF-16
 * code units and puts U+E000..U+FFFF after astral characters (surrogates are 0xD800..0xDFFF);
 * this shifts the units so surrogates sort above the rest of the BMP. No allocation.
 */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    let x = a.charCodeAt(i)
    let y = b.charCodeAt(i)
    if (x === y) continue
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000
    }
    return x - y
  }
  return a.length - b.length
}

/** Unsigned lexicographic byte order, a shorter prefix first. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const d = a[i]! - b[i]!
    if (d !== 0) return d
  }
  return a.length - b.length
}

/** Java's Double.compare: -0 before 0, NaN after +Infinity (the spec's float sort order). */
function compareFloats(a: number, b: number): number {
  if (a < b) return -1
  if (a > b) return 1
  if (a === b) return a !== 0 ? 0 : (Object.is(a, -0) ? 0 : 1) - (Object.is(b, -0) ? 0 : 1)
  return (Number.isNaN(a) ? 1 : 0) - (Number.isNaN(b) ? 1 : 0)
}

function compareNumbers(a: number, b: number): number {
  return a - b
}

function compareBigints(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function compareBooleans(a: boolean, b: boolean): number {
  return (a ? 1 : 0) - (b ? 1 : 0)
}

type Comparator = (a: IcebergValue, b: IcebergValue) => number

function nullsFirst<T>(compare: (a: T, b: T) => number): Comparator {
  return (a, b) => (a === null ? (b === null ? 0 : -1) : b === null ? 1 : compare(a as T, b as T))
}

/**
 * The comparator Iceberg orders a primitive type's values by (for lower/upper bounds): numbers and
 * temporal values numerically (decimals by unscaled value, the scale being fixed), strings by code
 * point, uuid, fixed and binary as unsigned bytes, false before true. null sorts first.
 */
export function compareValues(type: PrimitiveType): Comparator {
  switch (type) {
    case 'boolean':
      return nullsFirst(compareBooleans)
    case 'int':
    case 'date':
      return nullsFirst(compareNumbers)
    case 'float':
    case 'double':
      return nullsFirst(compareFloats)
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return nullsFirst(compareBigints)
    case 'string':
      return nullsFirst(compareUtf8)
    case 'uuid':
    case 'binary':
      return nullsFirst(compareBytes)
  }
  if (decimalParams(type)) return nullsFirst(compareBigints)
  if (fixedLength(type) !== undefined) return nullsFirst(compareBytes)
  throw new TypeError(`not an Iceberg primitive type: ${type}`)
}

/** UTF-16 index just past the first `count` code points of `text`. */
function codePointEnd(text: string, count: number): number {
  let index = 0
  for (let n = 0; n < count && index < text.length; n++) {
    const c = text.charCodeAt(index)
    index += c >= 0xd800 && c <= 0xdbff && index + 1 < text.length ? 2 : 1
  }
  return index
}

/**
 * A lower bound no longer than `length`: the first `length` code points of a string (never a half
 * surrogate pair) or bytes of a binary value. A prefix never sorts after the value.
 */
export function truncateLowerBound(value: string, length?: number): string
export function truncateLowerBound(value: Uint8Array, length?: number): Uint8Array
export function truncateLowerBound(value: string | Uint8Array, length = DEFAULT_BOUND_LENGTH): string | Uint8Array {
  if (typeof value === 'string') return value.length <= length ? value : value.slice(0, codePointEnd(value, length))
  return value.length <= length ? value : value.slice(0, length)
}

/**
 * An upper bound no longer than `length`: the value itself when short enough, else its prefix with
 * the last code point (byte) that can be incremented incremented and what follows it dropped, as
 * Iceberg's Java writer does. null when no such bound exists (all U+10FFFF, or all 0xFF): then
 * the file gets no upper bound for the column. Incrementing skips the surrogate range, which has
 * no UTF-8 form (U+D7FF -> U+E000).
 */
export function truncateUpperBound(value: string, length?: number): string | null
export function truncateUpperBound(value: Uint8Array, length?: number): Uint8Array | null
export function truncateUpperBound(
  value: string | Uint8Array,
  length = DEFAULT_BOUND_LENGTH,
): string | Uint8Array | null {
  if (typeof value !== 'string') {
    if (value.length <= length) return value
    for (let i = length - 1; i >= 0; i--) {
      if (value[i]! < 0xff) {
        const bound = value.slice(0, i + 1)
        bound[i]! += 1
        return bound
      }
    }
    return null
  }
  if (value.length <= length) return value
  const end = codePointEnd(value, length)
  if (end === value.length) return value
  const codePoints = Array.from(value.slice(0, end))
  for (let i = codePoints.length - 1; i >= 0; i--) {
    let next = codePoints[i]!.codePointAt(0)! + 1
    if (next === 0xd800) next = 0xe000
    if (next <= 0x10ffff) return codePoints.slice(0, i).join('') + String.fromCodePoint(next)
  }
  return null
}
