// Columns inferred from the records, for a dataset without a mapping: the Iceberg type a JSON value
// suggests, and, compiled once per table schema, the per-record check of whether the schema takes
// a record as it is. Pure; the decoder (inferring-decoder.ts) acts on the answers.
//
// The types: true/false -> boolean; an integer -> int, or long beyond 32 bits; any other number ->
// double; a string -> string, or timestamptz at a timestampFields path; an object -> struct; an
// array -> list of its elements' joined type. null, {} and [] say nothing: a field seen only so
// is not a column yet. A table column widens only as Iceberg lets a column widen with its files as
// they are (int -> long): a fraction in an integer column cannot fit, and its record is refused.
import type { IcebergType, ListType, NestedField, StructType } from '../../shared/iceberg/index.ts'
import { malformed } from './reasons.ts'

const INT_MIN = -(2 ** 31)
const INT_MAX = 2 ** 31 - 1

export interface InferenceRules {
  /** Dotted paths whose strings are timestamps; arrays are transparent (`items.at` inside a list of objects). */
  timestampPaths: ReadonlySet<string>
  /** Names no JSON field may take: the columns Floe fills from the record's Kafka coordinates. */
  reserved: ReadonlySet<string>
}

/** The type a JSON value suggests; undefined when it says nothing (null, {}, [], or only those inside). */
export function inferType(value: unknown, path: string, rules: InferenceRules): IcebergType | undefined {
  switch (typeof value) {
    case 'boolean':
      return 'boolean'
    case 'number':
      if (!Number.isInteger(value)) return 'double'
      return value >= INT_MIN && value <= INT_MAX ? 'int' : 'long'
    case 'bigint':
      return 'long'
    case 'string':
      return rules.timestampPaths.has(path) ? 'timestamptz' : 'string'
    case 'object':
      if (value === null) return undefined
      if (Array.isArray(value)) return inferList(value, path, rules)
      return inferStruct(value as Record<string, unknown>, path, rules)
    default:
      return undefined
  }
}

/** The fields a top-level JSON object suggests (its keys in order, those that say nothing left out). */
export function inferFields(record: object, rules: InferenceRules): NestedField[] {
  return (inferStruct(record as Record<string, unknown>, '', rules)?.fields ?? []) as NestedField[]
}

function inferStruct(object: Record<string, unknown>, path: string, rules: InferenceRules): StructType | undefined {
  const fields: NestedField[] = []
  const seen = new Map<string, string>()
  for (const name in object) {
    const at = path === '' ? name : `${path}.${name}`
    checkName(name, at, path === '' ? rules.reserved : undefined)
    const other = seen.get(name.toLowerCase())
    if (other !== undefined) throw caseCollision(at, other)
    seen.set(name.toLowerCase(), name)
    const type = inferType(object[name], at, rules)
    if (type !== undefined) fields.push({ id: 0, name, required: false, type })
  }
  return fields.length === 0 ? undefined : { type: 'struct', fields }
}

function inferList(array: readonly unknown[], path: string, rules: InferenceRules): ListType | undefined {
  let element: IcebergType | undefined
  for (const item of array) {
    const type = inferType(item, path, rules)
    if (type !== undefined) element = element === undefined ? type : join(element, type)
  }
  return element === undefined ? undefined : { type: 'list', 'element-id': 0, element, 'element-required': false }
}

/**
 * Two types seen side by side (elements of one array) as one: numbers join to the widest (int,
 * long, double), structs to the union of their fields. Any other pair keeps the first; the
 * element of the other kind then fails its conversion and the record is refused.
 */
function join(a: IcebergType, b: IcebergType): IcebergType {
  if (typeof a === 'string' || typeof b === 'string') {
    const rank = (t: IcebergType) => (t === 'int' ? 1 : t === 'long' ? 2 : t === 'double' ? 3 : 0)
    const ra = rank(a)
    const rb = rank(b)
    return ra > 0 && rb > 0 && rb > ra ? b : a
  }
  if (a.type === 'struct' && b.type === 'struct') {
    const fields = a.fields.map((field) => {
      const other = b.fields.find((f) => f.name === field.name)
      return other ? { ...field, type: join(field.type, other.type) } : field
    })
    for (const field of b.fields) if (!a.fields.some((f) => f.name === field.name)) fields.push(field)
    return { ...a, fields }
  }
  if (a.type === 'list' && b.type === 'list') return { ...a, element: join(a.element, b.element) }
  return a
}

