// Ordering and truncation of column bounds as Iceberg defines them, for the metrics gathered while
// writing. The rules themselves live in shared/iceberg/values (one implementation for the writer,
// the manifests and the transforms); this file only dispatches by the Parquet layout's value order.
import type { IcebergValue } from '../iceberg/index.ts'
import { compareBytes, compareUtf8, truncateLowerBound, truncateUpperBound } from '../iceberg/values/index.ts'
import type { ValueOrder } from './schema.ts'

export { compareBytes, compareUtf8 }

export function compareValues(order: ValueOrder, left: IcebergValue, right: IcebergValue): number {
  switch (order) {
    case 'string':
      return compareUtf8(left as string, right as string)
    case 'bytes':
      return compareBytes(left as Uint8Array, right as Uint8Array)
    default:
      return (left as number) < (right as number) ? -1 : (left as number) > (right as number) ? 1 : 0
  }
}

/** A valid lower bound of at most `length` code points (strings) or bytes (binary). */
export function truncateMin<T extends string | Uint8Array>(value: T, length: number): T {
  return (typeof value === 'string' ? truncateLowerBound(value, length) : truncateLowerBound(value, length)) as T
}

/** A valid upper bound of at most `length` code points or bytes; undefined when none exists. */
export function truncateMax<T extends string | Uint8Array>(value: T, length: number): T | undefined {
  const bound = typeof value === 'string' ? truncateUpperBound(value, length) : truncateUpperBound(value, length)
  return (bound ?? undefined) as T | undefined
}
