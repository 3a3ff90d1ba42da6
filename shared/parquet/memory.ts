// What an open data file holds in V8's memory, as opposed to the Parquet size of its rows (the
// estimate in schema.ts that cuts row groups). A worker's memory cap (maxOpenSegmentMemoryBytes)
// is about the first: buffered rows cost their values' heap objects plus a slot in a column
// array, and every open file costs a writer, encoders and footer metadata whether it holds rows
// or not.
//
// Calibrated on Node 22 x64 (no pointer compression) with `node --expose-gc`, heap used after a
// full collection, per value pushed into an array the way the writer buffers a column:
//   null, boolean, small int   10 B   the array slot (8) and the array's growth slack
//   double                     24 B   a HeapNumber per value (the column array holds nulls too)
//   bigint (long, timestamp)   34 B   a one-digit BigInt
//   string of n >= 10 chars    n + 30 B   header 16, rounded to 8; JSON.parse shares strings of
//                              fewer than 10 characters (it internalizes them), so those cost
//                              only their slot
//   list of n                  72 + 8n B   the array and its backing store, plus the elements
//   struct of n fields         24 + 8n B   plus the fields' values
//   Uint8Array                 216 + length B   the view, its buffer object and backing store
// and per open file 10-15 KiB of writer state before any row, plus about 1 KiB of footer
// metadata (chunk statistics, page indexes) per leaf column per row group written
// (bench/open-files-memory.bench.ts, the participant benchmark's 12-column 1 KB event: 339-391 B
// a row measured, 382 B estimated; 23 MiB measured and estimated for 1,000 files before any row).
import { type IcebergType, type IcebergValue, isPrimitive } from '../iceberg/index.ts'

const SLOT = 10
/** JSON.parse gives strings shorter than this one shared copy. */
const SHARED_STRING_LENGTH = 10
const STRING_HEADER = 20
const HEAP_NUMBER = 14
const BIGINT = 24
const ARRAY = 72
const OBJECT = 24
const TYPED_ARRAY = 216
const MAP = 120
const MAP_ENTRY = 32

/** Heap of an open writer before any row: the writer, its encoders, metrics and schema state. */
export const OPEN_FILE_HEAP_BYTES = 16 * 1024
/** Footer metadata kept until the file closes, per leaf column and row group written. */
export const ROW_GROUP_HEAP_BYTES_PER_LEAF = 1024

export type HeldEstimate = { fixed: number } | { estimate: (value: IcebergValue) => number }

/** Bytes one buffered value of a top-level column holds, slot included. */
export function heldEstimateOf(type: IcebergType): HeldEstimate {
  if (isPrimitive(type)) {
    const fixed = fixedHeld(type)
    if (fixed !== undefined) return { fixed: SLOT + fixed }
  }
  const measure = valueHeld(type)
  return { estimate: (value) => SLOT + measure(value) }
}

/** Beyond the slot, for types whose values all cost the same; undefined for the others. */
function fixedHeld(type: string): number | undefined {
  switch (type) {
    case 'boolean':
    case 'int':
    case 'date':
      return 0
    case 'float':
    case 'double':
      return HEAP_NUMBER
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return BIGINT
    default:
      return undefined
  }
}

/** Beyond the slot that holds it. */
function valueHeld(type: IcebergType): (value: IcebergValue) => number {
  if (isPrimitive(type)) {
    const fixed = fixedHeld(type)
    if (fixed !== undefined) return (value) => (value === null || value === undefined ? 0 : fixed)
    return primitiveHeld
  }
  if (type.type === 'struct') {
    const children = type.fields.map((field) => ({ name: field.name, measure: valueHeld(field.type) }))
    const base = OBJECT + 8 * children.length
    return (value) => {
      if (value === null || typeof value !== 'object') return 0
      const struct = value as Record<string, IcebergValue>
      let total = base
      for (const child of children) total += child.measure(struct[child.name] ?? null)
      return total
    }
  }
  if (type.type === 'list') {
    const element = valueHeld(type.element)
    return (value) => {
      if (!Array.isArray(value)) return 0
      let total = ARRAY
      for (const item of value) total += 8 + element(item)
      return total
    }
  }
  const key = valueHeld(type.key)
  const item = valueHeld(type.value)
  return (value) => {
    if (!(value instanceof Map)) return 0
    let total = MAP
    for (const [k, v] of value) total += MAP_ENTRY + key(k) + item(v)
    return total
  }
}

/** Strings, binary, uuid, fixed, decimal: by what the value is. */
function primitiveHeld(value: IcebergValue): number {
  if (typeof value === 'string') return value.length < SHARED_STRING_LENGTH ? 0 : STRING_HEADER + value.length
  if (value instanceof Uint8Array) return TYPED_ARRAY + value.byteLength
  if (typeof value === 'bigint') return BIGINT
  if (typeof value === 'number') return HEAP_NUMBER
  return 0
}
