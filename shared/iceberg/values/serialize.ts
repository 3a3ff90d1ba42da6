// The spec's single-value serializations (Appendix D): binary, for manifest lower/upper bounds, and
// JSON, for partition values and defaults in metadata and REST payloads. Values are the in-memory
// IcebergValue forms of types.ts.
import { FloeError } from '../../errors.ts'
import type { IcebergType, IcebergValue, PrimitiveType, StructValue } from '../types.ts'
import { decimalParams, fixedLength, isPrimitive } from '../types.ts'
import { decodeHex, encodeHex, formatUuid, parseUuid } from './bytes.ts'
import {
  formatIsoDate,
  formatIsoTime,
  formatIsoTimestamp,
  MICROS_PER_DAY,
  parseIsoDate,
  parseIsoTime,
  parseIsoTimestamp,
} from './calendar.ts'
import { decimalFromBytes, decimalToBytes, formatDecimalPlain, parseDecimalText } from './decimal.ts'

function invalid(type: IcebergType, value: unknown, why: string): FloeError {
  const shown =
    typeof value === 'bigint' ? `${value}n` : value instanceof Uint8Array ? `${value.length} bytes` : String(value)
  const name = isPrimitive(type) ? type : type.type
  return new FloeError('CONVERSION_FAILED', `single value of ${name}: ${why} (${shown.slice(0, 60)})`)
}

// ---- binary ----------------------------------------------------------------------------------

const utf8 = new TextEncoder()
const utf8Strict = new TextDecoder('utf-8', { fatal: true })

function littleEndian(size: 4 | 8, write: (view: DataView) => void): Uint8Array {
  const bytes = new Uint8Array(size)
  write(new DataView(bytes.buffer))
  return bytes
}

/** A primitive value in the spec's binary single-value form (a new array; never shares memory). */
export function toBinarySingleValue(type: PrimitiveType, value: IcebergValue): Uint8Array {
  switch (type) {
    case 'boolean':
      if (typeof value !== 'boolean') throw invalid(type, value, 'not a boolean')
      return Uint8Array.of(value ? 1 : 0)
    case 'int':
    case 'date':
      // DataView would silently wrap a value outside 32 bits.
      if (typeof value !== 'number' || (value | 0) !== value) throw invalid(type, value, 'not a 32-bit integer')
      return littleEndian(4, (view) => view.setInt32(0, value, true))
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      if (typeof value !== 'bigint' || BigInt.asIntN(64, value) !== value)
        throw invalid(type, value, 'not a 64-bit bigint')
      return littleEndian(8, (view) => view.setBigInt64(0, value, true))
    case 'float':
      if (typeof value !== 'number') throw invalid(type, value, 'not a number')
      return littleEndian(4, (view) => view.setFloat32(0, value, true))
    case 'double':
      if (typeof value !== 'number') throw invalid(type, value, 'not a number')
      return littleEndian(8, (view) => view.setFloat64(0, value, true))
    case 'string':
      if (typeof value !== 'string') throw invalid(type, value, 'not a string')
      return utf8.encode(value)
    case 'uuid':
      if (!(value instanceof Uint8Array) || value.length !== 16) throw invalid(type, value, 'not 16 bytes')
      return value.slice()
    case 'binary':
      if (!(value instanceof Uint8Array)) throw invalid(type, value, 'not bytes')
      return value.slice()
  }
  const length = fixedLength(type)
  if (length !== undefined) {
    if (!(value instanceof Uint8Array) || value.length !== length) throw invalid(type, value, `not ${length} bytes`)
    return value.slice()
  }
  if (decimalParams(type)) {
    if (typeof value !== 'bigint') throw invalid(type, value, 'not a bigint unscaled value')
    return decimalToBytes(value)
  }
  throw invalid(type, value, 'not a primitive type')
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/**
 * The inverse of toBinarySingleValue. Also reads bounds written before a type promotion, as the
 * spec's table says: 4 bytes for a long (was int), a double (was float), a timestamp (was date).
 */
export function fromBinarySingleValue(type: PrimitiveType, bytes: Uint8Array): IcebergValue {
  const size = bytes.length
  switch (type) {
    case 'boolean':
      if (size !== 1) break
      return bytes[0] !== 0
    case 'int':
    case 'date':
      if (size !== 4) break
      return view(bytes).getInt32(0, true)
    case 'long':
      if (size === 4) return BigInt(view(bytes).getInt32(0, true))
      if (size !== 8) break
      return view(bytes).getBigInt64(0, true)
    case 'timestamp':
    case 'timestamptz':
      if (size === 4) return BigInt(view(bytes).getInt32(0, true)) * BigInt(MICROS_PER_DAY)
      if (size !== 8) break
      return view(bytes).getBigInt64(0, true)
    case 'time':
      if (size !== 8) break
      return view(bytes).getBigInt64(0, true)
    case 'float':
      if (size !== 4) break
      return view(bytes).getFloat32(0, true)
    case 'double':
      if (size === 4) return view(bytes).getFloat32(0, true)
      if (size !== 8) break
      return view(bytes).getFloat64(0, true)
    case 'string':
      try {
        return utf8Strict.decode(bytes)
      } catch {
        throw invalid(type, bytes, 'not valid UTF-8')
      }
    case 'uuid':
      if (size !== 16) break
      return bytes.slice()
    case 'binary':
      return bytes.slice()
    default: {
      // Any length: a fixed bound written under a truncating metrics mode is a shorter prefix.
      if (fixedLength(type) !== undefined) return bytes.slice()
      if (decimalParams(type) && size > 0) return decimalFromBytes(bytes)
      if (decimalParams(type)) break
      throw invalid(type, bytes, 'not a primitive type')
    }
  }
  throw invalid(type, bytes, `${size} bytes is not a valid length`)
}

// ---- JSON ------------------------------------------------------------------------------------

/** A JSON value as the spec's JSON single-value form has it; longs are bigint to keep all 64 bits. */
export type JsonSingleValue = null | boolean | number | bigint | string | JsonSingleValue[] | JsonSingleObject
export interface JsonSingleObject {
  [key: string]: JsonSingleValue
}

/** Shortest decimal that reads back as this float32 (Java's Float.toString digits). */
function shortestFloat(value: number): number {
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(value.toPrecision(digits))
    if (Math.fround(candidate) === value) return candidate
  }
  return value
}

