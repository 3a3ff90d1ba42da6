// The metadata of a new table. Field ids are always reassigned, the way Iceberg's Java catalogs
// and pyiceberg do on create: the top-level fields take 1..n in order, then each field's nested
// type is numbered depth-first (a struct's own fields first, a list's element, a map's key then
// value). Partition fields take 1000, 1001, ...; a sort order with fields becomes order 1.
// So the SQL catalog and the REST catalog give the same table for the same request, and the
// caller must write with the schema the catalog returns, never with the one it sent.
import { randomUUID } from 'node:crypto'
import { FloeError } from '../../errors.ts'
import type { IcebergType, NestedField, PartitionSpec, Schema, SortOrder } from '../types.ts'
import { isPrimitive } from '../types.ts'
import type { UnboundPartitionSpec } from './changes.ts'
import { partitionFieldIdStart, type TableMetadata, tableProperties } from './model.ts'

export interface FreshSchema {
  schema: Schema
  /** Old field id -> new field id. */
  ids: Map<number, number>
  lastColumnId: number
}

/**
 * Renumbers a schema's field ids from 1 (see the header for the order) and sets schema-id 0;
 * from `after + 1` for fields that join a table whose highest id is `after`.
 */
export function assignFreshIds(schema: Schema, after = 0): FreshSchema {
  const ids = new Map<number, number>()
  let last = after
  const next = (old: number): number => {
    last += 1
    ids.set(old, last)
    return last
  }
  const renumberFields = (fields: NestedField[]): NestedField[] => {
    const fresh = fields.map((field) => next(field.id))
    return fields.map((field, i) => ({ ...field, id: fresh[i]!, type: renumberType(field.type) }))
  }
  const renumberType = (type: IcebergType): IcebergType => {
    if (isPrimitive(type)) return type
    if (type.type === 'struct') return { ...type, fields: renumberFields(type.fields) }
    if (type.type === 'list') {
      const elementId = next(type['element-id'])
      return { ...type, 'element-id': elementId, element: renumberType(type.element) }
    }
    const keyId = next(type['key-id'])
    const valueId = next(type['value-id'])
    return {
      ...type,
      'key-id': keyId,
      'value-id': valueId,
      key: renumberType(type.key),
      value: renumberType(type.value),
    }
  }
  const fields = renumberFields(schema.fields)
  const fresh: Schema = { type: 'struct', 'schema-id': 0, fields }
  if (schema['identifier-field-ids'] !== undefined) {
    fresh['identifier-field-ids'] = schema['identifier-field-ids'].map((id) => remap(ids, id, 'identifier field'))
  }
  return { schema: fresh, ids, lastColumnId: last }
}

function remap(ids: Map<number, number>, id: number, what: string): number {
  const fresh = ids.get(id)
  if (fresh === undefined)
    throw new FloeError('CATALOG_BAD_REQUEST', `${what} refers to field id ${id}, not in the schema`)
  return fresh
}

export interface NewTableMetadataOptions {
  schema: Schema
  /** Source ids refer to the given schema's field ids; spec and field ids are reassigned. */
  spec?: UnboundPartitionSpec
  sortOrder?: SortOrder
  location: string
  properties?: Record<string, string>
  /** Defaults to the `format-version` property, else 2. */
  formatVersion?: number
  tableUuid?: string
  nowMs: number
}

export function newTableMetadata(options: NewTableMetadataOptions): TableMetadata {
  const { schema, ids, lastColumnId } = assignFreshIds(options.schema)
  const properties = { ...options.properties }
  const formatVersion = options.formatVersion ?? Number(properties[tableProperties.formatVersion] ?? 2)
  // format-version is a reserved property: it configures the table and is not stored.
  delete properties[tableProperties.formatVersion]
  if (formatVersion !== 1 && formatVersion !== 2) {
    throw new FloeError(
      'CATALOG_BAD_REQUEST',
      `format version ${formatVersion} is not supported for new tables (1 or 2)`,
    )
  }

  const spec: PartitionSpec = {
    'spec-id': 0,
    fields: (options.spec?.fields ?? []).map((field, i) => ({
      name: field.name,
      transform: field.transform,
      'source-id': remap(ids, field['source-id'], `partition field ${field.name}`),
      'field-id': partitionFieldIdStart + i,
    })),
  }
  const orderFields = options.sortOrder?.fields ?? []
  const sortOrder: SortOrder = {
    'order-id': orderFields.length === 0 ? 0 : 1,
    fields: orderFields.map((field) => ({ ...field, 'source-id': remap(ids, field['source-id'], 'sort field') })),
  }

  return {
    'format-version': formatVersion,
    'table-uuid': options.tableUuid ?? randomUUID(),
    location: options.location.replace(/\/+$/, ''),
    'last-sequence-number': 0n,
    'last-updated-ms': options.nowMs,
    'last-column-id': lastColumnId,
    'current-schema-id': 0,
    schemas: [schema],
    'default-spec-id': 0,
    'partition-specs': [spec],
    'last-partition-id': partitionFieldIdStart - 1 + spec.fields.length,
    'default-sort-order-id': sortOrder['order-id'],
    'sort-orders': [sortOrder],
    properties,
    'current-snapshot-id': null,
    refs: {},
    snapshots: [],
    statistics: [],
    'partition-statistics': [],
    'snapshot-log': [],
    'metadata-log': [],
  }
}
