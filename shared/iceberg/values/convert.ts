// JSON (as JSON.parse returns it) -> the in-memory IcebergValue of a column, compiled once per
// column so the per-record path does no type dispatch.
//
// The rules, type by type (anything else is CONVERSION_FAILED naming column path, JSON found and
// type expected):
//   boolean      JSON true/false only (no "true" strings; a mapping can say `to_string(...)`).
//   int          a JSON integer in 32-bit range (1.0 is an integer, 1.5 is not).
//   long         a JSON integer that is a safe integer (|n| <= 2^53-1), or a string of digits
//                ("-9223372036854775808"): JSON.parse rounds larger numbers, so they must come as text.
//   float/double a JSON number; also "NaN", "Infinity", "-Infinity" (Jackson's quoted form). float is
//                rounded to 32 bits here, so bounds and the written value agree.
//   decimal(P,S) a JSON number (read from its shortest text: 0.1 is 0.1) or a decimal string ("1.5e3"
//                too). Rejected when it needs more than P digits, or digits beyond S that are not 0.
//   date         "YYYY-MM-DD", or a JSON integer of days since 1970-01-01.
//   time         "HH:MM[:SS[.fraction]]" (digits below the microsecond are truncated).
//   timestamp    "YYYY-MM-DDTHH:MM[:SS[.fraction]]" (or a space for T) without a zone offset;
//   timestamptz  the same with one (Z, ±HH:MM, ±HHMM, ±HH), converted to UTC. Both also take a JSON
//                number since the epoch in `timestampEpochUnit` (default milliseconds; fractions
//                rounded to the microsecond).
//   string       a JSON string that is valid Unicode (no lone surrogates).
//   uuid         canonical 8-4-4-4-12 hex, any case.
//   binary       base64 (standard alphabet, padding optional); fixed[L] the same, exactly L bytes.
//   struct       a JSON object; missing or null optional fields are null, unknown keys are ignored.
//   list         a JSON array.
//   map          a JSON object (keys read as the key type's text form), or an array of {key, value}.
// null or missing: null for an optional column, field, element or value; an error for a required one.
// A bigint input is accepted wherever a JSON integer is (for JSON.parse revivers that make them).
import type { IcebergType, IcebergValue, ListType, MapType, PrimitiveType, StructType, StructValue } from '../types.ts'
import { isPrimitive } from '../types.ts'
import { compilePrimitive, type EpochUnit, type PrimitiveConverter } from './convert-primitive.ts'
import { conversionError, keyExcerpt, withIndex } from './describe.ts'

export type { EpochUnit } from './convert-primitive.ts'

export interface ConverterOptions {
  /** Whether null or missing is an error (the column's `required`). Default false. */
  required?: boolean
  /** Unit of JSON numbers for timestamp and timestamptz columns. Default 'milliseconds'. */
  timestampEpochUnit?: EpochUnit
}

/** Converts one JSON value; throws FloeError CONVERSION_FAILED. */
export type ValueConverter = (json: unknown) => IcebergValue

/**
 * Compiles the converter of one column. `columnName` starts every path in error messages; nested
 * fields append `.name`, list elements `[i]`, map values `["key"]`, map keys `.key`.
 */
export function compileConverter(
  type: IcebergType,
  columnName: string,
  options: ConverterOptions = {},
): ValueConverter {
  return compile(type, columnName, options.required ?? false, options.timestampEpochUnit ?? 'milliseconds')
}

/**
 * The converter of a whole row: a JSON object whose keys are the struct's (schema's) field names.
 * `sparse`: a top-level field that is null or missing is left out of the row instead of set to
 * null (a reader of the row takes a missing key as null). For a wide table whose records each fill
 * a few of its columns: a row then costs what it holds, not a slot per column.
 */
export function compileRowConverter(
  struct: StructType,
  options: Omit<ConverterOptions, 'required'> & { sparse?: boolean } = {},
): (json: unknown) => StructValue {
  const convert = compileStruct(struct, '', options.timestampEpochUnit ?? 'milliseconds', options.sparse ?? false)
  return (json) => {
    if (typeof json === 'object' && json !== null && !Array.isArray(json))
      return convert(json as Record<string, unknown>)
    throw conversionError('(row)', 'struct', json)
  }
}

function typeName(type: IcebergType): string {
  return isPrimitive(type) ? type : type.type
}

function compile(type: IcebergType, path: string, required: boolean, unit: EpochUnit): ValueConverter {
  const convert = compileNonNull(type, path, unit)
  const expected = typeName(type)
  if (required) return (json) => (json === null || json === undefined ? missing(path, expected, json) : convert(json))
  return (json) => (json === null || json === undefined ? null : convert(json))
}

function missing(path: string, expected: string, json: unknown): never {
  throw conversionError(path, expected, json, 'the column is required')
}

