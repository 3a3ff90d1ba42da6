// A Parquet data file read back as Iceberg rows, one row group at a time, projected onto a table
// schema by field id as the spec's column projection says: a field the file lacks reads as null,
// a renamed one is found by its id, an int column of a long field widens, a float of a double.
// hyparquet decodes the pages; its own conversions are lossy for Iceberg (decimals become JS
// numbers, timestamps Dates of millisecond precision, UUIDs text), so the leaves' annotations are
// taken off before it reads (strings excepted) and the physical values become IcebergValues here,
// by each field's Iceberg type and the annotation the file wrote.
import {
  type FileMetaData,
  parquetMetadata,
  parquetReadObjects,
  parquetSchema,
  type SchemaElement,
  type SchemaTree,
} from 'hyparquet'
import { FloeError } from '../errors.ts'
import {
  decimalParams,
  fixedLength,
  type IcebergType,
  type IcebergValue,
  isPrimitive,
  type PrimitiveType,
  type Schema,
  type StructValue,
} from '../iceberg/index.ts'
import { decimalFromBytes } from '../iceberg/values/index.ts'
import { pageDecompressors } from './codecs.ts'

export interface DataFileReader {
  readonly rowGroupCount: number
  readonly recordCount: number
  /** The rows of one row group, as StructValues of the projected schema. */
  readRowGroup(index: number): Promise<StructValue[]>
}

type Decode = (raw: unknown) => IcebergValue

const textDecoder = new TextDecoder('utf-8', { fatal: true })

/**
 * Opens `bytes` (a whole Parquet file) for reading as rows of `schema`. Refuses, with
 * CONVERSION_FAILED naming the column, a file whose columns cannot be read as the schema's types
 * without loss: a caller such as compaction then leaves that file alone.
 */
export function openDataFileReader(bytes: Uint8Array, schema: Schema, where = 'data file'): DataFileReader {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  const metadata = parquetMetadata(file)
  const root = parquetSchema(metadata)
  const columns: { name: string; fileName: string | undefined; decode: Decode }[] = []
  for (const field of schema.fields) {
    const node = root.children.find((child) => child.element.field_id === field.id)
    if (!node) {
      if (field.required) refuse(where, field.name, 'is required by the table and missing from the file')
      columns.push({ name: field.name, fileName: undefined, decode: () => null })
      continue
    }
    columns.push({
      name: field.name,
      fileName: node.element.name,
      decode: decoderOf(field.type, node, where, field.name),
    })
  }
  const raw = rawMetadata(metadata)
  const read = columns.flatMap((c) => (c.fileName === undefined ? [] : [c.fileName]))
  const starts: number[] = []
  let rows = 0
  for (const group of metadata.row_groups) {
    starts.push(rows)
    rows += Number(group.num_rows)
  }
  return {
    rowGroupCount: metadata.row_groups.length,
    recordCount: rows,
    async readRowGroup(index: number): Promise<StructValue[]> {
      const group = metadata.row_groups[index]
      const rowStart = starts[index]
      if (!group || rowStart === undefined) throw new RangeError(`${where} has no row group ${index}`)
      const records: Record<string, unknown>[] =
        read.length === 0
          ? Array.from({ length: Number(group.num_rows) }, () => ({}))
          : await parquetReadObjects({
              file,
              metadata: raw,
              columns: read,
              rowStart,
              rowEnd: rowStart + Number(group.num_rows),
              utf8: false,
              compressors: pageDecompressors,
              parsers: { timestampFromNanoseconds: (nanos: bigint) => nanos },
            })
      return records.map((record) => {
        const row: StructValue = {}
        for (const column of columns) {
          row[column.name] = column.fileName === undefined ? null : column.decode(record[column.fileName])
        }
        return row
      })
    },
  }
}

function refuse(where: string, column: string, problem: string): never {
  throw new FloeError('CONVERSION_FAILED', `${where}: column ${column} ${problem}`, { details: { where, column } })
}

const isString = (e: SchemaElement) => e.converted_type === 'UTF8' || e.logical_type?.type === 'STRING'

/** The metadata with the leaves' annotations taken off (strings kept), so hyparquet hands over physical values. */
function rawMetadata(metadata: FileMetaData): FileMetaData {
  const schema = metadata.schema.map((element) => {
    if (element.type === undefined || isString(element)) return element
    const { converted_type: _c, logical_type: _l, ...bare } = element
    return bare
  })
  return { ...metadata, schema }
}

