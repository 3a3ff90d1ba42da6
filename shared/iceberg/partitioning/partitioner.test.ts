import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../errors.ts'
import type { PartitionField, Schema, StructValue } from '../types.ts'
import { compileRowConverter } from '../values/index.ts'
import { bindPartitionSpec, compilePartitioner, partitionPath, partitionType } from './index.ts'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'kind', required: false, type: 'string' },
    {
      id: 4,
      name: 'user',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 5, name: 'country', required: false, type: 'string' },
          { id: 6, name: 'born', required: false, type: 'date' },
        ],
      },
    },
    {
      id: 7,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 8, element: 'string', 'element-required': false },
    },
    { id: 9, name: 'amount', required: false, type: 'decimal(9,2)' },
    { id: 10, name: 'payload', required: false, type: 'binary' },
  ],
}
const toRow = compileRowConverter(schema)

function spec(...fields: [number, string, string][]) {
  return {
    'spec-id': 1,
    fields: fields.map(
      ([source, name, transform], i): PartitionField => ({
        'source-id': source,
        'field-id': 1000 + i,
        name,
        transform,
      }),
    ),
  }
}

describe('a compiled partitioner', () => {
  const partitioner = compilePartitioner(
    spec(
      [2, 'ts_day', 'day'],
      [1, 'id_bucket', 'bucket[16]'],
      [5, 'country', 'identity'],
      [9, 'amount_trunc', 'truncate[50]'],
    ),
    schema,
  )

  test('computes the partition tuple of a row, reaching into nested structs', () => {
    const row = toRow({ id: 34, ts: '2017-11-16T22:31:08Z', user: { country: 'NZ' }, amount: '10.65' })
    assert.deepEqual(partitioner.partition(row), { ts_day: 17486, id_bucket: 3, country: 'NZ', amount_trunc: 1050n })
  })

  test('gives null for a null source and for a source under a null struct', () => {
    const row = toRow({ id: 34 })
    assert.deepEqual(partitioner.partition(row), { ts_day: null, id_bucket: 3, country: null, amount_trunc: null })
  })

  test('prints the tuple as an escaped directory path', () => {
    const row = toRow({ id: 34, ts: '2017-11-16T22:31:08Z', user: { country: 'New Zealand/Aotearoa' }, amount: -0.05 })
    assert.equal(
      partitioner.path(partitioner.partition(row)),
      'ts_day=2017-11-16/id_bucket=3/country=New+Zealand%2FAotearoa/amount_trunc=-0.50',
    )
    assert.equal(
      partitioner.path(partitioner.partition(toRow({ id: 1 }))),
      'ts_day=null/id_bucket=4/country=null/amount_trunc=null',
    )
  })

  test('keys a row the same as the tuple made from it', () => {
    for (const event of [
      { id: 1 },
      { id: 34, ts: 0, user: { country: 'a,b' } },
      { id: -5, ts: '1969-12-31T23:59:59Z', amount: 99.99, user: { country: '' } },
    ]) {
      const row = toRow(event)
      assert.equal(partitioner.key(row), partitioner.keyOf(partitioner.partition(row)))
    }
  })

  test('gives different tuples different keys, even when strings hold the separator', () => {
    const p = compilePartitioner(spec([3, 'kind', 'identity'], [5, 'country', 'identity']), schema)
    const tuples: StructValue[] = [
      { kind: 'a,1:b', country: 'c' },
      { kind: 'a', country: 'b,1:c' },
      { kind: null, country: 'c' },
      { kind: '~', country: 'c' },
      { kind: '', country: null },
      { kind: null, country: '' },
      { kind: null, country: null },
    ]
    const keys = new Set(tuples.map((t) => p.keyOf(t)))
    assert.equal(keys.size, tuples.length, [...keys].join(' | '))
  })

  test('keys binary partitions by their bytes', () => {
    const p = compilePartitioner(spec([10, 'p', 'truncate[2]']), schema)
    const a = toRow({ id: 1, payload: Buffer.from([1, 2, 3]).toString('base64') })
    const b = toRow({ id: 1, payload: Buffer.from([1, 2, 4]).toString('base64') })
    const c = toRow({ id: 1, payload: Buffer.from([1, 3]).toString('base64') })
    assert.equal(p.key(a), p.key(b))
    assert.notEqual(p.key(a), p.key(c))
  })

  test('declares the manifest partition type with field ids and result types, day as date', () => {
    assert.deepEqual(partitioner.partitionType, {
      type: 'struct',
      fields: [
        { id: 1000, name: 'ts_day', required: false, type: 'date' },
        { id: 1001, name: 'id_bucket', required: false, type: 'int' },
        { id: 1002, name: 'country', required: false, type: 'string' },
        { id: 1003, name: 'amount_trunc', required: false, type: 'decimal(9,2)' },
      ],
    })
    assert.deepEqual(partitionType(spec([2, 'ts_hour', 'hour']), schema).fields[0]?.type, 'int')
  })
})

describe('an unpartitioned spec', () => {
  test('has the empty tuple, the empty key and the empty path', () => {
    const p = compilePartitioner({ 'spec-id': 0, fields: [] }, schema)
    const row = toRow({ id: 1 })
    assert.equal(p.unpartitioned, true)
    assert.deepEqual(p.partition(row), {})
    assert.equal(p.key(row), '')
    assert.equal(p.path({}), '')
    assert.equal(partitionPath({ 'spec-id': 0, fields: [] }, schema, {}), '')
  })
})

describe('a spec that does not fit the schema', () => {
  const bad: [string, ReturnType<typeof spec>][] = [
    ['a source id that is not in the schema', spec([99, 'x', 'identity'])],
    ['a source inside a list', spec([8, 'tag', 'identity'])],
    ['a struct source', spec([4, 'user', 'identity'])],
    ['a transform the source type does not take', spec([3, 'kind_day', 'day'])],
    ['an unknown transform', spec([1, 'id_x', 'zorder'])],
    ['two fields of one name', spec([1, 'x', 'identity'], [3, 'x', 'identity'])],
  ]
  for (const [what, partitionSpec] of bad) {
    test(`is refused as invalid configuration for ${what}`, () => {
      assert.throws(
        () => bindPartitionSpec(partitionSpec, schema),
        (e) => isFloeError(e, 'CONFIG_INVALID'),
      )
      assert.throws(
        () => compilePartitioner(partitionSpec, schema),
        (e) => isFloeError(e, 'CONFIG_INVALID'),
      )
    })
  }
})