function nonFinite(value: number): string {
  return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity'
}

/**
 * A value in the spec's JSON single-value form: dates, times and timestamps as ISO text
 * (timestamptz with `+00:00`), decimals as plain text with exactly S decimals, uuid lowercase,
 * binary and fixed as hex, structs keyed by field id, maps as {keys, values}. NaN and infinities,
 * which JSON lacks, become the strings "NaN", "Infinity", "-Infinity" as Jackson writes them.
 */
export function toJsonSingleValue(type: IcebergType, value: IcebergValue): JsonSingleValue {
  if (value === null) return null
  if (!isPrimitive(type)) {
    switch (type.type) {
      case 'struct': {
        if (typeof value !== 'object' || value instanceof Uint8Array || value instanceof Map || Array.isArray(value)) {
          throw invalid(type, value, 'not a struct')
        }
        const object: JsonSingleObject = {}
        for (const field of type.fields)
          object[String(field.id)] = toJsonSingleValue(field.type, value[field.name] ?? null)
        return object
      }
      case 'list':
        if (!Array.isArray(value)) throw invalid(type, value, 'not a list')
        return value.map((element) => toJsonSingleValue(type.element, element))
      case 'map': {
        if (!(value instanceof Map)) throw invalid(type, value, 'not a Map')
        const keys: JsonSingleValue[] = []
        const values: JsonSingleValue[] = []
        for (const [k, v] of value) {
          keys.push(toJsonSingleValue(type.key, k))
          values.push(toJsonSingleValue(type.value, v))
        }
        return { keys, values }
      }
    }
  }
  switch (type) {
    case 'boolean':
    case 'int':
    case 'long':
    case 'string':
      toBinarySingleValue(type, value) // type check only
      return value as boolean | number | bigint | string
    case 'float':
    case 'double':
      if (typeof value !== 'number') throw invalid(type, value, 'not a number')
      if (!Number.isFinite(value)) return nonFinite(value)
      return type === 'float' ? shortestFloat(value) : value
    case 'date':
      if (typeof value !== 'number') throw invalid(type, value, 'not a number')
      return formatIsoDate(value)
    case 'time':
      if (typeof value !== 'bigint') throw invalid(type, value, 'not a bigint')
      return formatIsoTime(Number(value))
    case 'timestamp':
    case 'timestamptz':
      if (typeof value !== 'bigint') throw invalid(type, value, 'not a bigint')
      return formatIsoTimestamp(value, type === 'timestamptz')
    case 'uuid':
      if (!(value instanceof Uint8Array) || value.length !== 16) throw invalid(type, value, 'not 16 bytes')
      return formatUuid(value)
  }
  const decimal = decimalParams(type)
  if (decimal) {
    if (typeof value !== 'bigint') throw invalid(type, value, 'not a bigint unscaled value')
    return formatDecimalPlain(value, decimal.scale)
  }
  return encodeHex(toBinarySingleValue(type, value))
}

/** The JSON text of toJsonSingleValue, with longs printed in full (JSON.stringify rejects bigint). */
export function toJsonSingleValueText(type: IcebergType, value: IcebergValue): string {
  // JSON.stringify(-0) is "0", but -0.0 and 0.0 are different float partitions; Java writes -0.0.
  if ((type === 'float' || type === 'double') && Object.is(value, -0)) return '-0.0'
  return stringify(toJsonSingleValue(type, value))
}

