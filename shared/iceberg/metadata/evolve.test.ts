import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { NestedField, Schema } from '../types.ts'
import { newTableMetadata } from './create.ts'
import { canPromote, describeSchemaChange, planSchemaChange, planWidening, widenFields } from './evolve.ts'
import { currentSchema } from './lookup.ts'
import { applyUpdates } from './updates.ts'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'string' },
    { id: 2, name: 'count', required: false, type: 'int' },
    { id: 3, name: 'price', required: false, type: 'decimal(9, 2)' },
    {
      id: 4,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 5, element: 'string', 'element-required': false },
    },
  ],
}
const table = newTableMetadata({ location: 'file:///t', schema, nowMs: 0 })
const field = (name: string, type: NestedField['type'], required = false): NestedField => ({
  id: 0,
  name,
  required,
  type,
})

describe('planning a schema change', () => {
  test('nothing to do when the table has every column with its type', () => {
    const change = planSchemaChange(table, currentSchema(table).fields)
    assert.equal(change.commit, undefined)
  })

  test('adds missing columns as optional, their nested ids after the last, and widens what may widen', () => {
    const change = planSchemaChange(table, [
      field('id', 'string', true),
      field('count', 'long'),
      field('price', 'decimal(12, 2)'),
      field('note', 'string', true),
      field('where', { type: 'struct', fields: [field('city', 'string'), field('zip', 'int')] }),
    ])
    assert.deepEqual(change.added, ['note', 'where'])
    assert.deepEqual(change.promoted, [
      { column: 'count', from: 'int', to: 'long' },
      { column: 'price', from: 'decimal(9, 2)', to: 'decimal(12, 2)' },
    ])
    assert.equal(
      describeSchemaChange(change),
      'columns note, where; widens count (int to long), price (decimal(9, 2) to decimal(12, 2))',
    )
    assert.ok(change.commit)
    const evolved = applyUpdates(table, change.commit.updates, 1)
    const fields = currentSchema(evolved).fields
    assert.equal(currentSchema(evolved)['schema-id'], 1)
    assert.equal(evolved['last-column-id'], 9)
    assert.deepEqual(
      fields.map((f) => [f.id, f.name, f.required, typeof f.type === 'string' ? f.type : f.type.type]),
      [
        [1, 'id', true, 'string'],
        [2, 'count', false, 'long'],
        [3, 'price', false, 'decimal(12, 2)'],
        [4, 'tags', false, 'list'],
        [6, 'note', false, 'string'],
        [7, 'where', false, 'struct'],
      ],
    )
    const where = fields[5]?.type
    assert.ok(typeof where === 'object' && where.type === 'struct')
    assert.deepEqual(
      where.fields.map((f) => f.id),
      [8, 9],
    )
    // the commit holds only on the schema it was planned on
    assert.deepEqual(change.commit.requirements, [
      { type: 'assert-current-schema-id', 'current-schema-id': 0 },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 5 },
    ])
  })

  test('leaves a narrowing, a changed scale and a changed nested type to the schema check', () => {
    const change = planSchemaChange(table, [
      field('count', 'string'),
      field('price', 'decimal(12, 3)'),
      field('tags', { type: 'list', 'element-id': 0, element: 'long', 'element-required': false }),
    ])
    assert.equal(change.commit, undefined)
    assert.equal(canPromote('long', 'int'), false)
    assert.equal(canPromote('double', 'float'), false)
    assert.equal(canPromote('float', 'double'), true)
    assert.equal(canPromote('decimal(12, 2)', 'decimal(9, 2)'), false)
  })
})

describe('widening a schema for inferred fields', () => {
  const nested: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'id', required: false, type: 'int' },
      {
        id: 2,
        name: 'user',
        required: false,
        type: { type: 'struct', fields: [{ id: 3, name: 'name', required: false, type: 'string' }] },
      },
      {
        id: 4,
        name: 'items',
        required: false,
        type: {
          type: 'list',
          'element-id': 5,
          'element-required': false,
          element: { type: 'struct', fields: [{ id: 6, name: 'sku', required: false, type: 'string' }] },
        },
      },
    ],
  }
  // a new table numbers its fields breadth first: id 1, user 2, items 3, user.name 4, element 5, sku 6
  const base = newTableMetadata({ location: 'file:///t', schema: nested, nowMs: 0 })
  const list = (element: NestedField['type']): NestedField['type'] => ({
    type: 'list',
    'element-id': 0,
    'element-required': false,
    element,
  })

  test('fields the table has, with their types, change nothing: the same array comes back', () => {
    const fields = currentSchema(base).fields
    assert.equal(widenFields(fields, [field('id', 'int'), field('user', { type: 'struct', fields: [] })]), fields)
    assert.equal(planWidening(base, [field('id', 'int')]).commit, undefined)
  })

  test('adds fields at any depth with fresh ids, widens int to long, and leaves other mismatches alone', () => {
    const change = planWidening(base, [
      field('id', 'long'),
      field('user', { type: 'struct', fields: [field('name', 'int'), field('age', 'int')] }),
      field('items', list({ type: 'struct', fields: [field('qty', 'int')] })),
      field('seen', list({ type: 'struct', fields: [field('at', 'timestamptz')] })),
    ])
    assert.deepEqual(change.added, ['user.age', 'items.element.qty', 'seen'])
    assert.deepEqual(change.promoted, [{ column: 'id', from: 'int', to: 'long' }])
    assert.ok(change.commit)
    const evolved = applyUpdates(base, change.commit.updates, 1)
    const schema = currentSchema(evolved)
    assert.equal(schema['schema-id'], 1)
    assert.equal(evolved['last-column-id'], 11)
    assert.deepEqual(schema.fields[0], { id: 1, name: 'id', required: false, type: 'long' })
    assert.deepEqual(schema.fields[1]?.type, {
      type: 'struct',
      fields: [
        { id: 4, name: 'name', required: false, type: 'string' },
        { id: 7, name: 'age', required: false, type: 'int' },
      ],
    })
    const items = schema.fields[2]?.type
    assert.ok(typeof items === 'object' && items.type === 'list' && typeof items.element === 'object')
    assert.deepEqual(items.element, {
      type: 'struct',
      fields: [
        { id: 6, name: 'sku', required: false, type: 'string' },
        { id: 8, name: 'qty', required: false, type: 'int' },
      ],
    })
    assert.deepEqual(schema.fields[3], {
      id: 9,
      name: 'seen',
      required: false,
      type: {
        type: 'list',
        'element-id': 10,
        'element-required': false,
        element: { type: 'struct', fields: [{ id: 11, name: 'at', required: false, type: 'timestamptz' }] },
      },
    })
    assert.deepEqual(change.commit.requirements, [
      { type: 'assert-current-schema-id', 'current-schema-id': 0 },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': 6 },
    ])
  })

  test('planned again on a table another writer widened, only what is still missing is added', () => {
    const first = planWidening(base, [field('age', 'int')])
    assert.ok(first.commit)
    const widened = applyUpdates(base, first.commit.updates, 1)
    const again = planWidening(widened, [field('age', 'int'), field('city', 'string')])
    assert.deepEqual(again.added, ['city'])
    assert.ok(again.commit)
    const fields = currentSchema(applyUpdates(widened, again.commit.updates, 2)).fields
    assert.deepEqual(
      fields.map((f) => [f.id, f.name]),
      [
        [1, 'id'],
        [2, 'user'],
        [3, 'items'],
        [7, 'age'],
        [8, 'city'],
      ],
    )
  })
})
