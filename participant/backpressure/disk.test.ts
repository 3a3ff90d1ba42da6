import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { isFloeError } from '../../shared/index.ts'
import { Backpressure, bytesUnder, systemClock, walDiskUsage } from './index.ts'

async function tempDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-backpressure-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}

describe('the WAL volume measurement', () => {
  test('counts the bytes of every file under the WAL directory, and nothing behind a link', async (t) => {
    const wal = await tempDir(t)
    await mkdir(join(wal, 'events', 'events-0'), { recursive: true })
    await mkdir(join(wal, 'events', 'events-1'), { recursive: true })
    await writeFile(join(wal, 'events', 'events-0', 'ready_events_0_0-10_a.parquet'), Buffer.alloc(300))
    await writeFile(join(wal, 'events', 'events-0', 'ready_events_0_0-10_a.json'), Buffer.alloc(20))
    await writeFile(join(wal, 'events', 'events-1', 'active_events_1_b.parquet'), Buffer.alloc(180))
    await symlink(join(wal, 'events', 'events-0'), join(wal, 'link'))
    assert.equal(await bytesUnder(wal), 500)
    assert.equal(await walDiskUsage(wal, { volumeSizeBytes: 1000 })(), 50)
  })

  test('a WAL directory that does not exist yet holds nothing', async (t) => {
    const dir = await tempDir(t)
    assert.equal(await bytesUnder(join(dir, 'missing')), 0)
  })

  test('without a configured size, it is the filesystem`s used percentage', async () => {
    const pct = await walDiskUsage(tmpdir())()
    assert.ok(pct >= 0 && pct <= 100, String(pct))
  })

  test('a configured size that is not positive is refused', () => {
    for (const size of [0, -1, Number.NaN]) {
      assert.throws(
        () => walDiskUsage('/tmp', { volumeSizeBytes: size }),
        (error: unknown) => isFloeError(error, 'CONFIG_INVALID'),
      )
    }
  })

  test('a tiny configured volume pauses the worker as segments pile up and resumes as they go', async (t) => {
    const wal = await tempDir(t)
    const partition = join(wal, 'events', 'events-0')
    await mkdir(partition, { recursive: true })
    const timers = { setTimeout: () => 0, clearTimeout: () => {} }
    const backpressure = new Backpressure({
      limits: { diskHighWatermarkPct: 80, maxPendingUploadBytes: 1 << 30, maxOpenSegmentMemoryBytes: 1 << 30 },
      measureDisk: walDiskUsage(wal, { volumeSizeBytes: 10_000 }),
      clock: systemClock,
      timers,
    })
    const events: string[] = []
    backpressure.on('pause', (reasons) => events.push(`pause ${reasons.join(',')}`))
    backpressure.on('resume', () => events.push('resume'))

    const segment = (i: number) => join(partition, `ready_events_0_${i}-${i + 1}_${i}.parquet`)
    for (let i = 0; i < 8; i++) await writeFile(segment(i), Buffer.alloc(1000))
    await backpressure.checkDisk()
    assert.equal(backpressure.diskUsedPct, 80)
    assert.deepEqual(backpressure.reasons, ['disk'])

    await writeFile(segment(0), Buffer.alloc(800)) // 78%: inside the hysteresis band
    await backpressure.checkDisk()
    assert.equal(backpressure.diskUsedPct, 78)
    assert.deepEqual(backpressure.reasons, ['disk'])

    await writeFile(segment(0), Buffer.alloc(500)) // 75%: 5 points below the watermark
    await backpressure.checkDisk()
    assert.equal(backpressure.diskUsedPct, 75)
    assert.equal(backpressure.paused, false)
    assert.deepEqual(events, ['pause disk', 'resume'])
  })
})
