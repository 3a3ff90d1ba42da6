import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createMetrics } from '../shared/telemetry/index.ts'
import { TableGauges, tableTotals } from './table-gauges.ts'

const summary = (entries: Record<string, string>) => ({ summary: { operation: 'append' as const, ...entries } })

describe('the table gauges', () => {
  test("come from the snapshot summary's totals", () => {
    assert.deepEqual(tableTotals(summary({ 'total-data-files': '4', 'total-files-size': '1000' })), {
      dataFiles: 4,
      averageFileBytes: 250,
    })
  })

  test('a table without a snapshot has no files, and an average of 0', () => {
    assert.deepEqual(tableTotals(undefined), { dataFiles: 0, averageFileBytes: 0 })
    assert.deepEqual(tableTotals(summary({ 'total-data-files': '0', 'total-files-size': '0' })), {
      dataFiles: 0,
      averageFileBytes: 0,
    })
  })

  test('a summary without totals (a writer that keeps none) leaves the gauges as they were', async () => {
    assert.equal(tableTotals(summary({})), undefined)
    const metrics = createMetrics({ defaultMetrics: false })
    const gauges = new TableGauges(metrics, 'events')
    gauges.set(summary({ 'total-data-files': '2', 'total-files-size': '300' }))
    gauges.set(summary({ 'added-data-files': '1' }))
    assert.deepEqual(
      (await metrics.tableDataFiles.get()).values.map((v) => v.value),
      [2],
    )
    assert.deepEqual(
      (await metrics.tableAverageFileBytes.get()).values.map((v) => v.value),
      [150],
    )
  })

  test('a coordinator that stops exports no table any more', async () => {
    const metrics = createMetrics({ defaultMetrics: false })
    const gauges = new TableGauges(metrics, 'events')
    gauges.set(summary({ 'total-data-files': '2', 'total-files-size': '300' }))
    gauges.clear()
    assert.deepEqual((await metrics.tableDataFiles.get()).values, [])
    assert.deepEqual((await metrics.tableAverageFileBytes.get()).values, [])
  })
})
