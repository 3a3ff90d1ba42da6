import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { NestedField, Schema } from '../types.ts'
import { newTableMetadata } from './create.ts'
import { canPromote, describeSchemaChange, planSchemaChange } from './evolve.ts'
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
