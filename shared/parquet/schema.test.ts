import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isFloeError } from '../errors.ts'
import type { IcebergValue, PrimitiveType, Schema } from '../iceberg/index.ts'
import { decimalRequiredBytes, parquetLayoutOf, sizeEstimateOf } from './schema.ts'

const one = (type: PrimitiveType, required = false): Schema => ({
  type: 'struct',
  'schema-id': 0,
  fields: [{ id: 7, name: 'c', required, type }],
})

test('each Iceberg primitive maps to the Parquet type of the spec appendix', () => {
  const cases: [PrimitiveType, Record<string, unknown>][] = [
    ['boolean', { type: 'BOOLEAN' }],
    ['int', { type: 'INT32' }],
    ['long', { type: 'INT64' }],
    ['float', { type: 'FLOAT' }],
    ['double', { type: 'DOUBLE' }],
    ['date', { type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } }],
    ['time', { type: 'INT64', logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'MICROS' } }],
    ['timestamp', { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' } }],
    [
      'timestamptz',
      {
        type: 'INT64',
        converted_type: 'TIMESTAMP_MICROS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
      },
    ],
    ['string', { type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } }],
    ['uuid', { type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' } }],
    ['binary', { type: 'BYTE_ARRAY' }],
    ['fixed[3]', { type: 'FIXED_LEN_BYTE_ARRAY', type_length: 3 }],
    [
      'decimal(9,2)',
      {
        type: 'INT32',
        converted_type: 'DECIMAL',
        precision: 9,
        scale: 2,
        logical_type: { type: 'DECIMAL', precision: 9, scale: 2 },
      },
    ],
    [
      'decimal(10, 0)',
      {
        type: 'INT64',
        converted_type: 'DECIMAL',
        precision: 10,
        scale: 0,
        logical_type: { type: 'DECIMAL', precision: 10, scale: 0 },
      },
    ],
    [
      'decimal(19,4)',
      {
        type: 'FIXED_LEN_BYTE_ARRAY',
        type_length: 9,
        converted_type: 'DECIMAL',
        precision: 19,
        scale: 4,
        logical_type: { type: 'DECIMAL', precision: 19, scale: 4 },
      },
    ],
  ]
  for (const [type, expected] of cases) {
    for (const required of [true, false]) {
      const { elements } = parquetLayoutOf(one(type, required))
      assert.deepEqual(
        elements[1],
        { name: 'c', field_id: 7, repetition_type: required ? 'REQUIRED' : 'OPTIONAL', ...expected },
        type,
      )
    }
  }
})

test('decimals take the fewest bytes that hold their precision, as Iceberg computes it', () => {
  const cases: [number, number][] = [
    [1, 1],
    [2, 1],
    [3, 2],
    [9, 4],
    [10, 5],
    [18, 8],
    [19, 9],
    [38, 16],
  ]
  for (const [precision, bytes] of cases) assert.equal(decimalRequiredBytes(precision), bytes, `precision ${precision}`)
})

test('lists and maps use the three-level layout with field ids on fields, elements, keys and values', () => {
  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      {
        id: 1,
        name: 'tags',
        required: false,
        type: { type: 'list', 'element-id': 2, element: 'string', 'element-required': true },
      },
      {
        id: 3,
        name: 'attrs',
        required: true,
        type: { type: 'map', 'key-id': 4, key: 'string', 'value-id': 5, value: 'long', 'value-required': false },
      },
      {
        id: 6,
        name: 'place',
        required: false,
        type: { type: 'struct', fields: [{ id: 7, name: 'city', required: true, type: 'string' }] },
      },
    ],
  }
  const { elements, leaves } = parquetLayoutOf(schema)
  assert.deepEqual(
    elements.map(({ name, field_id, repetition_type, num_children, converted_type }) => [
      name,
      field_id,
      repetition_type,
      num_children,
      converted_type,
    ]),
    [
      ['table', undefined, undefined, 3, undefined],
      ['tags', 1, 'OPTIONAL', 1, 'LIST'],
      ['list', undefined, 'REPEATED', 1, undefined],
      ['element', 2, 'REQUIRED', undefined, 'UTF8'],
      ['attrs', 3, 'REQUIRED', 1, 'MAP'],
      ['key_value', undefined, 'REPEATED', 2, undefined],
      ['key', 4, 'REQUIRED', undefined, 'UTF8'],
      ['value', 5, 'OPTIONAL', undefined, undefined],
      ['place', 6, 'OPTIONAL', 1, undefined],
      ['city', 7, 'REQUIRED', undefined, 'UTF8'],
    ],
  )
  assert.deepEqual(
    leaves.map(({ fieldId, path, reachableThroughStructs, topLevelIndex, structPath }) => ({
      fieldId,
      path: path.join('.'),
      reachableThroughStructs,
      topLevelIndex,
      structPath,
    })),
    [
      { fieldId: 2, path: 'tags.list.element', reachableThroughStructs: false, topLevelIndex: 0, structPath: [] },
      { fieldId: 4, path: 'attrs.key_value.key', reachableThroughStructs: false, topLevelIndex: 1, structPath: [] },
      { fieldId: 5, path: 'attrs.key_value.value', reachableThroughStructs: false, topLevelIndex: 1, structPath: [] },
      { fieldId: 7, path: 'place.city', reachableThroughStructs: true, topLevelIndex: 2, structPath: ['city'] },
    ],
  )
})

test('types Parquet data files of format v2 cannot hold are configuration errors', () => {
  for (const type of ['timestamp_ns', 'variant', 'decimal(39,0)', 'decimal(5,6)', 'fixed[0]']) {
    assert.throws(
      () => parquetLayoutOf(one(type as PrimitiveType)),
      (error) => isFloeError(error, 'CONFIG_INVALID'),
      type,
    )
  }
})

test('row sizes are estimated from widths for fixed types and from content for the rest', () => {
  assert.deepEqual(sizeEstimateOf('long'), { fixed: 8 })
  assert.deepEqual(sizeEstimateOf('decimal(19,2)'), { fixed: 9 })
  const estimate = (type: Parameters<typeof sizeEstimateOf>[0], value: IcebergValue) => {
    const size = sizeEstimateOf(type)
    assert.ok('estimate' in size)
    return size.estimate(value)
  }
  assert.equal(estimate('string', 'hello'), 9)
  assert.equal(estimate('string', null), 0)
  assert.equal(estimate('binary', new Uint8Array(10)), 14)
  assert.equal(
    estimate({ type: 'list', 'element-id': 2, element: 'int', 'element-required': false }, [1, null, 3]),
    4 + 1 + 0 + 1 + 4 + 1,
  )
  assert.equal(
    estimate(
      { type: 'map', 'key-id': 2, key: 'string', 'value-id': 3, value: 'long', 'value-required': false },
      new Map([['ab', 1n]]),
    ),
    6 + 8 + 1,
  )
})
