import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { GroupAssignment, KafkaAdmin } from '../shared/kafka/index.ts'
import { createMetrics } from '../shared/telemetry/index.ts'
import { UnheldPartitionGuard, UnheldPartitionWatch, unheldIn } from './unheld-partitions.ts'

describe('unheld partition watch', () => {
  test('a partition is looked at once it was missing from every round for the wait', () => {
    const watch = new UnheldPartitionWatch(10_000)
    assert.deepEqual(watch.collected([3], 0), [])
    assert.deepEqual(watch.collected([3], 5_000), [])
    assert.deepEqual(watch.collected([3, 4], 10_000), [3], 'partition 4 only now went missing')
  })

  test('a partition that answered a round starts its wait again', () => {
    const watch = new UnheldPartitionWatch(10_000)
    watch.collected([3], 0)
    watch.collected([], 6_000)
    assert.deepEqual(watch.collected([3], 12_000), [])
    assert.deepEqual(watch.collected([3], 22_000), [3])
  })

  test('the group is asked at most once per wait, and again while the partition stays missing', () => {
    const watch = new UnheldPartitionWatch(10_000)
    watch.collected([1, 2], 0)
    assert.deepEqual(watch.collected([1, 2], 10_000), [1, 2])
    assert.deepEqual(watch.collected([1, 2], 15_000), [])
    assert.deepEqual(watch.collected([2], 20_000), [2])
  })

  test('after a reset nothing seen before counts', () => {
    const watch = new UnheldPartitionWatch(10_000)
    watch.collected([3], 0)
    watch.reset()
    assert.deepEqual(watch.collected([3], 10_000), [])
    assert.deepEqual(watch.collected([3], 20_000), [3])
  })
})

describe('unheld partitions of a group', () => {
  const members = [
    { memberId: 'a', clientId: 'floe-w1-reader', partitions: [0, 2] },
    { memberId: 'b', clientId: 'floe-w2-reader', partitions: [1] },
  ]

  test('in a Stable group, the partitions no member holds', () => {
    assert.deepEqual(unheldIn({ state: 'Stable', members }, [1, 3, 4]), [3, 4])
    assert.deepEqual(unheldIn({ state: 'STABLE', members }, [2]), [])
  })

  test('a group that is rebalancing, empty or unknown reports none', () => {
    for (const state of ['PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead', 'unknown']) {
      assert.deepEqual(unheldIn({ state, members }, [3]), [], state)
    }
  })
})

describe('unheld partition guard', () => {
  function guardOf(describeGroup: () => Promise<GroupAssignment>) {
    let now = 0
    const warnings: string[] = []
    const rebalances: string[] = []
    const metrics = createMetrics({ defaultMetrics: false })
    const admin = { groupAssignment: describeGroup } as unknown as KafkaAdmin
    const logger = { info() {}, error() {}, warn: (_: unknown, message: string) => warnings.push(message) }
    const guard = new UnheldPartitionGuard({
      dataset: 'events',
      topic: 'events',
      group: 'floe-events',
      admin,
      logger,
      metrics,
      rebalance: (reason) => rebalances.push(reason),
      sessionTimeoutMs: 5_000,
      now: () => now,
    })
    const round = (missing: number[], at: number) => {
      now = at
      return guard.roundCollected(missing)
    }
    const counted = async () => (await metrics.unheldPartitionRebalances.get()).values[0]?.value ?? 0
    return { round, warnings, rebalances, counted }
  }
  const stable = (partitions: number[]): GroupAssignment => ({
    state: 'Stable',
    members: [{ memberId: 'a', clientId: 'floe-w1-reader', partitions }],
  })

  test('a partition missing for two session timeouts and held by no one makes the group rebalance', async () => {
    const { round, warnings, rebalances, counted } = guardOf(async () => stable([0, 1, 2]))
    assert.equal(round([3], 0), undefined)
    assert.equal(round([3], 5_000), undefined)
    await round([3], 10_000)
    assert.deepEqual(rebalances, ['partitions [3] were held by no member'])
    assert.equal(warnings.length, 1)
    assert.equal(await counted(), 1)
  })

  test('a missing partition some member holds is left to that member', async () => {
    const { round, rebalances } = guardOf(async () => stable([0, 1, 2, 3]))
    round([3], 0)
    await round([3], 10_000)
    assert.deepEqual(rebalances, [])
  })

  test('a group that cannot be described is logged, and asked again after the wait', async () => {
    let fail = true
    const { round, warnings, rebalances } = guardOf(async () => {
      if (fail) throw new Error('broker unreachable')
      return stable([0])
    })
    round([1], 0)
    await round([1], 10_000)
    assert.deepEqual(warnings, ['could not describe the consumer group'])
    fail = false
    assert.equal(round([1], 15_000), undefined)
    await round([1], 20_000)
    assert.deepEqual(rebalances, ['partitions [1] were held by no member'])
  })
})
