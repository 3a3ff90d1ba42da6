import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type FollowedDataset, OwnershipFollower } from './ownership-follower.ts'

/** A coordinator that runs between start and stop, and can crash (stop unasked) or fail to start. */
class FakeCoordinator {
  running = false
  starts = 0
  stops = 0
  failStart = false
  release: (() => void) | undefined
  async start(): Promise<void> {
    this.starts++
    if (this.release) await new Promise<void>((resolve) => (this.release = resolve))
    if (this.failStart) throw new Error('catalog down')
    this.running = true
  }
  async stop(): Promise<void> {
    this.stops++
    this.running = false
  }
  crash(): void {
    this.running = false
  }
}

function harness(names: string[] = ['events']) {
  const datasets = names.map((name) => ({
    name,
    participant: { assigned: [] as number[] },
    coordinator: new FakeCoordinator(),
    coordinating: false,
    restartAt: 0,
    restartDelayMs: 1000,
  })) satisfies FollowedDataset[]
  const lines: string[] = []
  const gauge = new Map<string, boolean>()
  const clock = { now: 100_000 }
  let halted = false
  const log = (level: string) => (_fields: object, message: string) => lines.push(`${level} ${message}`)
  const follower = new OwnershipFollower(datasets, {
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
    coordinating: (dataset, active) => gauge.set(dataset, active),
    halted: () => halted,
    now: () => clock.now,
  })
  return { datasets, follower, lines, gauge, clock, halt: () => (halted = true) }
}

describe('following the ownership of partition 0', () => {
  test('coordinates a dataset while this worker holds partition 0 of its topic, and stops when it goes', async () => {
    const { datasets, follower, lines, gauge } = harness()
    const events = datasets[0]!
    events.participant.assigned = [1, 2]
    await follower.tick()
    assert.equal(events.coordinator.starts, 0)

    events.participant.assigned = [0, 1, 2]
    await follower.tick()
    await follower.tick()
    assert.equal(events.coordinator.starts, 1)
    assert.equal(events.coordinating, true)
    assert.equal(gauge.get('events'), true)

    events.participant.assigned = [1]
    await follower.tick()
    assert.equal(events.coordinator.stops, 1)
    assert.equal(events.coordinating, false)
    assert.equal(gauge.get('events'), false)
    assert.deepEqual(lines, ['info coordinating', 'info no longer coordinating'])
  })

  test('follows each dataset on its own: partition 0 of one topic says nothing about another', async () => {
    const { datasets, follower } = harness(['events', 'clicks'])
    datasets[1]!.participant.assigned = [0]
    await follower.tick()
    assert.deepEqual(
      datasets.map((d) => [d.name, d.coordinating, d.coordinator.starts]),
      [
        ['events', false, 0],
        ['clicks', true, 1],
      ],
    )
  })

  test('starts a crashed coordinator again after a wait that doubles while it keeps crashing', async () => {
    const { datasets, follower, lines, clock } = harness()
    const events = datasets[0]!
    events.participant.assigned = [0]
    await follower.tick()
    const startedAt: number[] = []
    for (let second = 0; second < 10; second++) {
      if (events.coordinator.running) events.coordinator.crash()
      const before = events.coordinator.starts
      await follower.tick()
      if (events.coordinator.starts > before) startedAt.push(clock.now - 100_000)
      clock.now += 1000
    }
    // restarted at once, then 1 s, 2 s, 4 s after the previous restart
    assert.deepEqual(startedAt, [0, 1000, 3000, 7000])
    assert.ok(lines.includes('warn restarted the coordinator after it stopped unasked'))
  })

  test('starts nothing again once the worker stops for a fatal error', async () => {
    const { datasets, follower, halt } = harness()
    const events = datasets[0]!
    events.participant.assigned = [0]
    await follower.tick()
    events.coordinator.crash()
    halt()
    await follower.tick()
    assert.equal(events.coordinator.starts, 1)
  })

  test('logs a start that failed and tries again on a later tick', async () => {
    const { datasets, follower, lines, clock } = harness()
    const events = datasets[0]!
    events.participant.assigned = [0]
    events.coordinator.failStart = true
    await follower.tick()
    assert.deepEqual(lines, ['error coordinator start failed'])
    events.coordinator.failStart = false
    clock.now += 1000
    await follower.tick()
    assert.equal(events.coordinator.running, true)
  })

  test('a tick while the last one is still starting a coordinator does nothing', async () => {
    const { datasets, follower } = harness()
    const events = datasets[0]!
    events.participant.assigned = [0]
    events.coordinator.release = () => {}
    const first = follower.tick()
    await follower.tick()
    assert.equal(events.coordinator.starts, 1)
    events.coordinator.release()
    await first
    assert.equal(events.coordinator.running, true)
  })
})
