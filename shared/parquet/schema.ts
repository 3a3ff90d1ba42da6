// Iceberg schema -> Parquet schema elements, following the spec's Parquet appendix and what
// Iceberg's Java writer (TypeToMessageType) emits: every field, list element and map key/value
// carries its Iceberg field id; lists and maps use the 3-level layout with the `list`/`element`
// and `key_value`/`key`/`value` names. Also describes each leaf column, in the order Parquet writes
// them, so statistics and bloom filters can be tied back to field ids.
import type { SchemaElement } from 'hyparquet-writer'
import { FloeError } from '../errors.ts'
import {
  decimalParams,
  fixedLength,
  type IcebergType,
  type IcebergValue,
  isPrimitive,
  type PrimitiveType,
  type Schema,
} from '../iceberg/index.ts'

/** How a leaf's values compare, for bounds: Iceberg orders strings by UTF-8 bytes and binary unsigned. */
export type ValueOrder = 'number' | 'bigint' | 'boolean' | 'string' | 'bytes'

export interface LeafColumn {
  fieldId: number
  /** The Parquet column path (path_in_schema), e.g. ['tags', 'list', 'element']. */
  path: string[]
  type: PrimitiveType
  element: SchemaElement
  order: ValueOrder
  isFloatingPoint: boolean
  /** Iceberg keeps bounds only for leaves reached through structs alone, never inside a list or map. */
  reachableThroughStructs: boolean
  /** Index of the top-level column this leaf belongs to. */
  topLevelIndex: number
  /** Field names below the top-level field down to this leaf; only meaningful when reachableThroughStructs. */
  structPath: string[]
}

export interface TopLevelColumn {
  name: string
  fieldId: number
  required: boolean
  type: IcebergType
}

export interface ParquetLayout {
  elements: SchemaElement[]
  columns: TopLevelColumn[]
  leaves: LeafColumn[]
}

export function parquetLayoutOf(schema: Schema): ParquetLayout {
  // Iceberg's Java writer names the message `table`; readers ignore the root's name.
  const elements: SchemaElement[] = [{ name: 'table', num_children: schema.fields.length }]
  const leaves: LeafColumn[] = []
  const columns: TopLevelColumn[] = []
  schema.fields.forEach((field, topLevelIndex) => {
    columns.push({ name: field.name, fieldId: field.id, required: field.required, type: field.type })
    const context: LeafContext = { topLevelIndex, reachableThroughStructs: true, structPath: [] }
    addField(elements, leaves, [], field.name, field.id, field.required, field.type, context)
  })
  return { elements, columns, leaves }
}

interface LeafContext {
  topLevelIndex: number
  reachableThroughStructs: boolean
  structPath: string[]
}

function addField(
  elements: SchemaElement[],
  leaves: LeafColumn[],
  parentPath: string[],
  name: string,
  fieldId: number,
  required: boolean,
  type: IcebergType,
  context: LeafContext,
): void {
  const path = [...parentPath, name]
  const repetition_type = required ? 'REQUIRED' : 'OPTIONAL'
  if (isPrimitive(type)) {
    const element = primitiveElement(name, fieldId, repetition_type, type)
    elements.push(element)
    leaves.push({
      fieldId,
      path,
      type,
      element,
      order: valueOrder(type),
      isFloatingPoint: type === 'float' || type === 'double',
      reachableThroughStructs: context.reachableThroughStructs,
      topLevelIndex: context.topLevelIndex,
      structPath: context.structPath,
    })
    return
  }
  if (type.type === 'struct') {
    elements.push({ name, repetition_type, num_children: type.fields.length, field_id: fieldId })
    for (const child of type.fields) {
      const childContext = { ...context, structPath: [...context.structPath, child.name] }
      addField(elements, leaves, path, child.name, child.id, child.required, child.type, childContext)
    }
    return
  }
  const nested = { ...context, reachableThroughStructs: false }
  if (type.type === 'list') {
    elements.push({
      name,
      repetition_type,
      num_children: 1,
      converted_type: 'LIST',
      logical_type: { type: 'LIST' },
      field_id: fieldId,
    })
    elements.push({ name: 'list', repetition_type: 'REPEATED', num_children: 1 })
    const elementPath = [...path, 'list']
    addField(
      elements,
      leaves,
      elementPath,
      'element',
      type['element-id'],
      type['element-required'],
      type.element,
      nested,
    )
    return
  }
  elements.push({
    name,
    repetition_type,
    num_children: 1,
    converted_type: 'MAP',
    logical_type: { type: 'MAP' },
    field_id: fieldId,
  })
  elements.push({ name: 'key_value', repetition_type: 'REPEATED', num_children: 2 })
  const entryPath = [...path, 'key_value']
  addField(elements, leaves, entryPath, 'key', type['key-id'], true, type.key, nested)
  addField(elements, leaves, entryPath, 'value', type['value-id'], type['value-required'], type.value, nested)
}

