import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../shared/index.ts'
import { Backpressure, type BackpressureReason, type Clock, type Timers } from './index.ts'

/** Timers that run only when the test advances the clock. */
class FakeTime implements Clock, Timers {
  #now = 1_000_000
  #next = 1
  readonly #due = new Map<number, { at: number; callback: () => void }>()

  now(): number {
    return this.#now
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const handle = this.#next++
    this.#due.set(handle, { at: this.#now + ms, callback })
    return handle
  }

  clearTimeout(handle: unknown): void {
    this.#due.delete(handle as number)
  }

  get pending(): number {
    return this.#due.size
  }

  /** Moves the clock forward, runs what fell due, and lets the promises they started settle. */
  async advance(ms: number): Promise<void> {
    this.#now += ms
    for (const [handle, { at, callback }] of [...this.#due]) {
      if (at > this.#now) continue
      this.#due.delete(handle)
      callback()
    }
    await settle()
  }
}

/** Lets pending promise callbacks run (one turn of the event loop; not a sleep). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve))

type Event = string

function monitor(options: { disk?: () => Promise<number> } = {}) {
  const time = new FakeTime()
  let diskPct = 0
  const backpressure = new Backpressure({
    limits: { diskHighWatermarkPct: 80, maxPendingUploadBytes: 1000, maxOpenSegmentMemoryBytes: 2000 },
    measureDisk: options.disk ?? (async () => diskPct),
    clock: time,
    timers: time,
  })
  const events: Event[] = []
  backpressure.on('pause', (reasons) => events.push(`pause ${reasons.join(',')}`))
  backpressure.on('resume', () => events.push('resume'))
  backpressure.on('change', (reasons) => events.push(`change ${reasons.join(',') || '-'}`))
  const setDisk = async (pct: number) => {
    diskPct = pct
    await backpressure.checkDisk()
  }
  return { backpressure, time, events, setDisk }
}

type Step = [input: 'disk' | 'upload' | 'memory', value: number, paused: boolean]

describe('the backpressure latches', () => {
  const cases: { name: string; steps: Step[] }[] = [
    {
      name: 'the disk pauses at the watermark and resumes 5 points below it',
      steps: [
        ['disk', 50, false],
        ['disk', 79.99, false],
        ['disk', 80, true],
        ['disk', 79, true],
        ['disk', 75.01, true],
        ['disk', 75, false],
        ['disk', 79, false],
        ['disk', 96, true],
      ],
    },
    {
      name: 'the upload backlog pauses at its cap and resumes below 95% of it',
      steps: [
        ['upload', 999, false],
        ['upload', 1000, true],
        ['upload', 960, true],
        ['upload', 950, true],
        ['upload', 949, false],
        ['upload', 999, false],
        ['upload', 5000, true],
        ['upload', 0, false],
      ],
    },
    {
      name: 'open segment memory pauses at its cap and resumes below 95% of it',
      steps: [
        ['memory', 1999, false],
        ['memory', 2000, true],
        ['memory', 1900, true],
        ['memory', 1899, false],
      ],
    },
  ]
  for (const { name, steps } of cases) {
    test(name, async () => {
      const { backpressure, setDisk } = monitor()
      for (const [input, value, paused] of steps) {
        if (input === 'disk') await setDisk(value)
        else if (input === 'upload') backpressure.setPendingUploadBytes(value)
        else backpressure.setOpenSegmentMemoryBytes(value)
        assert.equal(backpressure.paused, paused, `${input} ${value}`)
      }
    })
  }

  test('reasons combine, and pause and resume fire once per transition', async () => {
    const { backpressure, events, setDisk, time } = monitor()
    const reasons = (): readonly BackpressureReason[] => backpressure.reasons
    await setDisk(85)
    assert.deepEqual(reasons(), ['disk'])
    assert.equal(backpressure.pausedSince, time.now())
    backpressure.setOpenSegmentMemoryBytes(2500)
    backpressure.setPendingUploadBytes(1200)
    assert.deepEqual(reasons(), ['disk', 'upload-backlog', 'memory'])
    await setDisk(70)
    assert.deepEqual(reasons(), ['upload-backlog', 'memory'])
    backpressure.setPendingUploadBytes(100)
    backpressure.setOpenSegmentMemoryBytes(1950) // still above 95%
    assert.deepEqual(reasons(), ['memory'])
    backpressure.setOpenSegmentMemoryBytes(10)
    assert.deepEqual(reasons(), [])
    assert.equal(backpressure.paused, false)
    assert.equal(backpressure.pausedSince, undefined)
    assert.deepEqual(events, [
      'change disk',
      'pause disk',
      'change disk,memory',
      'change disk,upload-backlog,memory',
      'change upload-backlog,memory',
      'change memory',
      'change -',
      'resume',
    ])
  })

  test('the byte limits apply to the sum of every reporter, each replacing only its own share', () => {
    const { backpressure, events } = monitor()
    backpressure.setOpenSegmentMemoryBytes(1200, 'orders')
    backpressure.setOpenSegmentMemoryBytes(700, 'clicks')
    assert.equal(backpressure.paused, false)
    backpressure.setOpenSegmentMemoryBytes(900, 'clicks')
    assert.deepEqual(backpressure.reasons, ['memory'])
    assert.equal(backpressure.openSegmentMemoryBytes, 2100)
    backpressure.setPendingUploadBytes(600, 'orders')
    backpressure.setPendingUploadBytes(500, 'clicks')
    assert.deepEqual(backpressure.reasons, ['upload-backlog', 'memory'])
    backpressure.setOpenSegmentMemoryBytes(0, 'orders')
    backpressure.setPendingUploadBytes(0, 'clicks')
    assert.equal(backpressure.paused, false)
    assert.deepEqual(events, [
      'change memory',
      'pause memory',
      'change upload-backlog,memory',
      'change upload-backlog',
      'change -',
      'resume',
    ])
  })

  test('reports that change nothing emit nothing', async () => {
    const { backpressure, events, setDisk } = monitor()
    await setDisk(10)
    backpressure.setPendingUploadBytes(10)
    backpressure.setPendingUploadBytes(10)
    assert.deepEqual(events, [])
    backpressure.setPendingUploadBytes(1000)
    backpressure.setPendingUploadBytes(1001)
    backpressure.setPendingUploadBytes(990)
    assert.deepEqual(events, ['change upload-backlog', 'pause upload-backlog'])
  })

  test('a negative or non-numeric report is a broken invariant', () => {
    const { backpressure } = monitor()
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(
        () => backpressure.setPendingUploadBytes(bad),
        (error: unknown) => isFloeError(error, 'INVARIANT_BROKEN'),
      )
    }
  })

  test('limits outside their ranges are refused', () => {
    const time = new FakeTime()
    const make = (diskHighWatermarkPct: number, maxPendingUploadBytes = 1) =>
      new Backpressure({
        limits: { diskHighWatermarkPct, maxPendingUploadBytes, maxOpenSegmentMemoryBytes: 1 },
        measureDisk: async () => 0,
        clock: time,
        timers: time,
      })
    for (const [pct, bytes] of [
      [5, 1],
      [101, 1],
      [80, 0],
    ] as const) {
      assert.throws(
        () => make(pct, bytes),
        (error: unknown) => isFloeError(error, 'CONFIG_INVALID'),
      )
    }
    assert.ok(make(100))
  })
})

describe('the disk measurement schedule', () => {
  test('measures at start and every 5 seconds after, until stopped', async () => {
    let calls = 0
    let pct = 10
    const { backpressure, time } = monitor({
      disk: async () => {
        calls++
        return pct
      },
    })
    backpressure.start()
    await settle()
    assert.equal(calls, 1)
    await time.advance(4999)
    assert.equal(calls, 1)
    pct = 90
    await time.advance(1)
    assert.equal(calls, 2)
    assert.equal(backpressure.diskUsedPct, 90)
    assert.deepEqual(backpressure.reasons, ['disk'])
    backpressure.start() // already running: no second schedule
    assert.equal(time.pending, 1)
    backpressure.stop()
    assert.equal(time.pending, 0)
    await time.advance(60_000)
    assert.equal(calls, 2)
  })

  test('a slow measurement delays the next one instead of overlapping it', async () => {
    const finish: (() => void)[] = []
    let calls = 0
    const { backpressure, time } = monitor({
      disk: () => {
        calls++
        return new Promise<number>((resolve) => finish.push(() => resolve(50)))
      },
    })
    backpressure.start()
    await time.advance(30_000)
    assert.equal(calls, 1, 'nothing scheduled while the first is in flight')
    finish.shift()?.()
    await settle()
    assert.equal(time.pending, 1)
    await time.advance(5000)
    assert.equal(calls, 2)
    backpressure.stop()
  })

  test('a failed measurement is reported and keeps the last known state', async () => {
    let fail = false
    const { backpressure, time } = monitor({
      disk: async () => {
        if (fail) throw new Error('EIO')
        return 85
      },
    })
    const failures: unknown[] = []
    backpressure.on('disk-check-failed', (error) => failures.push(error))
    backpressure.start()
    await settle()
    assert.deepEqual(backpressure.reasons, ['disk'])
    fail = true
    await time.advance(5000)
    assert.equal(failures.length, 1)
    assert.deepEqual(backpressure.reasons, ['disk'])
    assert.equal(time.pending, 1, 'measuring goes on')
    assert.equal(await backpressure.checkDisk(), false)
    backpressure.stop()
  })

  test('a probe answering NaN is a failed measurement', async () => {
    const { backpressure } = monitor({ disk: async () => Number.NaN })
    const failures: unknown[] = []
    backpressure.on('disk-check-failed', (error) => failures.push(error))
    assert.equal(await backpressure.checkDisk(), false)
    assert.equal(backpressure.diskUsedPct, 0)
    assert.equal(failures.length, 1)
  })
})
