// The schema changes a writer may make to a table on its own, online: a new column, always
// optional (the table's rows so far have no value for it), and the type promotions Iceberg allows
// (int -> long, float -> double, a decimal's precision widened at the same scale). Never a
// narrowing, a rename, a drop, or a change inside a nested type: those stay for an operator.
// Planned here as data (the schema to add, and the requirements that make it safe to commit
// beside another writer doing the same); committing is the caller's.
import { decimalParams, type IcebergType, isPrimitive, type NestedField, type Schema } from '../types.ts'
import type { TableRequirement, TableUpdate } from './changes.ts'
import { assignFreshIds } from './create.ts'
import { currentSchema } from './lookup.ts'
import type { TableMetadata } from './model.ts'

export interface SchemaChange {
  /** Columns the table gains, by name. */
  added: string[]
  /** Columns whose type widens. */
  promoted: { column: string; from: string; to: string }[]
  /** The commit that makes the change; undefined when the table needs none. */
  commit: { requirements: TableRequirement[]; updates: TableUpdate[] } | undefined
}

/** Types compared by shape: field ids differ between a configuration and a catalog's numbering. */
export function sameType(a: IcebergType, b: IcebergType): boolean {
  if (typeof a === 'string' || typeof b === 'string') {
    return typeof a === 'string' && typeof b === 'string' && a.replace(/\s+/g, '') === b.replace(/\s+/g, '')
  }
  if (a.type === 'list' && b.type === 'list') return sameType(a.element, b.element)
  if (a.type === 'map' && b.type === 'map') return sameType(a.key, b.key) && sameType(a.value, b.value)
  if (a.type === 'struct' && b.type === 'struct') {
    return (
      a.fields.length === b.fields.length &&
      a.fields.every((f, i) => f.name === b.fields[i]?.name && sameType(f.type, b.fields[i]!.type))
    )
  }
  return false
}

/** Whether Iceberg lets a column of type `from` become `to` with its data files as they are. */
export function canPromote(from: IcebergType, to: IcebergType): boolean {
  if (!isPrimitive(from) || !isPrimitive(to)) return false
  if (from === 'int') return to === 'long'
  if (from === 'float') return to === 'double'
  const before = decimalParams(from)
  const after = decimalParams(to)
  return (
    before !== undefined && after !== undefined && after.scale === before.scale && after.precision > before.precision
  )
}

/**
 * What the table needs so that it has each of `wanted`'s top-level columns with its type. A column
 * of another type that cannot be promoted to it is left as it is: the caller's schema check names it.
 */
export function planSchemaChange(metadata: TableMetadata, wanted: readonly NestedField[]): SchemaChange {
  const schema = currentSchema(metadata)
  const fields = schema.fields.map((field) => ({ ...field }))
  const promoted: SchemaChange['promoted'] = []
  const missing: NestedField[] = []
  for (const field of wanted) {
    const existing = fields.find((f) => f.name === field.name)
    if (!existing) missing.push({ ...field, required: false })
    else if (!sameType(existing.type, field.type) && canPromote(existing.type, field.type)) {
      promoted.push({ column: field.name, from: String(existing.type), to: String(field.type) })
      existing.type = field.type
    }
  }
  if (missing.length === 0 && promoted.length === 0) return { added: [], promoted, commit: undefined }
  const fresh = assignFreshIds({ type: 'struct', 'schema-id': 0, fields: missing }, metadata['last-column-id'])
  return {
    added: missing.map((field) => field.name),
    promoted,
    commit: schemaCommit(metadata, [...fields, ...fresh.schema.fields], fresh.lastColumnId),
  }
}

/**
 * The commit that makes `fields` the table's current schema, `lastColumnId` its last column id.
 * Another writer's change in between (the same columns, or any other) is a conflict: plan again.
 */
function schemaCommit(
  metadata: TableMetadata,
  fields: NestedField[],
  lastColumnId: number,
): NonNullable<SchemaChange['commit']> {
  const schema = currentSchema(metadata)
  const schemaId = Math.max(...metadata.schemas.map((s) => s['schema-id'])) + 1
  const evolved: Schema = { ...schema, 'schema-id': schemaId, fields }
  return {
    requirements: [
      { type: 'assert-current-schema-id', 'current-schema-id': schema['schema-id'] },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': metadata['last-column-id'] },
    ],
    updates: [
      { action: 'add-schema', schema: evolved, 'last-column-id': lastColumnId },
      { action: 'set-current-schema', 'schema-id': -1 },
    ],
  }
}

