import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { IcebergValue, PrimitiveType, Schema } from '../iceberg/index.ts'
import { compareUtf8 } from './bounds.ts'
import { parquetLayoutOf } from './schema.ts'
import { statisticsFunctionFor } from './statistics.ts'
import { seededRandom } from './test-support.ts'

function statisticsOf(type: PrimitiveType, values: IcebergValue[]) {
  const schema: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'c', required: false, type }] }
  const [leaf] = parquetLayoutOf(schema).leaves
  return statisticsFunctionFor(leaf!)(values)
}

test('chunk statistics give min, max and counts per column type', () => {
  const cases: [PrimitiveType, IcebergValue[], Record<string, unknown>][] = [
    ['long', [5n, null, -3n, 9n], { min_value: -3n, max_value: 9n, null_count: 1n }],
    ['int', [2, 2, 2], { min_value: 2, max_value: 2, null_count: 0n }],
    ['boolean', [true, null, false], { min_value: false, max_value: true, null_count: 1n }],
    ['string', ['b', 'a', null, 'c'], { min_value: 'a', max_value: 'c', null_count: 1n }],
    [
      'binary',
      [Uint8Array.of(2), Uint8Array.of(1, 9), Uint8Array.of(0xff)],
      {
        min_value: Uint8Array.of(1, 9),
        max_value: Uint8Array.of(0xff),
        null_count: 0n,
      },
    ],
    ['double', [Number.NaN, 1.5, null, -2], { min_value: -2, max_value: 1.5, null_count: 1n, nan_count: 1n }],
    ['double', [Number.NaN, null], { null_count: 1n, nan_count: 1n }],
    ['float', [0, 3], { min_value: -0, max_value: 3, null_count: 0n, nan_count: 0n }],
    ['double', [-0, -1], { min_value: -1, max_value: 0, null_count: 0n, nan_count: 0n }],
    ['string', [null, null], { min_value: undefined, max_value: undefined, null_count: 2n }],
  ]
  for (const [type, values, expected] of cases) {
    const statistics = statisticsOf(type, values)
    assert.deepEqual({ ...statistics }, expected, `${type} ${String(values)}`)
  }
})

test('string min and max follow UTF-8 order whatever characters the current extremes hold', () => {
  const random = seededRandom(99)
  const alphabet = ['a', 'b', 'é', '\uD7FF', '\uE000', '\uFFFF', '\u{10000}', '\u{1F600}', '\u{10FFFF}']
  for (let round = 0; round < 500; round++) {
    const values = Array.from({ length: 1 + Math.floor(random() * 8) }, () =>
      Array.from({ length: Math.floor(random() * 4) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''),
    )
    const sorted = [...values].sort(compareUtf8)
    const { min_value, max_value } = statisticsOf('string', values)
    assert.equal(min_value, sorted[0], JSON.stringify(values))
    assert.equal(max_value, sorted.at(-1), JSON.stringify(values))
  }
})