function primitiveElement(
  name: string,
  field_id: number,
  repetition_type: 'REQUIRED' | 'OPTIONAL',
  type: PrimitiveType,
): SchemaElement {
  const base = { name, field_id, repetition_type } as const
  switch (type) {
    case 'boolean':
      return { ...base, type: 'BOOLEAN' }
    case 'int':
      return { ...base, type: 'INT32' }
    case 'long':
      return { ...base, type: 'INT64' }
    case 'float':
      return { ...base, type: 'FLOAT' }
    case 'double':
      return { ...base, type: 'DOUBLE' }
    case 'date':
      return { ...base, type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } }
    // The legacy converted types TIME_MICROS/TIMESTAMP_MICROS imply adjustedToUTC=true, so they are
    // written only where that holds (timestamptz), as parquet-java does.
    case 'time':
      return { ...base, type: 'INT64', logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'MICROS' } }
    case 'timestamp':
      return { ...base, type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' } }
    case 'timestamptz':
      return {
        ...base,
        type: 'INT64',
        converted_type: 'TIMESTAMP_MICROS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
      }
    case 'string':
      return { ...base, type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } }
    case 'uuid':
      return { ...base, type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' } }
    case 'binary':
      return { ...base, type: 'BYTE_ARRAY' }
  }
  const decimal = decimalParams(type)
  if (decimal) {
    const { precision, scale } = decimal
    if (precision < 1 || precision > 38 || scale > precision) {
      throw new FloeError('CONFIG_INVALID', `unsupported Iceberg type ${type} for field ${name}`, {
        details: { field: name, type },
      })
    }
    // hyparquet-writer scales and encodes decimals from converted_type + scale/precision, and
    // modern readers use logical_type: both are set, as parquet-java does.
    const decimalElement = {
      ...base,
      converted_type: 'DECIMAL',
      scale,
      precision,
      logical_type: { type: 'DECIMAL', precision, scale },
    } as const
    if (precision <= 9) return { ...decimalElement, type: 'INT32' }
    if (precision <= 18) return { ...decimalElement, type: 'INT64' }
    return { ...decimalElement, type: 'FIXED_LEN_BYTE_ARRAY', type_length: decimalRequiredBytes(precision) }
  }
  const length = fixedLength(type)
  if (length !== undefined && length > 0) {
    return { ...base, type: 'FIXED_LEN_BYTE_ARRAY', type_length: length }
  }
  throw new FloeError('CONFIG_INVALID', `unsupported Iceberg type ${type} for field ${name}`, {
    details: { field: name, type },
  })
}

/** The fewest bytes whose two's complement holds every unscaled value of the precision (Iceberg's TypeUtil). */
export function decimalRequiredBytes(precision: number): number {
  for (let bytes = 1; ; bytes++) {
    if (10n ** BigInt(precision) - 1n <= 2n ** BigInt(8 * bytes - 1) - 1n) return bytes
  }
}

function valueOrder(type: PrimitiveType): ValueOrder {
  switch (type) {
    case 'boolean':
      return 'boolean'
    case 'int':
    case 'float':
    case 'double':
    case 'date':
      return 'number'
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return 'bigint'
    case 'string':
      return 'string'
    case 'uuid':
    case 'binary':
      return 'bytes'
  }
  return type.startsWith('decimal') ? 'bigint' : 'bytes'
}

/**
 * A cheap estimate of the bytes one value adds to a row group before compression, used only to
 * cut row groups by size. Fixed-width values return `fixed`, so a row of them costs one addition.
 */
export type SizeEstimate = { fixed: number } | { estimate: (value: IcebergValue) => number }

export function sizeEstimateOf(type: IcebergType): SizeEstimate {
  if (isPrimitive(type)) {
    const width = fixedWidth(type)
    if (width !== undefined) return { fixed: width }
    // string length in UTF-16 units equals UTF-8 bytes for ASCII, close enough to cut row groups
    if (type === 'string') return { estimate: (value) => (typeof value === 'string' ? value.length + 4 : 0) }
    return { estimate: (value) => (value instanceof Uint8Array ? value.byteLength + 4 : 0) }
  }
  return { estimate: nestedEstimator(type) }
}

function fixedWidth(type: PrimitiveType): number | undefined {
  switch (type) {
    case 'boolean':
      return 1
    case 'int':
    case 'float':
    case 'date':
      return 4
    case 'long':
    case 'double':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return 8
    case 'uuid':
      return 16
    case 'string':
    case 'binary':
      return undefined
  }
  const decimal = decimalParams(type)
  if (decimal) return decimal.precision <= 9 ? 4 : decimal.precision <= 18 ? 8 : decimalRequiredBytes(decimal.precision)
  return fixedLength(type)
}

function nestedEstimator(type: IcebergType): (value: IcebergValue) => number {
  if (isPrimitive(type)) {
    const estimate = sizeEstimateOf(type)
    return 'fixed' in estimate
      ? (value) => (value === null || value === undefined ? 0 : estimate.fixed)
      : estimate.estimate
  }
  if (type.type === 'struct') {
    const children = type.fields.map((field) => ({ name: field.name, measure: nestedEstimator(field.type) }))
    return (value) => {
      if (value === null || typeof value !== 'object') return 0
      const struct = value as Record<string, IcebergValue>
      let total = 0
      for (const child of children) total += child.measure(struct[child.name] ?? null)
      return total
    }
  }
  if (type.type === 'list') {
    const element = nestedEstimator(type.element)
    return (value) => {
      if (!Array.isArray(value)) return 0
      let total = 0
      for (const item of value) total += element(item) + 1
      return total
    }
  }
  const key = nestedEstimator(type.key)
  const item = nestedEstimator(type.value)
  return (value) => {
    if (!(value instanceof Map)) return 0
    let total = 0
    for (const [k, v] of value) total += key(k) + item(v) + 1
    return total
  }
}
