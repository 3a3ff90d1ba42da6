// Column-chunk statistics (min, max, null and NaN counts) of top-level primitive columns, computed
// here instead of by hyparquet-writer. Its generic routine re-checks every value's JS type and
// representation on each comparison and cost about 15% of the write time on the benchmark's
// event shape; a loop specialized per column type does the same in a fraction of that (see
// bench/parquet-writer.bench.ts). Nested columns keep hyparquet-writer's statistics, since only
// it sees their leaf values. The result has hyparquet-writer's own shape, and its footer writer
// serializes it the same way.
import type { IcebergValue } from '../iceberg/index.ts'
import { compareBytes, compareUtf8 } from './bounds.ts'
import type { LeafColumn } from './schema.ts'

export interface ChunkStatistics {
  min_value?: IcebergValue
  max_value?: IcebergValue
  null_count: bigint
  nan_count?: bigint
}

export type StatisticsOf = (values: readonly IcebergValue[]) => ChunkStatistics

export function statisticsFunctionFor(leaf: LeafColumn): StatisticsOf {
  if (leaf.isFloatingPoint) return floatingPointStatistics
  switch (leaf.order) {
    case 'string':
      return stringStatistics
    case 'bytes':
      return (values) => orderedStatistics(values, compareBytes as Compare)
    default:
      // numbers, bigints and booleans order with < and > directly
      return primitiveStatistics
  }
}

type Compare = (left: IcebergValue, right: IcebergValue) => number

function primitiveStatistics(values: readonly IcebergValue[]): ChunkStatistics {
  let nulls = 0
  let min: number | bigint | boolean | undefined
  let max: number | bigint | boolean | undefined
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as number | bigint | boolean | null
    if (value === null) nulls++
    else if (min === undefined || max === undefined) min = max = value
    else if (value < min) min = value
    else if (value > max) max = value
  }
  return { min_value: min, max_value: max, null_count: BigInt(nulls) }
}

function floatingPointStatistics(values: readonly IcebergValue[]): ChunkStatistics {
  let nulls = 0
  let nans = 0
  let min = Number.POSITIVE_INFINITY
  let max = Number.NEGATIVE_INFINITY
  let seen = false
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as number | null
    if (value === null) nulls++
    else if (Number.isNaN(value))
      nans++ // counted, never a bound
    else {
      seen = true
      if (value < min) min = value
      if (value > max) max = value
    }
  }
  if (!seen) return { null_count: BigInt(nulls), nan_count: BigInt(nans) }
  // Parquet's rule for signed zeros: a zero minimum is written as -0, a zero maximum as +0
  return {
    min_value: min === 0 ? -0 : min,
    max_value: max === 0 ? 0 : max,
    null_count: BigInt(nulls),
    nan_count: BigInt(nans),
  }
}

/**
 * JavaScript's native `<` orders strings by UTF-16 code units, which differs from UTF-8 byte order
 * only where, at the first difference, one string has a surrogate (U+D800..DFFF) and the other a
 * character in U+E000..FFFF. Against a current min or max made only of characters below U+D800 no
 * such pair can occur, so the native comparison (several times faster) is exact there; the
 * careful comparison runs only against a min or max that holds such characters.
 */
const highCharacters = /[\uD800-\uFFFF]/

function stringStatistics(values: readonly IcebergValue[]): ChunkStatistics {
  let nulls = 0
  let min: string | undefined
  let max: string | undefined
  let minIsLow = true
  let maxIsLow = true
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as string | null
    if (value === null) nulls++
    else if (min === undefined || max === undefined) {
      min = max = value
      minIsLow = maxIsLow = !highCharacters.test(value)
    } else if (minIsLow ? value < min : compareUtf8(value, min) < 0) {
      min = value
      minIsLow = !highCharacters.test(value)
    } else if (maxIsLow ? value > max : compareUtf8(value, max) > 0) {
      max = value
      maxIsLow = !highCharacters.test(value)
    }
  }
  return { min_value: min, max_value: max, null_count: BigInt(nulls) }
}

function orderedStatistics(values: readonly IcebergValue[], compare: Compare): ChunkStatistics {
  let nulls = 0
  let min: IcebergValue | undefined
  let max: IcebergValue | undefined
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as IcebergValue
    if (value === null) nulls++
    else if (min === undefined || max === undefined) min = max = value
    else if (compare(value, min) < 0) min = value
    else if (compare(value, max) > 0) max = value
  }
  return { min_value: min, max_value: max, null_count: BigInt(nulls) }
}
