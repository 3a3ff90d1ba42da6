import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { ControlMessage } from '../protocol/index.ts'
import { GroupMembership } from './membership.ts'

const status = (group: string, memberId: string, generation: number): ControlMessage => ({
  dataset: 'events',
  group,
  commitId: 'c1',
  sender: { workerId: 'w1', memberId, generation },
  timeMs: 0,
  body: { type: 'CommitRequested', reason: 'test', partitions: [] },
})

describe("a worker's membership in a dataset's group", () => {
  test('has no generation before its participant stated one', () => {
    const membership = new GroupMembership('floe-events', () => 'm1')
    assert.deepEqual(membership.current(), { memberId: 'm1', generation: -1 })
  })

  test('takes the generation its participant last sent with', () => {
    const membership = new GroupMembership('floe-events', () => 'm1')
    membership.sent(status('floe-events', 'm1', 4))
    membership.sent(status('floe-events', 'm1', 5))
    assert.deepEqual(membership.current(), { memberId: 'm1', generation: 5 })
  })

  test('ignores messages of another group, and senders without a member id', () => {
    const membership = new GroupMembership('floe-events', () => 'm1')
    membership.sent(status('floe-events', 'm1', 4))
    membership.sent(status('floe-clicks', 'm1', 9))
    membership.sent(status('floe-events', '', 0))
    assert.equal(membership.current().generation, 4)
  })

  test('forgets a generation stated for a member id the worker no longer has', () => {
    let memberId = 'm1'
    const membership = new GroupMembership('floe-events', () => memberId)
    membership.sent(status('floe-events', 'm1', 4))
    memberId = 'm2'
    assert.deepEqual(membership.current(), { memberId: 'm2', generation: -1 })
  })
})