/** The change in words: `columns note, region; widens amount (float to double)`. */
export function describeSchemaChange(change: SchemaChange): string {
  const parts: string[] = []
  if (change.added.length > 0) parts.push(`column${change.added.length > 1 ? 's' : ''} ${change.added.join(', ')}`)
  if (change.promoted.length > 0) {
    parts.push(`widens ${change.promoted.map((p) => `${p.column} (${p.from} to ${p.to})`).join(', ')}`)
  }
  return parts.join('; ')
}

/**
 * The table's fields widened to take `wanted` (a schema inferred from records, its new parts
 * numbered 0): fields it lacks are added, at any depth, as optional; an int becomes a long where
 * `wanted` has a long. Nothing else changes: another type mismatch is left for the value's
 * converter to refuse. Returns `fields` itself when nothing widens, so callers compare by identity.
 */
export function widenFields(
  fields: readonly NestedField[],
  wanted: readonly NestedField[],
  path = '',
  change?: Pick<SchemaChange, 'added' | 'promoted'>,
): readonly NestedField[] {
  let widened: NestedField[] | undefined
  for (const field of wanted) {
    const at = fields.findIndex((f) => f.name === field.name)
    const name = `${path}${field.name}`
    if (at === -1) {
      widened ??= [...fields]
      widened.push({ ...field, required: false })
      change?.added.push(name)
      continue
    }
    const existing = (widened ?? fields)[at] as NestedField
    const type = widenType(existing.type, field.type, name, change)
    if (type === existing.type) continue
    widened ??= [...fields]
    widened[at] = { ...existing, type }
  }
  return widened ?? fields
}

function widenType(
  existing: IcebergType,
  wanted: IcebergType,
  name: string,
  change: Pick<SchemaChange, 'added' | 'promoted'> | undefined,
): IcebergType {
  if (isPrimitive(existing) || isPrimitive(wanted)) {
    if (existing !== 'int' || wanted !== 'long') return existing
    change?.promoted.push({ column: name, from: 'int', to: 'long' })
    return 'long'
  }
  if (existing.type === 'struct' && wanted.type === 'struct') {
    const fields = widenFields(existing.fields, wanted.fields, `${name}.`, change)
    return fields === existing.fields ? existing : { ...existing, fields: [...fields] }
  }
  if (existing.type === 'list' && wanted.type === 'list') {
    const element = widenType(existing.element, wanted.element, `${name}.element`, change)
    return element === existing.element ? existing : { ...existing, element }
  }
  return existing
}

/**
 * The commit that widens the table's current schema to take `wanted` (widenFields), with fresh
 * ids for every added part; no commit when the table takes it already (another writer widened it).
 */
export function planWidening(metadata: TableMetadata, wanted: readonly NestedField[]): SchemaChange {
  const schema = currentSchema(metadata)
  const change: SchemaChange = { added: [], promoted: [], commit: undefined }
  const widened = widenFields(schema.fields, wanted, '', change)
  if (widened === schema.fields) return change
  // Only the added parts carry id 0: renumbering the whole schema from last-column-id would also
  // move the ids of fields the table has, so each added part is numbered on its own, in order.
  let last = metadata['last-column-id']
  const numbered = numberAdded(widened, (type) => {
    const fresh = assignFreshIds(
      { type: 'struct', 'schema-id': 0, fields: [{ id: 0, name: '_', required: false, type }] },
      last,
    )
    last = fresh.lastColumnId
    return fresh.schema.fields[0] as NestedField
  })
  change.commit = schemaCommit(metadata, numbered, last)
  return change
}

/** Gives every field numbered 0 (an added one) fresh ids, its nested parts included. */
function numberAdded(fields: readonly NestedField[], fresh: (type: IcebergType) => NestedField): NestedField[] {
  return fields.map((field) => {
    if (field.id === 0) {
      const numbered = fresh(field.type)
      return { ...field, id: numbered.id, type: numbered.type }
    }
    if (isPrimitive(field.type)) return field
    return { ...field, type: numberAddedIn(field.type, fresh) }
  })
}

function numberAddedIn(type: Exclude<IcebergType, string>, fresh: (type: IcebergType) => NestedField): IcebergType {
  if (type.type === 'struct') return { ...type, fields: numberAdded(type.fields, fresh) }
  if (type.type === 'list' && !isPrimitive(type.element))
    return { ...type, element: numberAddedIn(type.element, fresh) }
  return type
}
