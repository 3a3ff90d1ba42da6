// The partition tuple of a manifest (data_file.partition, field id 102): each partition field's
// result type (spec "Partition Transforms"), its Avro schema (spec Appendix A, named like Java's
// AvroSchemaUtil so files from either look alike), the conversion of its in-memory value
// (types.ts) to and from avsc's, and the order used for the manifest list's partition summaries.
import { FloeError } from '../../errors.ts'
import {
  decimalParams,
  fixedLength,
  type IcebergType,
  type IcebergValue,
  type NestedField,
  type PartitionField,
  type PartitionSpec,
  type PrimitiveType,
  type Schema,
} from '../types.ts'

export interface PartitionFieldCodec {
  field: PartitionField
  resultType: PrimitiveType
  /** Avro record field of the r102 struct (optional: union with null, default null). */
  avroField: Record<string, unknown>
  toAvro(value: IcebergValue): unknown
  /** Total order of non-null, non-NaN values of `resultType` (spec: -0.0 sorts before +0.0). */
  compare(a: IcebergValue, b: IcebergValue): number
  isNaN(value: IcebergValue): boolean
}

function findSourceField(fields: NestedField[], id: number): NestedField | undefined {
  for (const field of fields) {
    if (field.id === id) return field
    // Sources may be nested in structs only, never in lists or maps (spec "Partitioning").
    if (typeof field.type === 'object' && field.type.type === 'struct') {
      const found = findSourceField(field.type.fields, id)
      if (found) return found
    }
  }
  return undefined
}

const temporal = new Set<IcebergType>(['date', 'timestamp', 'timestamptz'])

export function partitionResultType(schema: Schema, field: PartitionField): PrimitiveType {
  const source = findSourceField(schema.fields, field['source-id'])
  if (!source || typeof source.type !== 'string') {
    throw new FloeError('CONFIG_INVALID', `partition field ${field.name} has no primitive source column`, {
      details: { sourceId: field['source-id'] },
    })
  }
  const sourceType = source.type
  const transform = field.transform
  if (transform === 'identity' || transform === 'void' || transform.startsWith('truncate[')) return sourceType
  if (transform.startsWith('bucket[')) return 'int'
  if (transform === 'year' || transform === 'month' || transform === 'day') {
    if (!temporal.has(sourceType)) throw badTransform(field, sourceType)
    return transform === 'day' ? 'date' : 'int'
  }
  if (transform === 'hour') {
    if (sourceType !== 'timestamp' && sourceType !== 'timestamptz') throw badTransform(field, sourceType)
    return 'int'
  }
  throw badTransform(field, sourceType)
}

function badTransform(field: PartitionField, sourceType: string): FloeError {
  return new FloeError('CONFIG_INVALID', `partition transform ${field.transform} is not supported on ${sourceType}`, {
    details: { partitionField: field.name, transform: field.transform, sourceType },
  })
}

/** Java's AvroSchemaUtil.sanitize, restricted to ASCII as the Avro name grammar is. */
export function avroName(name: string): string {
  let out = ''
  for (let i = 0; i < name.length; i += 1) {
    const char = name[i] as string
    if (/[A-Za-z_]/.test(char) || (i > 0 && /[0-9]/.test(char))) out += char
    else if (/[0-9]/.test(char)) out += `_${char}`
    else out += `_x${char.charCodeAt(0).toString(16).toUpperCase()}`
  }
  return out
}

/** Fewest bytes whose two's complement holds every unscaled value of `precision` digits. */
export function decimalBytes(precision: number): number {
  const limit = 10n ** BigInt(precision)
  let bytes = 1
  while (2n ** BigInt(8 * bytes - 1) < limit) bytes += 1
  return bytes
}

/** Avro schema of a primitive; `named` tracks fixed names already defined in this schema. */
export function avroPrimitive(type: PrimitiveType, named: Set<string>): unknown {
  const fixed = (name: string, size: number, extra: Record<string, unknown>): unknown => {
    if (named.has(name)) return name // a named type is defined once, then referenced
    named.add(name)
    return { type: 'fixed', name, size, ...extra }
  }
  switch (type) {
    case 'boolean':
    case 'int':
    case 'long':
    case 'float':
    case 'double':
    case 'string':
      return type
    case 'binary':
      return 'bytes'
    case 'date':
      return { type: 'int', logicalType: 'date' }
    case 'time':
      return { type: 'long', logicalType: 'time-micros' }
    case 'timestamp':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': false }
    case 'timestamptz':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true }
    case 'uuid':
      return fixed('uuid_fixed', 16, { logicalType: 'uuid' })
  }
  const decimal = decimalParams(type)
  if (decimal) {
    const { precision, scale } = decimal
    return fixed(`decimal_${precision}_${scale}`, decimalBytes(precision), { logicalType: 'decimal', precision, scale })
  }
  const length = fixedLength(type)
  if (length !== undefined) return fixed(`fixed_${length}`, length, {})
  throw new FloeError('CONFIG_INVALID', `type ${type} cannot be a partition value`)
}

function bufferOf(value: Uint8Array): Buffer {
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength)
}

/** Unscaled decimal to a fixed-size two's-complement big-endian buffer. */
export function decimalToFixed(unscaled: bigint, size: number): Buffer {
  const out = Buffer.alloc(size)
  let rest = BigInt.asUintN(size * 8, unscaled)
  for (let i = size - 1; i >= 0; i -= 1) {
    out[i] = Number(rest & 0xffn)
    rest >>= 8n
  }
  return out
}

export function fixedToDecimal(bytes: Uint8Array): bigint {
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  return BigInt.asIntN(bytes.length * 8, value)
}

