// A partition spec bound to a schema: the partition tuple of a row, a grouping key for it, its
// directory path, and the partition struct type that manifests declare.
import { FloeError } from '../../errors.ts'
import type {
  IcebergType,
  IcebergValue,
  NestedField,
  PartitionField,
  PartitionSpec,
  PrimitiveType,
  Schema,
  StructType,
  StructValue,
} from '../types.ts'
import { isPrimitive } from '../types.ts'
import { encodeHex } from '../values/index.ts'
import { escapePathSegment, humanString } from './human.ts'
import {
  compileTransform,
  parseTransform,
  type Transform,
  type TransformFunction,
  transformResultType,
} from './transform.ts'

/** One partition field, resolved against the schema. */
export interface BoundPartitionField {
  readonly field: PartitionField
  readonly transform: Transform
  /** Field names from the schema root to the source column (structs only). */
  readonly sourcePath: readonly string[]
  readonly sourceType: PrimitiveType
  readonly resultType: PrimitiveType
}

export interface Partitioner {
  readonly spec: PartitionSpec
  readonly fields: readonly BoundPartitionField[]
  /** The manifest's `partition` struct: field-id, name and result type of each field, all optional. */
  readonly partitionType: StructType
  readonly unpartitioned: boolean
  /** The row's partition tuple: partition field name -> transformed value (DataFile.partition). */
  partition(row: StructValue): StructValue
  /**
   * A string that is equal for two rows exactly when their partition tuples are equal; stable across
   * processes. Computed without building the tuple, for grouping rows into per-partition files.
   */
  key(row: StructValue): string
  /** The same key, of a tuple that partition() made (or that a manifest holds). */
  keyOf(partition: StructValue): string
  /** The tuple's directory path, `ts_day=2017-11-16/id_bucket=3` ('' when unpartitioned). */
  path(partition: StructValue): string
}

function invalidSpec(message: string): FloeError {
  return new FloeError('CONFIG_INVALID', message)
}

/** The path of struct names to the field with this id; undefined if absent or inside a list or map. */
function findSource(struct: StructType, id: number): { path: string[]; field: NestedField } | undefined {
  for (const field of struct.fields) {
    if (field.id === id) return { path: [field.name], field }
    if (!isPrimitive(field.type) && field.type.type === 'struct') {
      const inner = findSource(field.type, id)
      if (inner) return { path: [field.name, ...inner.path], field: inner.field }
    }
  }
  return undefined
}

/** Resolves each partition field's source and transform; throws CONFIG_INVALID on a bad spec. */
export function bindPartitionSpec(spec: PartitionSpec, schema: Schema): BoundPartitionField[] {
  const names = new Set<string>()
  return spec.fields.map((field) => {
    if (names.has(field.name)) throw invalidSpec(`partition spec names field ${field.name} twice`)
    names.add(field.name)
    const source = findSource(schema, field['source-id'])
    if (!source) {
      throw invalidSpec(
        `partition field ${field.name}: source column id ${field['source-id']} is not in the schema (or sits in a list or map)`,
      )
    }
    const sourceType: IcebergType = source.field.type
    if (!isPrimitive(sourceType)) {
      throw invalidSpec(`partition field ${field.name}: source column ${source.path.join('.')} is not a primitive`)
    }
    const transform = parseTransform(field.transform)
    const resultType = transformResultType(transform, sourceType)
    return { field, transform, sourcePath: source.path, sourceType, resultType }
  })
}

/** The partition struct type of a spec, as manifests declare it. */
export function partitionType(spec: PartitionSpec, schema: Schema): StructType {
  return structOf(bindPartitionSpec(spec, schema))
}

function structOf(fields: readonly BoundPartitionField[]): StructType {
  return {
    type: 'struct',
    fields: fields.map(({ field, resultType }) => ({
      id: field['field-id'],
      name: field.name,
      required: false,
      type: resultType,
    })),
  }
}

type Accessor = (row: StructValue) => IcebergValue

function compileAccessor(path: readonly string[]): Accessor {
  const [first, ...rest] = path
  if (rest.length === 0) return (row) => row[first!] ?? null
  return (row) => {
    let value: IcebergValue | undefined = row[first!]
    for (const name of rest) {
      if (value === null || value === undefined) return null
      value = (value as StructValue)[name]
    }
    return value ?? null
  }
}

/**
 * One field's part of the grouping key. Injective per type: strings carry their length, so a comma
 * inside one cannot fake a field boundary; null is `~`, which no other part starts with.
 */
function compileKeyPart(type: PrimitiveType): (value: IcebergValue) => string {
  switch (type) {
    case 'boolean':
      return (value) => (value === null ? '~' : value ? 't' : 'f')
    case 'string':
      return (value) => (value === null ? '~' : `${(value as string).length}:${value as string}`)
    case 'float':
    case 'double':
      // -0.0 and 0.0 are different partitions in Iceberg (Java's Float.equals), so keep the sign.
      return (value) => (value === null ? '~' : Object.is(value, -0) ? '-0' : String(value))
  }
  return (value) => (value === null ? '~' : value instanceof Uint8Array ? `x${encodeHex(value)}` : String(value))
}

/** Compiles a spec against a schema once; the returned functions are the per-record path. */
export function compilePartitioner(spec: PartitionSpec, schema: Schema): Partitioner {
  const fields = bindPartitionSpec(spec, schema)
  const count = fields.length
  const names = fields.map(({ field }) => field.name)
  const accessors = fields.map(({ sourcePath }) => compileAccessor(sourcePath))
  const transforms: TransformFunction[] = fields.map(({ transform, sourceType }) =>
    compileTransform(transform, sourceType),
  )
  const keyParts = fields.map(({ resultType }) => compileKeyPart(resultType))
  const escapedNames = names.map(escapePathSegment)

  const partition = (row: StructValue): StructValue => {
    const tuple: StructValue = {}
    for (let i = 0; i < count; i++) tuple[names[i]!] = transforms[i]!(accessors[i]!(row))
    return tuple
  }
  const keyOf = (tuple: StructValue): string => {
    let key = ''
    for (let i = 0; i < count; i++) key += (i === 0 ? '' : ',') + keyParts[i]!(tuple[names[i]!] ?? null)
    return key
  }
  let key: (row: StructValue) => string
  if (count === 0) key = () => ''
  else if (count === 1) {
    // The common single-field spec: one transform, one string, no loop.
    const [access, transform, keyPart] = [accessors[0]!, transforms[0]!, keyParts[0]!]
    key = (row) => keyPart(transform(access(row)))
  } else {
    key = (row) => {
      let text = ''
      for (let i = 0; i < count; i++) text += (i === 0 ? '' : ',') + keyParts[i]!(transforms[i]!(accessors[i]!(row)))
      return text
    }
  }
  const path = (tuple: StructValue): string =>
    fields
      .map(
        ({ transform, sourceType }, i) =>
          `${escapedNames[i]}=${escapePathSegment(humanString(transform, sourceType, tuple[names[i]!] ?? null))}`,
      )
      .join('/')

  return { spec, fields, partitionType: structOf(fields), unpartitioned: count === 0, partition, key, keyOf, path }
}

/** `ts_day=2017-11-16/id_bucket=3` for a partition tuple (field name -> value); '' when unpartitioned. */
export function partitionPath(spec: PartitionSpec, schema: Schema, partitionValues: StructValue): string {
  return compilePartitioner(spec, schema).path(partitionValues)
}
