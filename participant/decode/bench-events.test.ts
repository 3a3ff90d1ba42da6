// The benchmark's routes send events where their figures say: evenly over N tables, or nine in
// ten to nine hot tables and the rest evenly over N rare ones.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { benchEvent, benchHotRouteField, benchRoutedDataset } from './bench-events.ts'
import { compileDecoder } from './index.ts'

/** Events per table name over `count` consecutive events. */
function spread(field: string | undefined, tables: number, count: number): Map<string, number> {
  const decoder = compileDecoder(benchRoutedDataset(tables, 'bench', ['127.0.0.1:9092'], 100, field), {
    maxRecordBytes: 1 << 20,
  })
  const counts = new Map<string, number>()
  for (let i = 0; i < count; i++) {
    decoder.decode(benchEvent(i))
    const name = decoder.routeTables?.names[decoder.table] ?? '(none)'
    counts.set(name, (counts.get(name) ?? 0) + 1)
  }
  return counts
}

describe("the benchmark's routes", () => {
  test('routed:N spreads events evenly over N tables', () => {
    const counts = spread(undefined, 1000, 10_000)
    assert.equal(counts.size, 1000)
    assert.deepEqual(new Set(counts.values()), new Set([10]))
  })

  test('hot:N sends nine events in ten to nine tables and the tenth evenly over N others', () => {
    const counts = spread(benchHotRouteField(1000), 1000, 20_000)
    const hot = [...counts].filter(([name]) => /^bench\.events_[1-9]$/.test(name))
    assert.equal(hot.length, 9)
    assert.deepEqual(new Set(hot.map(([, count]) => count)), new Set([2000]))
    const rare = [...counts].filter(([name]) => !/^bench\.events_[1-9]$/.test(name))
    assert.equal(rare.length, 1000)
    assert.ok(rare.every(([name, count]) => count === 2 && Number(name.split('_')[1]) % 10 === 0))
  })
})