// Written out because JSON.stringify throws on bigint, and its JSON.rawJSON escape hatch is not in
// the ES2023 lib this project compiles against.
function stringify(value: JsonSingleValue): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return `[${value.map(stringify).join(',')}]`
  if (typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, v]) => `${JSON.stringify(key)}:${stringify(v)}`)
      .join(',')}}`
  }
  return typeof value === 'bigint' ? value.toString() : JSON.stringify(value)
}

const longPattern = /^-?\d{1,19}$/

/**
 * The inverse of toJsonSingleValue. A long may come as a number (exact up to 2^53), a bigint or a
 * string of digits (for payloads parsed with JSON.parse, which rounds larger numbers).
 */
export function fromJsonSingleValue(type: IcebergType, json: unknown): IcebergValue {
  if (json === null || json === undefined) return null
  if (!isPrimitive(type)) {
    switch (type.type) {
      case 'struct': {
        if (typeof json !== 'object' || Array.isArray(json)) throw invalid(type, json, 'not an object')
        const object = json as Record<string, unknown>
        const row: StructValue = {}
        for (const field of type.fields) row[field.name] = fromJsonSingleValue(field.type, object[String(field.id)])
        return row
      }
      case 'list':
        if (!Array.isArray(json)) throw invalid(type, json, 'not an array')
        return json.map((element) => fromJsonSingleValue(type.element, element))
      case 'map': {
        const { keys, values } = json as { keys?: unknown; values?: unknown }
        if (!Array.isArray(keys) || !Array.isArray(values) || keys.length !== values.length) {
          throw invalid(type, json, 'not {keys: [...], values: [...]} of equal length')
        }
        const map = new Map<IcebergValue, IcebergValue>()
        for (let i = 0; i < keys.length; i++) {
          map.set(fromJsonSingleValue(type.key, keys[i]), fromJsonSingleValue(type.value, values[i]))
        }
        return map
      }
    }
  }
  return primitiveFromJson(type, json)
}

function primitiveFromJson(type: PrimitiveType, json: unknown): IcebergValue {
  switch (type) {
    case 'boolean':
      if (typeof json === 'boolean') return json
      break
    case 'int':
      if (typeof json === 'number' && Number.isInteger(json) && (json | 0) === json) return json
      break
    case 'long':
      if (typeof json === 'number' && Number.isSafeInteger(json)) return BigInt(json)
      if (typeof json === 'bigint') return BigInt.asIntN(64, json) === json ? json : fail(type, json)
      if (typeof json === 'string' && longPattern.test(json) && BigInt.asIntN(64, BigInt(json)) === BigInt(json)) {
        return BigInt(json)
      }
      break
    case 'float':
    case 'double': {
      const number = typeof json === 'number' ? json : typeof json === 'string' ? specialNumber(json) : undefined
      if (number !== undefined) return type === 'float' ? Math.fround(number) : number
      break
    }
    case 'date': {
      const days = typeof json === 'string' ? parseIsoDate(json) : Number.NaN
      if (!Number.isNaN(days)) return days
      break
    }
    case 'time': {
      const micros = typeof json === 'string' ? parseIsoTime(json) : Number.NaN
      if (!Number.isNaN(micros)) return BigInt(micros)
      break
    }
    case 'timestamp':
    case 'timestamptz': {
      const micros =
        typeof json === 'string' ? parseIsoTimestamp(json, type === 'timestamp' ? 'forbidden' : 'required') : ''
      if (typeof micros === 'bigint') return micros
      break
    }
    case 'string':
      if (typeof json === 'string') return json
      break
    case 'uuid': {
      const bytes = typeof json === 'string' ? parseUuid(json) : undefined
      if (bytes) return bytes
      break
    }
    default: {
      const decimal = decimalParams(type)
      if (decimal && typeof json === 'string') {
        const unscaled = parseDecimalText(json, decimal.precision, decimal.scale)
        if (typeof unscaled === 'bigint') return unscaled
        break
      }
      const bytes = typeof json === 'string' ? decodeHex(json) : undefined
      const length = fixedLength(type)
      if (bytes && (type === 'binary' || bytes.length === length)) return bytes
    }
  }
  return fail(type, json)
}

function specialNumber(text: string): number | undefined {
  if (text === 'NaN') return Number.NaN
  if (text === 'Infinity') return Number.POSITIVE_INFINITY
  if (text === '-Infinity') return Number.NEGATIVE_INFINITY
  return undefined
}

function fail(type: PrimitiveType, json: unknown): never {
  throw invalid(type, json, 'not its JSON single-value form')
}
