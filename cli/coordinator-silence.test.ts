import assert from 'node:assert/strict'
import { test } from 'node:test'
import { UnheldPartitionGuards } from '../coordinator/index.ts'
import type { GroupAssignment, KafkaAdmin } from '../shared/kafka/index.ts'
import { createMetrics } from '../shared/telemetry/index.ts'
import { CoordinatorSilence } from './coordinator-silence.ts'

// Rounds every 2 s (silence after 4 s), sessions of 5 s (the guard asks after 10 s of silence).
function silenceOver(held: () => number[]) {
  let now = 0
  const rebalances: string[] = []
  const asked: string[] = []
  const admin = {
    groupAssignment: async (_group: string, topic: string): Promise<GroupAssignment> => {
      asked.push(topic)
      return { state: 'Stable', members: [{ memberId: 'a', clientId: 'floe-w1-reader', partitions: held() }] }
    },
  } as unknown as KafkaAdmin
  const guards = new UnheldPartitionGuards({
    dataset: 'events',
    group: 'floe-events',
    admin,
    logger: { info() {}, warn() {}, error() {} },
    metrics: createMetrics({ defaultMetrics: false }),
    rebalance: (reason) => rebalances.push(reason),
    sessionTimeoutMs: 5_000,
    now: () => now,
  })
  const silence = new CoordinatorSilence(
    (topic) => guards.of(topic),
    4_000,
    () => now,
  )
  /** Ticks once a second from the last moment up to `until`; resolves every look it started. */
  let at = 0
  const tickUntil = async (until: number, how: { coordinating?: boolean; topic?: string | null } = {}) => {
    const topic = how.topic === null ? undefined : (how.topic ?? 'events')
    for (; at <= until; at += 1_000) {
      now = at
      await silence.tick(topic, how.coordinating ?? false)
    }
  }
  const hear = (when: number) => {
    now = when
    silence.heard()
  }
  return { tickUntil, hear, rebalances, asked }
}

test('no round heard for the silence and two session timeouts, partition 0 held by no one: the group rebalances', async () => {
  const { tickUntil, rebalances, asked } = silenceOver(() => [1, 2, 3])
  await tickUntil(13_000)
  assert.deepEqual(asked, [], 'silent from 4 s: not asked before 14 s')
  await tickUntil(14_000)
  assert.deepEqual(asked, ['events'])
  assert.deepEqual(rebalances, ['partitions [0] were held by no member'])
})

test('partition 0 held by a member whose rounds do not come: asked, and left to it', async () => {
  const { tickUntil, rebalances, asked } = silenceOver(() => [0, 1, 2, 3])
  await tickUntil(30_000)
  assert.deepEqual(asked, ['events', 'events'], 'asked once per wait while the silence lasts')
  assert.deepEqual(rebalances, [])
})

test('rounds that keep coming, or coordinating itself, keep the group unasked', async () => {
  const heard = silenceOver(() => [])
  for (let second = 0; second <= 40; second += 3) {
    heard.hear(second * 1_000)
    await heard.tickUntil(second * 1_000 + 2_000)
  }
  assert.deepEqual(heard.asked, [])
  const coordinating = silenceOver(() => [])
  await coordinating.tickUntil(40_000, { coordinating: true })
  assert.deepEqual(coordinating.asked, [])
})

test('a round heard during the wait starts the wait again', async () => {
  const { tickUntil, hear, asked, rebalances } = silenceOver(() => [])
  await tickUntil(12_000)
  hear(12_500)
  await tickUntil(26_000)
  assert.deepEqual(asked, [], 'silent again from 16.5 s (the tick at 17 s): asked at 27 s')
  await tickUntil(27_000)
  assert.deepEqual(rebalances, ['partitions [0] were held by no member'])
})

test('a dataset that reads no topic yet is not looked at', async () => {
  const { tickUntil, asked } = silenceOver(() => [])
  await tickUntil(30_000, { topic: null })
  assert.deepEqual(asked, [])
})
