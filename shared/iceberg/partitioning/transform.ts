// Iceberg's partition transforms: their spec strings, result types, and compiled functions from a
// source value to a partition value (null in, null out).
import { FloeError } from '../../errors.ts'
import type { IcebergValue, PrimitiveType } from '../types.ts'
import { decimalParams } from '../types.ts'
import { daysFromMicros, hoursFromMicros, monthsFromDays, truncateLowerBound, yearsFromDays } from '../values/index.ts'
import { compileHash } from './bucket.ts'

export type Transform =
  | { readonly kind: 'identity' | 'year' | 'month' | 'day' | 'hour' | 'void' }
  | { readonly kind: 'bucket'; readonly buckets: number }
  | { readonly kind: 'truncate'; readonly width: number }

/** A source value -> its partition value. null -> null. */
export type TransformFunction = (value: IcebergValue) => IcebergValue

const INT_MAX = 2147483647

/** Parses the spec's transform string: identity, year, month, day, hour, void, bucket[N], truncate[W]. */
export function parseTransform(text: string): Transform {
  switch (text) {
    case 'identity':
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
    case 'void':
      return { kind: text }
  }
  const match = /^(bucket|truncate)\[(\d+)\]$/.exec(text)
  const parameter = match ? Number(match[2]) : 0
  if (match && parameter >= 1 && parameter <= INT_MAX) {
    return match[1] === 'bucket' ? { kind: 'bucket', buckets: parameter } : { kind: 'truncate', width: parameter }
  }
  throw new FloeError(
    'CONFIG_INVALID',
    `unknown partition transform ${JSON.stringify(text)}: expected identity, year, month, day, hour, void, bucket[N] or truncate[W] with N, W from 1 to ${INT_MAX}`,
  )
}

/** The spec's string form of a transform. */
export function transformToString(transform: Transform): string {
  switch (transform.kind) {
    case 'bucket':
      return `bucket[${transform.buckets}]`
    case 'truncate':
      return `truncate[${transform.width}]`
    default:
      return transform.kind
  }
}

type SourceKind = 'integer' | 'long' | 'decimal' | 'string' | 'binary' | 'date' | 'timestamp' | 'other'

function sourceKind(type: PrimitiveType): SourceKind {
  switch (type) {
    case 'int':
      return 'integer'
    case 'long':
      return 'long'
    case 'string':
      return 'string'
    case 'binary':
      return 'binary'
    case 'date':
      return 'date'
    case 'timestamp':
    case 'timestamptz':
      return 'timestamp'
  }
  return decimalParams(type) ? 'decimal' : 'other'
}

/** Whether the spec allows the transform on a source of this type. */
export function canTransform(transform: Transform, source: PrimitiveType): boolean {
  const kind = sourceKind(source)
  switch (transform.kind) {
    case 'identity':
    case 'void':
      return true
    case 'bucket':
      return compileHash(source) !== undefined
    case 'truncate':
      return kind === 'integer' || kind === 'long' || kind === 'decimal' || kind === 'string' || kind === 'binary'
    case 'year':
    case 'month':
    case 'day':
      return kind === 'date' || kind === 'timestamp'
    case 'hour':
      return kind === 'timestamp'
  }
}

function refuse(transform: Transform, source: PrimitiveType): FloeError {
  return new FloeError(
    'CONFIG_INVALID',
    `partition transform ${transformToString(transform)} does not apply to ${source}`,
  )
}

/**
 * The type of the partition values: int for bucket, year, month and hour; the source type for
 * identity, truncate and void. For day the spec's table says int, while Iceberg's Java and Python
 * implementations declare `date` (same physical value, days from 1970-01-01) and write it so into
 * manifests and REST payloads; Floe follows them, so readers show a date and the values match.
 */
export function transformResultType(transform: Transform, source: PrimitiveType): PrimitiveType {
  if (!canTransform(transform, source)) throw refuse(transform, source)
  switch (transform.kind) {
    case 'bucket':
    case 'year':
    case 'month':
    case 'hour':
      return 'int'
    case 'day':
      return 'date'
    default:
      return source
  }
}

/** Compiles the transform for a source type; throws CONFIG_INVALID where the spec does not allow it. */
export function compileTransform(transform: Transform, source: PrimitiveType): TransformFunction {
  if (!canTransform(transform, source)) throw refuse(transform, source)
  const fromDate = sourceKind(source) === 'date'
  switch (transform.kind) {
    case 'identity':
      return (value) => value
    case 'void':
      return () => null
    case 'year':
      return fromDate
        ? (value) => (value === null ? null : yearsFromDays(value as number))
        : (value) => (value === null ? null : yearsFromDays(daysFromMicros(value as bigint)))
    case 'month':
      return fromDate
        ? (value) => (value === null ? null : monthsFromDays(value as number))
        : (value) => (value === null ? null : monthsFromDays(daysFromMicros(value as bigint)))
    case 'day':
      return fromDate ? (value) => value : (value) => (value === null ? null : daysFromMicros(value as bigint))
    case 'hour':
      return (value) => (value === null ? null : hoursFromMicros(value as bigint))
    case 'bucket': {
      const hash = compileHash(source)!
      const buckets = transform.buckets
      return (value) => (value === null ? null : (hash(value) & INT_MAX) % buckets)
    }
    case 'truncate':
      return compileTruncate(transform.width, source)
  }
}

/**
 * truncate[W]: integers down to a multiple of W (floor, so -1 -> -10 for W=10); decimals the same
 * on the unscaled value (W counts in units of the scale: W=50 at scale 2 is 0.50); strings to W
 * code points; binary to W bytes.
 */
function compileTruncate(width: number, source: PrimitiveType): TransformFunction {
  switch (sourceKind(source)) {
    case 'integer':
      // `| 0` wraps like Java's int arithmetic, the one case being near -2^31 with a wide W.
      return (value) =>
        value === null ? null : ((value as number) - ((((value as number) % width) + width) % width)) | 0
    case 'long': {
      const w = BigInt(width)
      return (value) =>
        value === null ? null : BigInt.asIntN(64, (value as bigint) - ((((value as bigint) % w) + w) % w))
    }
    case 'decimal': {
      const w = BigInt(width)
      return (value) => (value === null ? null : (value as bigint) - ((((value as bigint) % w) + w) % w))
    }
    case 'string':
      return (value) => (value === null ? null : truncateLowerBound(value as string, width))
    default:
      return (value) => (value === null ? null : (value as Uint8Array).slice(0, width))
  }
}

/** Applies a transform once (compile it for repeated use). */
export function applyTransform(transform: Transform, source: PrimitiveType, value: IcebergValue): IcebergValue {
  return compileTransform(transform, source)(value)
}

/** The spec's 32-bit hash of a value (Appendix B); e.g. int 34 -> 2017239379. */
export function bucketHash(type: PrimitiveType, value: IcebergValue): number {
  const hash = compileHash(type)
  if (!hash) throw new FloeError('CONFIG_INVALID', `the bucket transform does not apply to ${type}`)
  return hash(value)
}
