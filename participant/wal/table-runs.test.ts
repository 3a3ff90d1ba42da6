import assert from 'node:assert/strict'
import { test } from 'node:test'
import { groupByTable } from './table-runs.ts'

test('a batch grouped by table: tables in order of first appearance, rows and keys in batch order', () => {
  const rows = [0, 1, 2, 3, 4, 5].map((n) => ({ n }))
  const keys = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'stale', 'stale']
  const runs = groupByTable(rows, keys, [7, 7, 2, 7, 0, 2])
  assert.deepEqual(
    runs.map(({ table, rows, keys }) => [table, rows.map((row) => row.n), keys]),
    [
      [7, [0, 1, 3], ['k0', 'k1', 'k3']],
      [2, [2, 5], ['k2', 'k5']],
      [0, [4], ['k4']],
    ],
  )
})