function decoderOf(type: IcebergType, node: SchemaTree, where: string, name: string): Decode {
  const nullable =
    (decode: Decode): Decode =>
    (raw) =>
      raw === undefined || raw === null ? null : decode(raw)
  if (isPrimitive(type)) {
    if (node.children.length > 0) refuse(where, name, `is a group in the file, ${type} in the table`)
    return nullable(primitiveDecoder(type, node.element, where, name))
  }
  const annotation = node.element.converted_type ?? node.element.logical_type?.type
  switch (type.type) {
    case 'struct': {
      if (annotation === 'LIST' || annotation === 'MAP' || node.children.length === 0) {
        refuse(where, name, 'is not a struct in the file')
      }
      const fields = type.fields.map((field) => {
        const child = node.children.find((c) => c.element.field_id === field.id)
        if (!child && field.required) refuse(where, `${name}.${field.name}`, 'is required and missing from the file')
        return {
          name: field.name,
          fileName: child?.element.name,
          decode: child ? decoderOf(field.type, child, where, `${name}.${field.name}`) : () => null,
        }
      })
      return nullable((raw) => {
        const record = raw as Record<string, unknown>
        const out: StructValue = {}
        for (const f of fields) out[f.name] = f.fileName === undefined ? null : f.decode(record[f.fileName])
        return out
      })
    }
    case 'list': {
      const element = node.children[0]?.children[0]
      if (annotation !== 'LIST' || !element || element.element.field_id !== type['element-id']) {
        refuse(where, name, 'is not a three-level list with the table element id in the file')
      }
      const decode = decoderOf(type.element, element, where, `${name}.element`)
      return nullable((raw) => (raw as unknown[]).map(decode))
    }
    case 'map': {
      const [key, value] = node.children[0]?.children ?? []
      if (annotation !== 'MAP' || !key || !value || key.element.field_id !== type['key-id']) {
        refuse(where, name, 'is not a map with the table key id in the file')
      }
      if (value.element.field_id !== type['value-id']) refuse(where, name, 'has another value id in the file')
      const keyOf = mapKeyDecoder(type.key, where, name)
      const decodeValue = decoderOf(type.value, value, where, `${name}.value`)
      return nullable((raw) => {
        const out = new Map<IcebergValue, IcebergValue>()
        for (const [k, v] of Object.entries(raw as Record<string, unknown>)) out.set(keyOf(k), decodeValue(v))
        return out
      })
    }
  }
}

/**
 * hyparquet assembles a map into an object, its keys turned into property names: types whose
 * text form gives the value back are read; byte-valued keys cannot be, and are refused.
 */
function mapKeyDecoder(type: IcebergType, where: string, name: string): (key: string) => IcebergValue {
  switch (type) {
    case 'string':
      return (key) => key
    case 'int':
    case 'date':
    case 'float':
    case 'double':
      return (key) => Number(key)
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return (key) => BigInt(key)
    case 'boolean':
      return (key) => key === 'true'
    default:
      return refuse(
        where,
        name,
        `has ${isPrimitive(type) ? type : type.type} keys, which cannot be read back losslessly`,
      )
  }
}

function primitiveDecoder(type: PrimitiveType, element: SchemaElement, where: string, name: string): Decode {
  const physical = element.type
  const wrong = (): never => refuse(where, name, `is ${physical} in the file, ${type} in the table`)
  const decimal = decimalParams(type)
  if (decimal) {
    const scale = element.logical_type?.type === 'DECIMAL' ? element.logical_type.scale : (element.scale ?? 0)
    if (scale !== decimal.scale) refuse(where, name, `has scale ${scale} in the file, ${decimal.scale} in the table`)
    if (physical === 'INT32' || physical === 'INT64') return (raw) => BigInt(raw as number | bigint)
    if (physical === 'BYTE_ARRAY' || physical === 'FIXED_LEN_BYTE_ARRAY')
      return (raw) => decimalFromBytes(raw as Uint8Array)
    return wrong()
  }
  const fixed = fixedLength(type)
  if (fixed !== undefined) {
    if (physical !== 'FIXED_LEN_BYTE_ARRAY' || element.type_length !== fixed) return wrong()
    return (raw) => raw as Uint8Array
  }
  switch (type) {
    case 'boolean':
      return physical === 'BOOLEAN' ? (raw) => raw as boolean : wrong()
    case 'int':
    case 'date':
      return physical === 'INT32' ? (raw) => raw as number : wrong()
    case 'long':
      if (physical === 'INT64') return (raw) => raw as bigint
      return physical === 'INT32' ? (raw) => BigInt(raw as number) : wrong()
    case 'float':
      return physical === 'FLOAT' ? (raw) => raw as number : wrong()
    case 'double':
      return physical === 'DOUBLE' || physical === 'FLOAT' ? (raw) => raw as number : wrong()
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return microsDecoder(element) ?? wrong()
    case 'string':
      if (physical !== 'BYTE_ARRAY') return wrong()
      return (raw) => (typeof raw === 'string' ? raw : textDecoder.decode(raw as Uint8Array))
    case 'uuid':
      return physical === 'FIXED_LEN_BYTE_ARRAY' && element.type_length === 16 ? (raw) => raw as Uint8Array : wrong()
    case 'binary':
      return physical === 'BYTE_ARRAY' ? (raw) => raw as Uint8Array : wrong()
  }
  return wrong()
}

/** Times and timestamps as microseconds, from the unit the file's annotation names. */
function microsDecoder(element: SchemaElement): Decode | undefined {
  if (element.type === 'INT96') return (raw) => (raw as bigint) / 1000n
  const logical = element.logical_type
  const unit =
    logical?.type === 'TIME' || logical?.type === 'TIMESTAMP'
      ? logical.unit
      : element.converted_type === 'TIME_MILLIS' || element.converted_type === 'TIMESTAMP_MILLIS'
        ? 'MILLIS'
        : 'MICROS'
  if (element.type === 'INT32' && unit === 'MILLIS') return (raw) => BigInt(raw as number) * 1000n
  if (element.type !== 'INT64') return undefined
  if (unit === 'MILLIS') return (raw) => (raw as bigint) * 1000n
  if (unit === 'NANOS') return (raw) => (raw as bigint) / 1000n
  return (raw) => raw as bigint
}
