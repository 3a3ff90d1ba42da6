// Another engine evolves the table while a log is open: segments already open keep the schema and
// spec they were opened with and become ready under them at the next rotation; every segment
// opened after follows the new ones.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Schema } from '../../shared/iceberg/index.ts'
import { PartitionLog } from './partition-log.ts'
import {
  daysAndCountries,
  eventSchema,
  events,
  SettableClock,
  temporaryDirectory,
  unpartitioned,
} from './test-support.ts'

const widened: Schema = {
  ...eventSchema,
  'schema-id': 1,
  fields: [...eventSchema.fields, { id: 7, name: 'note', required: false, type: 'string' }],
}

describe('PartitionLog when the table changes', () => {
  test('open segments finish under their spec; segments opened after the change follow the new one', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = new PartitionLog({
      dir,
      topic: 'events',
      partition: 0,
      schema: eventSchema,
      spec: unpartitioned,
      startOffset: 0n,
      clock: new SettableClock(),
    })
    await log.append(events(0, 10), 10n)
    await log.useTable(widened, daysAndCountries)
    assert.equal(log.table.spec, daysAndCountries)
    // still the open segment of the old spec: one file, no partition
    await log.append(events(10, 10), 20n)
    assert.equal(log.openSegmentCount, 1)
    const before = await log.rotate('commit')
    assert.deepEqual(
      before?.segments.map((s) => [s.dataFile.specId, s.dataFile.recordCount, s.partitionPath]),
      [[0, 20n, '']],
    )
    await log.append(events(20, 8), 28n)
    assert.equal(log.openSegmentCount, 4)
    const after = await log.rotate('commit')
    assert.ok(after)
    assert.deepEqual(new Set(after.segments.map((s) => s.dataFile.specId)), new Set([1]))
    assert.ok(after.segments.every((s) => s.partitionPath.startsWith('ts_day=')))
    assert.equal(
      after.segments.reduce((sum, s) => sum + s.dataFile.recordCount, 0n),
      8n,
    )
    await log.close()
  })

  test('with no segment open, the change applies at once', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = new PartitionLog({
      dir,
      topic: 'events',
      partition: 0,
      schema: eventSchema,
      spec: unpartitioned,
      startOffset: 0n,
      clock: new SettableClock(),
    })
    await log.useTable(widened, daysAndCountries)
    await log.append(events(0, 4), 4n)
    const rotation = await log.rotate('commit')
    assert.deepEqual(new Set(rotation?.segments.map((s) => s.dataFile.specId)), new Set([1]))
    await log.close()
  })
})
