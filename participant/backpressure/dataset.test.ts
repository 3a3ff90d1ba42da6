import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Backpressure, DatasetBackpressure } from './index.ts'

const neverTimers = { setTimeout: () => undefined, clearTimeout: () => {} }

function worker(diskPct: { value: number }) {
  return new Backpressure({
    limits: { diskHighWatermarkPct: 80, maxPendingUploadBytes: 1000, maxOpenSegmentMemoryBytes: 2000 },
    measureDisk: async () => diskPct.value,
    clock: { now: () => 0 },
    timers: neverTimers,
  })
}

function view(monitor: Backpressure, reporter: string) {
  const dataset = new DatasetBackpressure(monitor, { reporter, maxPendingUploadBytes: 1000 })
  const events: string[] = []
  dataset.on('pause', (reasons) => events.push(`pause ${reasons.join(',')}`))
  dataset.on('resume', () => events.push('resume'))
  return { dataset, events }
}

describe("a dataset's backpressure", () => {
  test("one dataset's upload backlog pauses that dataset alone", () => {
    const monitor = worker({ value: 10 })
    const a = view(monitor, 'a')
    const b = view(monitor, 'b')
    a.dataset.setPendingUploadBytes(1000)
    assert.deepEqual(a.dataset.reasons, ['upload-backlog'])
    assert.equal(b.dataset.paused, false)
    assert.equal(monitor.paused, false)
    // resumes below 95 % of its own cap only
    a.dataset.setPendingUploadBytes(960)
    assert.equal(a.dataset.paused, true)
    a.dataset.setPendingUploadBytes(940)
    assert.deepEqual(a.events, ['pause upload-backlog', 'resume'])
    assert.deepEqual(b.events, [])
  })

  test('the WAL disk is one disk: its watermark pauses every dataset', async () => {
    const disk = { value: 10 }
    const monitor = worker(disk)
    const a = view(monitor, 'a')
    const b = view(monitor, 'b')
    a.dataset.setPendingUploadBytes(1000)
    disk.value = 85
    await monitor.checkDisk()
    assert.deepEqual(a.dataset.reasons, ['disk', 'upload-backlog'])
    assert.deepEqual(b.dataset.reasons, ['disk'])
    disk.value = 50
    await monitor.checkDisk()
    assert.deepEqual(a.dataset.reasons, ['upload-backlog'])
    assert.deepEqual(b.events, ['pause disk', 'resume'])
    assert.deepEqual(a.events, ['pause upload-backlog'])
  })

  test('open segments share one heap: memory adds up over datasets on the worker', () => {
    const monitor = worker({ value: 10 })
    const a = view(monitor, 'a')
    const b = view(monitor, 'b')
    a.dataset.setOpenSegmentMemoryBytes(1500)
    assert.equal(b.dataset.paused, false)
    b.dataset.setOpenSegmentMemoryBytes(600)
    assert.deepEqual(a.dataset.reasons, ['memory'])
    assert.deepEqual(b.dataset.reasons, ['memory'])
    // a closed view takes its share out
    b.dataset.close()
    a.dataset.setOpenSegmentMemoryBytes(1500)
    assert.equal(monitor.openSegmentMemoryBytes, 1500)
    assert.equal(a.dataset.paused, false)
  })
})