function compileNonNull(type: IcebergType, path: string, unit: EpochUnit): PrimitiveConverter {
  if (isPrimitive(type)) return compilePrimitive(type, path, unit)
  switch (type.type) {
    case 'struct': {
      const convert = compileStruct(type, path, unit)
      return (json) => {
        if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
          return convert(json as Record<string, unknown>)
        }
        throw conversionError(path, 'struct', json)
      }
    }
    case 'list':
      return compileList(type, path, unit)
    case 'map':
      return compileMap(type, path, unit)
  }
}

function compileStruct(
  type: StructType,
  path: string,
  unit: EpochUnit,
  sparse = false,
): (json: Record<string, unknown>) => StructValue {
  const names = type.fields.map((field) => field.name)
  const converters = type.fields.map((field) =>
    compile(field.type, path ? `${path}.${field.name}` : field.name, field.required, unit),
  )
  const count = names.length
  // A field named like an Object.prototype member ("constructor", "toString", "__proto__") must not
  // read the inherited member when the event lacks it, nor set the row's prototype: the rare schema
  // that has one takes the guarded path.
  if (names.some((name) => name in Object.prototype)) {
    return (json) => {
      const row: StructValue = {}
      for (let i = 0; i < count; i++) {
        const name = names[i]!
        const value = converters[i]!(Object.hasOwn(json, name) ? json[name] : undefined)
        Object.defineProperty(row, name, { value, enumerable: true, writable: true, configurable: true })
      }
      return row
    }
  }
  if (sparse) {
    return (json) => {
      const row: StructValue = {}
      for (let i = 0; i < count; i++) {
        const name = names[i]!
        const value = converters[i]!(json[name])
        if (value !== null) row[name] = value
      }
      return row
    }
  }
  return (json) => {
    // Fields are added in schema order every time, so every row object shares one hidden class.
    const row: StructValue = {}
    for (let i = 0; i < count; i++) {
      const name = names[i]!
      row[name] = converters[i]!(json[name])
    }
    return row
  }
}

function compileList(type: ListType, path: string, unit: EpochUnit): PrimitiveConverter {
  const convertElement = compile(type.element, `${path}[]`, type['element-required'], unit)
  const at = path.length
  return (json) => {
    if (!Array.isArray(json)) throw conversionError(path, 'list', json)
    const length = json.length
    const list: IcebergValue[] = new Array(length)
    let i = 0
    try {
      for (; i < length; i++) list[i] = convertElement(json[i])
    } catch (error) {
      throw withIndex(error, at, String(i))
    }
    return list
  }
}

function compileMap(type: MapType, path: string, unit: EpochUnit): PrimitiveConverter {
  const convertKey = compile(type.key, `${path}.key`, true, unit)
  const keyFromText = isPrimitive(type.key) ? compileKeyFromText(type.key, convertKey) : undefined
  const convertValue = compile(type.value, `${path}[]`, type['value-required'], unit)
  const at = path.length
  const fromEntries = (entries: unknown[]): Map<IcebergValue, IcebergValue> => {
    const map = new Map<IcebergValue, IcebergValue>()
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
        throw conversionError(`${path}[${i}]`, 'map entry {key, value}', entry)
      }
      const { key, value } = entry as { key?: unknown; value?: unknown }
      const converted = convertKey(key)
      if (map.has(converted)) throw conversionError(`${path}[${i}].key`, typeName(type.key), key, 'duplicate map key')
      try {
        map.set(converted, convertValue(value))
      } catch (error) {
        throw withIndex(error, at, typeof key === 'string' ? keyExcerpt(key) : String(i))
      }
    }
    return map
  }
  return (json) => {
    if (Array.isArray(json)) return fromEntries(json)
    if (typeof json !== 'object' || json === null) throw conversionError(path, 'map', json)
    if (keyFromText === undefined) {
      throw conversionError(path, 'map', json, `keys of type ${typeName(type.key)} need the [{key, value}] form`)
    }
    const object = json as Record<string, unknown>
    const map = new Map<IcebergValue, IcebergValue>()
    for (const key in object) {
      if (!Object.hasOwn(object, key)) continue
      const converted = keyFromText(key)
      try {
        map.set(converted, convertValue(object[key]))
      } catch (error) {
        throw withIndex(error, at, keyExcerpt(key))
      }
    }
    return map
  }
}

/**
 * A JSON object's keys are always strings: read them as the key type's text form. Types whose
 * converter already takes text (string, long, decimal, date, time, timestamps, uuid, binary) use it
 * as is; numbers and booleans are parsed first.
 */
function compileKeyFromText(type: PrimitiveType, convertKey: ValueConverter): ValueConverter {
  switch (type) {
    case 'int':
    case 'float':
    case 'double':
      return (key) => {
        const text = key as string
        // Number('') and Number(' 1') are numbers too; only plain JSON number text counts.
        if (/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(text)) return convertKey(Number(text))
        return convertKey(text)
      }
    case 'boolean':
      return (key) => convertKey(key === 'true' ? true : key === 'false' ? false : key)
    default:
      return convertKey
  }
}
