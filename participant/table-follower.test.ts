import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { PartitionSpec, Schema } from '../shared/iceberg/index.ts'
import { isFloeError } from '../shared/index.ts'
import { silentLogger } from '../shared/telemetry/index.ts'
import { TableFollower, type TableShape } from './table-follower.ts'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'string' },
    { id: 2, name: 'kind', required: false, type: 'string' },
  ],
}
const widened: Schema = {
  ...schema,
  'schema-id': 1,
  fields: [...schema.fields, { id: 3, name: 'note', required: false, type: 'string' }],
}
const unpartitioned: PartitionSpec = { 'spec-id': 0, fields: [] }
const byKind: PartitionSpec = {
  'spec-id': 1,
  fields: [{ 'source-id': 2, 'field-id': 1000, name: 'kind', transform: 'identity' }],
}
const unknownTransform: PartitionSpec = {
  'spec-id': 2,
  fields: [{ 'source-id': 2, 'field-id': 1001, name: 'kind_z', transform: 'zorder' }],
}

describe('TableFollower', () => {
  test('a changed schema and spec update the shape in place, once, and their partition type is known', async () => {
    const shape: TableShape = { schema, spec: unpartitioned }
    let table: TableShape = { schema: widened, spec: byKind }
    const follower = new TableFollower(shape, async () => table, silentLogger)
    const changes: TableShape[] = []
    await follower.follow((next) => changes.push(next))
    await follower.follow((next) => changes.push(next))
    assert.equal(changes.length, 1)
    assert.equal(shape.spec, byKind)
    assert.equal(shape.schema, widened)
    assert.deepEqual(
      follower.partitionTypeOf(1, 'f').fields.map((f) => f.name),
      ['kind'],
    )
    assert.deepEqual(follower.partitionTypeOf(0, 'f').fields, [])
    table = { schema: widened, spec: unknownTransform }
    await follower.follow((next) => changes.push(next))
    assert.equal(changes.length, 1, 'a spec it cannot partition by keeps the one in use')
    assert.equal(shape.spec, byKind)
    assert.throws(
      () => follower.partitionTypeOf(2, 'f'),
      (error: unknown) => isFloeError(error, 'INVARIANT_BROKEN'),
    )
  })

  test('a table that cannot be read keeps the shape', async () => {
    const shape: TableShape = { schema, spec: unpartitioned }
    const follower = new TableFollower(shape, () => Promise.reject(new Error('catalog down')), silentLogger)
    await follower.follow(() => assert.fail('no change'))
    assert.equal(shape.spec, unpartitioned)
  })
})
