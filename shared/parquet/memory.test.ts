import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import type { IcebergType, IcebergValue, Schema } from '../iceberg/index.ts'
import { openDataFile } from './index.ts'
import { heldEstimateOf, OPEN_FILE_HEAP_BYTES, ROW_GROUP_HEAP_BYTES_PER_LEAF } from './memory.ts'
import { IDLE_ENCODE_BUFFER_BYTES } from './sink.ts'
import { temporaryDirectory } from './test-support.ts'

function held(type: IcebergType, value: IcebergValue): number {
  const estimate = heldEstimateOf(type)
  return 'fixed' in estimate ? estimate.fixed : estimate.estimate(value)
}

test('every value costs at least its slot in the column array, boxed numbers and bigints more', () => {
  assert.equal(held('boolean', true), 10)
  assert.equal(held('int', 7), 10)
  assert.equal(held('double', 1.5), 24)
  assert.equal(held('long', 5n), 34)
  assert.equal(held('timestamptz', 1_700_000_000_000_000n), 34)
})

test('strings JSON.parse shares (fewer than 10 characters) cost their slot, longer ones their characters too', () => {
  assert.equal(held('string', 'EUR'), 10)
  assert.equal(held('string', null), 10)
  assert.equal(held('string', 'x'.repeat(100)), 130)
})

test('nested values count their containers and every element', () => {
  const list: IcebergType = { type: 'list', 'element-id': 2, element: 'string', 'element-required': false }
  assert.equal(held(list, []), 10 + 72)
  assert.equal(held(list, ['a', 'b'.repeat(20)]), 10 + 72 + 8 + 8 + 40)
  const struct: IcebergType = { type: 'struct', fields: [{ id: 3, name: 'x', required: false, type: 'double' }] }
  assert.equal(held(struct, { x: 2.5 }), 10 + 24 + 8 + 14)
  assert.equal(held(struct, null), 10)
  assert.equal(held('binary', new Uint8Array(16)), 10 + 216 + 16)
})

test("an open writer's held bytes count its state, its buffered rows, and each row group's metadata", async (t) => {
  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'text', required: false, type: 'string' },
    ],
  }
  const writer = await openDataFile({ path: join(await temporaryDirectory(t), 'held.parquet'), schema })
  // the encoder's buffer and the sink's
  const empty = OPEN_FILE_HEAP_BYTES + 2 * IDLE_ENCODE_BUFFER_BYTES
  assert.equal(writer.heldBytes, empty)
  await writer.append([
    { id: 1n, text: 'y'.repeat(50) },
    { id: 2n, text: null },
  ])
  const rows = 2 * (34 + 10) + 70
  assert.equal(writer.bufferedHeldBytes, rows)
  assert.equal(writer.heldBytes, empty + rows)
  await writer.flushRowGroup()
  assert.equal(writer.bufferedHeldBytes, 0)
  // both buffers went back to their idle size once the row group was with the sink
  assert.equal(writer.heldBytes, empty + 2 * ROW_GROUP_HEAP_BYTES_PER_LEAF)
  await writer.close()
  assert.equal(writer.heldBytes, 0)
})
