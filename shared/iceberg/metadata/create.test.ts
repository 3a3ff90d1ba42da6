import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../errors.ts'
import type { Schema } from '../types.ts'
import { assignFreshIds, newTableMetadata, parseTableMetadata, serializeTableMetadata } from './index.ts'

// Sent to the Iceberg REST catalog (Java, 1.10) with ids 50..70; what it answered is `renumbered`.
const nested: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [70],
  fields: [
    {
      id: 50,
      name: 'a',
      required: true,
      type: {
        type: 'struct',
        fields: [
          { id: 51, name: 'x', required: false, type: 'int' },
          {
            id: 52,
            name: 'y',
            required: false,
            type: {
              type: 'list',
              'element-id': 53,
              element: { type: 'struct', fields: [{ id: 54, name: 'q', required: false, type: 'string' }] },
              'element-required': false,
            },
          },
        ],
      },
    },
    {
      id: 60,
      name: 'm',
      required: false,
      type: {
        type: 'map',
        'key-id': 61,
        key: 'string',
        'value-id': 62,
        value: { type: 'struct', fields: [{ id: 63, name: 'v', required: false, type: 'long' }] },
        'value-required': true,
      },
    },
    { id: 70, name: 'b', required: true, type: 'long' },
  ],
}

const renumbered: Schema = {
  type: 'struct',
  'schema-id': 0,
  'identifier-field-ids': [3],
  fields: [
    {
      id: 1,
      name: 'a',
      required: true,
      type: {
        type: 'struct',
        fields: [
          { id: 4, name: 'x', required: false, type: 'int' },
          {
            id: 5,
            name: 'y',
            required: false,
            type: {
              type: 'list',
              'element-id': 6,
              element: { type: 'struct', fields: [{ id: 7, name: 'q', required: false, type: 'string' }] },
              'element-required': false,
            },
          },
        ],
      },
    },
    {
      id: 2,
      name: 'm',
      required: false,
      type: {
        type: 'map',
        'key-id': 8,
        key: 'string',
        'value-id': 9,
        value: { type: 'struct', fields: [{ id: 10, name: 'v', required: false, type: 'long' }] },
        'value-required': true,
      },
    },
    { id: 3, name: 'b', required: true, type: 'long' },
  ],
}

describe('assignFreshIds', () => {
  test('numbers fields as the Iceberg REST catalog does: each level first, then depth-first', () => {
    const fresh = assignFreshIds(nested)
    assert.deepEqual(fresh.schema, renumbered)
    assert.equal(fresh.lastColumnId, 10)
    assert.equal(fresh.ids.get(70), 3)
  })
})

describe('newTableMetadata', () => {
  const metadata = newTableMetadata({
    schema: nested,
    spec: { fields: [{ name: 'b_bucket', transform: 'bucket[4]', 'source-id': 70 }] },
    sortOrder: {
      'order-id': 7,
      fields: [{ transform: 'identity', 'source-id': 70, direction: 'asc', 'null-order': 'nulls-first' }],
    },
    location: 'file:///warehouse/db/t/',
    properties: { 'format-version': '2', owner: 'floe' },
    nowMs: 1_700_000_000_000,
  })

  test('gives the partition spec and sort order the ids the REST catalog gives', () => {
    assert.deepEqual(metadata['partition-specs'], [
      { 'spec-id': 0, fields: [{ name: 'b_bucket', transform: 'bucket[4]', 'source-id': 3, 'field-id': 1000 }] },
    ])
    assert.equal(metadata['last-partition-id'], 1000)
    assert.deepEqual(metadata['sort-orders'], [
      {
        'order-id': 1,
        fields: [{ transform: 'identity', 'source-id': 3, direction: 'asc', 'null-order': 'nulls-first' }],
      },
    ])
    assert.equal(metadata['default-sort-order-id'], 1)
  })

  test('starts an empty v2 table without snapshots', () => {
    assert.equal(metadata['format-version'], 2)
    assert.equal(metadata['last-column-id'], 10)
    assert.equal(metadata['last-sequence-number'], 0n)
    assert.equal(metadata['current-snapshot-id'], null)
    assert.equal(metadata.location, 'file:///warehouse/db/t')
    assert.deepEqual(metadata.properties, { owner: 'floe' }, 'format-version is not stored as a property')
    assert.match(metadata['table-uuid'], /^[0-9a-f-]{36}$/)
  })

  test('writes a file that reads back the same', () => {
    assert.deepEqual(parseTableMetadata(serializeTableMetadata(metadata)), metadata)
  })

  test('gives an unpartitioned, unsorted table spec 0 with no fields and order 0', () => {
    const plain = newTableMetadata({ schema: renumbered, location: 'file:///t', nowMs: 1 })
    assert.deepEqual(plain['partition-specs'], [{ 'spec-id': 0, fields: [] }])
    assert.equal(plain['last-partition-id'], 999)
    assert.deepEqual(plain['sort-orders'], [{ 'order-id': 0, fields: [] }])
  })

  test('refuses a partition field whose source is not in the schema', () => {
    assert.throws(
      () =>
        newTableMetadata({
          schema: renumbered,
          spec: { fields: [{ name: 'nope', transform: 'identity', 'source-id': 99 }] },
          location: 'file:///t',
          nowMs: 1,
        }),
      (error) => isFloeError(error, 'CATALOG_BAD_REQUEST'),
    )
  })
})