/**
 * A JSON field name that cannot be a column refuses its record: empty, with a dot (Iceberg's
 * column references, and timestampFields, read a dot as nesting), `__proto__` (it would set a
 * row's prototype), or, at the top, a name Floe fills from the Kafka coordinates.
 */
function checkName(name: string, path: string, reserved: ReadonlySet<string> | undefined): void {
  let problem: string | undefined
  if (name === '') problem = 'an empty field name cannot be a column'
  else if (name.includes('.')) problem = `field '${path}' has a dot in its name, which Iceberg reads as nesting`
  else if (name === '__proto__') problem = `field '${path}' cannot be a column`
  else if (reserved?.has(name)) problem = `field '${name}' is the column Floe fills from the record's Kafka coordinates`
  if (problem !== undefined) throw malformed('field-name', problem, { column: path })
}

/**
 * Two fields of one object whose names differ only in case cannot both be columns: Spark and
 * Trino resolve column names without case, and could not tell them apart.
 */
function caseCollision(path: string, other: string): Error {
  return malformed(
    'field-name',
    `field '${path}' differs from '${other}' only in case, which engines that ignore case cannot tell apart`,
    { column: path },
  )
}

/** Whether the schema must widen to take a value: a new field, or an int column given a long. */
export type WideningCheck = (value: unknown) => boolean

/**
 * The per-record check for a table's fields, compiled once per schema: true when the record holds
 * a field the schema lacks (one that says something) or an integer beyond an int column. Values of
 * another kind than their column's are not its business: the converter refuses them.
 */
export function compileWideningCheck(fields: readonly NestedField[], rules: InferenceRules): WideningCheck {
  const check = structCheck(fields, '', rules)
  return (record) => check(record)
}

const never: WideningCheck = () => false

function checkOf(type: IcebergType, path: string, rules: InferenceRules): WideningCheck {
  if (typeof type === 'string') {
    return type === 'int'
      ? (value) => typeof value === 'number' && Number.isInteger(value) && (value < INT_MIN || value > INT_MAX)
      : never
  }
  if (type.type === 'struct') return structCheck(type.fields, path, rules)
  if (type.type === 'list') {
    const element = checkOf(type.element, path, rules)
    if (element === never) return never
    return (value) => Array.isArray(value) && value.some(element)
  }
  return never
}

function structCheck(fields: readonly NestedField[], path: string, rules: InferenceRules): WideningCheck {
  const checks = new Map<string, WideningCheck>()
  const lowerCase = new Map(fields.map((field) => [field.name.toLowerCase(), field.name]))
  if (path === '') for (const name of rules.reserved) lowerCase.set(name.toLowerCase(), name)
  for (const field of fields)
    checks.set(field.name, checkOf(field.type, path === '' ? field.name : `${path}.${field.name}`, rules))
  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
    const object = value as Record<string, unknown>
    for (const name in object) {
      const check = checks.get(name)
      const field = object[name]
      if (check === undefined) {
        // a new field, or a reserved name: inferFields then refuses the record, saying why
        const at = path === '' ? name : `${path}.${name}`
        if (field === null || inferType(field, at, rules) === undefined) continue
        const column = lowerCase.get(name.toLowerCase())
        // the very name of a reserved column is inferFields' to refuse
        if (column !== undefined && column !== name) throw caseCollision(at, column)
        return true
      } else if (check(field)) return true
    }
    return false
  }
}

/** How many field ids the fields use (every field, list element and map key and value). */
export function fieldCount(fields: readonly NestedField[]): number {
  let count = 0
  const visit = (type: IcebergType): void => {
    if (typeof type === 'string') return
    if (type.type === 'struct') {
      count += type.fields.length
      for (const field of type.fields) visit(field.type)
    } else if (type.type === 'list') {
      count += 1
      visit(type.element)
    } else {
      count += 2
      visit(type.key)
      visit(type.value)
    }
  }
  visit({ type: 'struct', fields: [...fields] })
  return count
}