function compareNumbers(a: number, b: number): number {
  if (a < b) return -1
  if (a > b) return 1
  // Equal as numbers; only the signs of zero can still differ.
  return Object.is(a, -0) && Object.is(b, 0) ? -1 : Object.is(a, 0) && Object.is(b, -0) ? 1 : 0
}

function compareBigints(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Unicode code point order, which is UTF-8 byte order; UTF-16 unit order differs above U+FFFF. */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i += 1) {
    const x = a.codePointAt(i) as number
    const y = b.codePointAt(i) as number
    if (x !== y) return x < y ? -1 : 1
    if (x > 0xffff) i += 1
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i += 1) {
    const x = a[i] as number
    const y = b[i] as number
    if (x !== y) return x < y ? -1 : 1
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0
}

function invalid(field: PartitionField, type: PrimitiveType, value: IcebergValue): FloeError {
  return new FloeError('INVARIANT_BROKEN', `partition value of ${field.name} is not a ${type}`, {
    details: { partitionField: field.name, type, valueType: typeof value },
  })
}

export function partitionFieldCodec(schema: Schema, field: PartitionField, named: Set<string>): PartitionFieldCodec {
  const resultType = partitionResultType(schema, field)
  const name = avroName(field.name)
  const avroField: Record<string, unknown> = {
    name,
    type: ['null', avroPrimitive(resultType, named)],
    default: null,
    'field-id': field['field-id'],
  }
  if (name !== field.name) avroField['iceberg-field-name'] = field.name
  /** Checks a non-null value's JS type, then converts it to what avsc writes. */
  const converter =
    (accepts: (v: IcebergValue) => boolean, convert: (v: IcebergValue) => unknown = (v) => v) =>
    (v: IcebergValue): unknown => {
      if (v === null) return null
      if (!accepts(v)) throw invalid(field, resultType, v)
      return convert(v)
    }
  const base = { field, resultType, avroField, isNaN: (_: IcebergValue) => false }
  switch (resultType) {
    case 'boolean':
      return {
        ...base,
        toAvro: converter((v) => typeof v === 'boolean'),
        compare: (a, b) => Number(a) - Number(b),
      }
    case 'int':
    case 'date':
    case 'float':
    case 'double':
      return {
        ...base,
        isNaN: (v) => typeof v === 'number' && Number.isNaN(v),
        toAvro: converter((v) => typeof v === 'number'),
        compare: (a, b) => compareNumbers(a as number, b as number),
      }
    case 'string':
      return {
        ...base,
        toAvro: converter((v) => typeof v === 'string'),
        compare: (a, b) => compareStrings(a as string, b as string),
      }
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return {
        ...base,
        toAvro: converter((v) => typeof v === 'bigint'),
        compare: (a, b) => compareBigints(a as bigint, b as bigint),
      }
  }
  const decimal = decimalParams(resultType)
  if (decimal) {
    const size = decimalBytes(decimal.precision)
    return {
      ...base,
      toAvro: converter(
        (v) => typeof v === 'bigint',
        (v) => decimalToFixed(v as bigint, size),
      ),
      compare: (a, b) => compareBigints(a as bigint, b as bigint),
    }
  }
  // uuid, fixed[L], binary: bytes, in unsigned lexicographic order.
  const size = resultType === 'uuid' ? 16 : fixedLength(resultType)
  return {
    ...base,
    toAvro: converter(
      (v) => v instanceof Uint8Array && (size === undefined || v.length === size),
      (v) => bufferOf(v as Uint8Array),
    ),
    compare: (a, b) => compareBytes(a as Uint8Array, b as Uint8Array),
  }
}

export function partitionCodecs(schema: Schema, spec: PartitionSpec, named: Set<string>): PartitionFieldCodec[] {
  return spec.fields.map((field) => partitionFieldCodec(schema, field, named))
}

/** Named Avro types (fixed, records) of a writer schema, so references by name resolve. */
export function collectNamedTypes(schema: unknown, into = new Map<string, Record<string, unknown>>()): typeof into {
  if (Array.isArray(schema)) {
    for (const branch of schema) collectNamedTypes(branch, into)
  } else if (typeof schema === 'object' && schema !== null) {
    const node = schema as Record<string, unknown>
    if (typeof node.name === 'string' && (node.type === 'fixed' || node.type === 'record')) into.set(node.name, node)
    if (Array.isArray(node.fields))
      for (const field of node.fields) collectNamedTypes((field as { type: unknown }).type, into)
    if (node.items !== undefined) collectNamedTypes(node.items, into)
    if (node.values !== undefined) collectNamedTypes(node.values, into)
    if (typeof node.type === 'object') collectNamedTypes(node.type, into)
  }
  return into
}

/**
 * How to read one partition value from avsc, by the writer's Avro field type, so manifests written
 * by any engine (and with any historic spec) read back without the table schema: bytes become
 * Uint8Array views, a decimal's fixed bytes become its unscaled bigint, the rest is already the
 * in-memory value (longs are BigInt).
 */
export function partitionValueReader(
  avroType: unknown,
  named: Map<string, Record<string, unknown>>,
): (value: unknown) => IcebergValue {
  let branch = Array.isArray(avroType) ? avroType.find((t) => t !== 'null') : avroType
  if (typeof branch === 'string') branch = named.get(branch) ?? branch
  const isDecimal =
    typeof branch === 'object' && branch !== null && (branch as { logicalType?: unknown }).logicalType === 'decimal'
  return (value) => {
    if (value === null || value === undefined) return null
    if (Buffer.isBuffer(value)) {
      const bytes = new Uint8Array(value.buffer, value.byteOffset, value.length)
      return isDecimal ? fixedToDecimal(bytes) : bytes
    }
    return value as IcebergValue
  }
}
