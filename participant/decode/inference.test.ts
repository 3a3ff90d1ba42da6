import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { NestedField } from '../../shared/iceberg/index.ts'
import { isFloeError } from '../../shared/index.ts'
import { compileWideningCheck, fieldCount, type InferenceRules, inferFields, inferType } from './inference.ts'

const rules: InferenceRules = { timestampPaths: new Set(['at', 'items.seen']), reserved: new Set(['kafka_offset']) }

const field = (name: string, type: NestedField['type'], id = 0): NestedField => ({ id, name, required: false, type })

describe('inferType', () => {
  test('primitives: booleans, numbers by what they need, strings', () => {
    assert.equal(inferType(true, 'x', rules), 'boolean')
    assert.equal(inferType(7, 'x', rules), 'int')
    assert.equal(inferType(-(2 ** 31), 'x', rules), 'int')
    assert.equal(inferType(2 ** 31, 'x', rules), 'long')
    assert.equal(inferType(1.5, 'x', rules), 'double')
    // JSON.parse has rounded an integer this large: a long column refuses it (send it as a string)
    assert.equal(inferType(1e300, 'x', rules), 'long')
    assert.equal(inferType('hi', 'x', rules), 'string')
  })

  test('a string at a timestampFields path is a timestamptz, also inside lists', () => {
    assert.equal(inferType('2026-01-01T00:00:00Z', 'at', rules), 'timestamptz')
    assert.deepEqual(inferType([{ seen: '2026-01-01T00:00:00Z' }], 'items', rules), {
      type: 'list',
      'element-id': 0,
      'element-required': false,
      element: { type: 'struct', fields: [field('seen', 'timestamptz')] },
    })
  })

  test('null, {} and [] say nothing; neither do containers of only those', () => {
    for (const value of [null, {}, [], [null], { a: null }, [[]]]) assert.equal(inferType(value, 'x', rules), undefined)
  })

  test('the elements of an array join: numbers to the widest, objects to the union of their fields', () => {
    assert.deepEqual(inferType([1, 2 ** 40, 0.5], 'x', rules), {
      type: 'list',
      'element-id': 0,
      'element-required': false,
      element: 'double',
    })
    const list = inferType([{ a: 1 }, { b: 'x', a: 2 ** 33 }], 'x', rules)
    assert.deepEqual(list, {
      type: 'list',
      'element-id': 0,
      'element-required': false,
      element: { type: 'struct', fields: [field('a', 'long'), field('b', 'string')] },
    })
  })

  test('field names that cannot be columns refuse the record, naming the field', () => {
    for (const [record, path] of [
      [{ '': 1 }, ''],
      [{ 'a.b': 1 }, 'a.b'],
      [{ outer: { 'x.y': 1 } }, 'outer.x.y'],
      [JSON.parse('{"__proto__": 1}'), '__proto__'],
      [{ kafka_offset: 3 }, 'kafka_offset'],
    ] as const) {
      assert.throws(
        () => inferFields(record, rules),
        (error: unknown) =>
          isFloeError(error, 'RECORD_MALFORMED') &&
          error.details.reason === 'field-name' &&
          error.details.column === path,
      )
    }
    // names that differ only in case, in one object
    assert.throws(
      () => inferFields({ user: { Name: 'a', name: 'b' } }, rules),
      (error: unknown) =>
        isFloeError(error, 'RECORD_MALFORMED') &&
        error.details.reason === 'field-name' &&
        /'user.name' differs from 'Name' only in case/.test(error.message),
    )
    // a reserved name is a column name only at the top
    assert.deepEqual(inferFields({ nested: { kafka_offset: 1 } }, rules), [
      field('nested', { type: 'struct', fields: [field('kafka_offset', 'int')] }),
    ])
  })
})

describe('compileWideningCheck', () => {
  const fields = [
    field('id', 'int', 1),
    field('user', { type: 'struct', fields: [field('name', 'string', 3)] }, 2),
    field('scores', { type: 'list', 'element-id': 5, 'element-required': false, element: 'int' }, 4),
  ]
  const needsWidening = compileWideningCheck(fields, rules)

  test('a record of known fields, in range, needs nothing', () => {
    assert.equal(needsWidening({ id: 1, user: { name: 'a' }, scores: [1, 2] }), false)
    assert.equal(needsWidening({}), false)
    assert.equal(needsWidening({ extra: null, other: {}, more: [] }), false)
  })

  test('a new field at any depth, or an integer beyond an int column (or element), needs widening', () => {
    assert.equal(needsWidening({ extra: 1 }), true)
    assert.equal(needsWidening({ user: { age: 3 } }), true)
    assert.equal(needsWidening({ id: 2 ** 31 }), true)
    assert.equal(needsWidening({ scores: [1, -(2 ** 31) - 1] }), true)
  })

  test('a new field whose name differs from a column of its struct only in case refuses the record', () => {
    for (const [record, message] of [
      [{ ID: 1 }, /'ID' differs from 'id' only in case/],
      [{ user: { NAME: 'x' } }, /'user.NAME' differs from 'name' only in case/],
      [{ Kafka_Offset: 1 }, /'Kafka_Offset' differs from 'kafka_offset' only in case/],
    ] as const) {
      assert.throws(
        () => needsWidening(record),
        (error: unknown) =>
          isFloeError(error, 'RECORD_MALFORMED') &&
          error.details.reason === 'field-name' &&
          message.test(error.message),
      )
    }
    // the reserved name itself is a new field here; inferring it says why it cannot be one
    assert.equal(needsWidening({ kafka_offset: 1 }), true)
  })

  test('a value of another kind is left to the converter: widening cannot mend it', () => {
    assert.equal(needsWidening({ id: 1.5 }), false)
    assert.equal(needsWidening({ id: 'x', user: 'y', scores: 3 }), false)
  })
})

test('fieldCount counts fields, list elements, and map keys and values', () => {
  assert.equal(
    fieldCount([
      field('a', 'int'),
      field('b', { type: 'list', 'element-id': 0, 'element-required': false, element: 'int' }),
      field('c', { type: 'map', 'key-id': 0, key: 'string', 'value-id': 0, value: 'long', 'value-required': false }),
    ]),
    6,
  )
})
