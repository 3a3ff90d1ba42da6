import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  isMaintenanceDue,
  lastRunProperty,
  type MaintenanceClock,
  maintenanceDueAt,
  recordedRunStart,
} from './maintenance-schedule.ts'

const minute = 60_000
const clock = (over: Partial<MaintenanceClock> = {}): MaintenanceClock => ({
  intervalMs: 60 * minute,
  startedAt: 1_000 * minute,
  lastEndedAt: undefined,
  recordedStartAt: undefined,
  running: false,
  ...over,
})

describe('when the coordinator runs maintenance', () => {
  const cases: { name: string; clock: MaintenanceClock; now: number; due: boolean }[] = [
    { name: 'not at start', clock: clock(), now: 1_000 * minute, due: false },
    { name: 'not before an interval has passed since start', clock: clock(), now: 1_059 * minute, due: false },
    { name: 'one interval after start when no run is known', clock: clock(), now: 1_060 * minute, due: true },
    {
      name: 'one interval after the end of its own last run',
      clock: clock({ lastEndedAt: 1_100 * minute }),
      now: 1_159 * minute,
      due: false,
    },
    {
      name: 'and then',
      clock: clock({ lastEndedAt: 1_100 * minute }),
      now: 1_160 * minute,
      due: true,
    },
    {
      name: 'a restarted coordinator waits out a run the table records as recent',
      clock: clock({ recordedStartAt: 990 * minute }),
      now: 1_020 * minute,
      due: false,
    },
    {
      name: 'but does not wait a whole interval from its start after an old one',
      clock: clock({ recordedStartAt: 900 * minute }),
      now: 1_000 * minute,
      due: true,
    },
    {
      name: 'the later of its own end and the recorded start counts',
      clock: clock({ recordedStartAt: 1_130 * minute, lastEndedAt: 1_100 * minute }),
      now: 1_170 * minute,
      due: false,
    },
    {
      name: 'a recorded start ahead of this clock is ignored, not waited for',
      clock: clock({ recordedStartAt: 9_000 * minute }),
      now: 1_060 * minute,
      due: true,
    },
    {
      name: 'never while a run still goes',
      clock: clock({ running: true }),
      now: 5_000 * minute,
      due: false,
    },
  ]
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(isMaintenanceDue(c.clock, c.now), c.due)
    })
  }

  test('fractions of a minute are intervals too', () => {
    const short = clock({ intervalMs: 0.05 * minute, startedAt: 0 })
    assert.equal(maintenanceDueAt(short, 0), 3_000)
    assert.equal(isMaintenanceDue(short, 2_999), false)
    assert.equal(isMaintenanceDue(short, 3_000), true)
  })
})

describe("the table property recording a run's start", () => {
  test('is read as epoch milliseconds', () => {
    assert.equal(recordedRunStart({ [lastRunProperty]: '1764600000000' }), 1_764_600_000_000)
  })

  test('absent, empty or not a number, it records nothing', () => {
    for (const value of [undefined, '', 'yesterday', '-5', '1.5', '1e12']) {
      const properties: Record<string, string> = value === undefined ? {} : { [lastRunProperty]: value }
      assert.equal(recordedRunStart(properties), undefined, String(value))
    }
  })
})
