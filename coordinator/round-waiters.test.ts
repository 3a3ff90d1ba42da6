import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { RoundOutcome } from './machine-types.ts'
import { type RoundResult, RoundWaiters } from './round-waiters.ts'

const committed = (commitId: string): RoundOutcome => ({ kind: 'committed', commitId, snapshotId: 7n })
const failed = (commitId: string | undefined, phase: 'starting' | 'committing'): RoundOutcome => ({
  kind: 'failed',
  commitId,
  phase,
  error: { code: 'CATALOG_UNAVAILABLE', retryable: true, message: 'down' },
})

/** The result if the promise has settled by now, else 'pending'. */
async function peek(promise: Promise<RoundResult>): Promise<RoundResult | 'pending'> {
  return Promise.race([promise, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))])
}

describe('round waiters', () => {
  test('a wait for the next round ends with the next round that completes', async () => {
    const waiters = new RoundWaiters()
    const next = waiters.wait(false)
    waiters.completed('r1', committed('r1'))
    assert.deepEqual(await peek(next), committed('r1'))
  })

  test('a requested round is not the one whose END-COMMIT went out before the request', async () => {
    const waiters = new RoundWaiters()
    waiters.ending('r1')
    const requested = waiters.wait(true)
    waiters.completed('r1', committed('r1'))
    assert.equal(await peek(requested), 'pending')
    waiters.ending('r2')
    waiters.completed('r2', committed('r2'))
    assert.deepEqual(await peek(requested), committed('r2'))
  })

  const failures: Array<{
    name: string
    bound: boolean
    commitId: string | undefined
    phase: 'starting' | 'committing'
    settles: boolean
  }> = [
    {
      name: 'the requested round fails while committing',
      bound: true,
      commitId: 'r2',
      phase: 'committing',
      settles: true,
    },
    {
      name: 'an earlier round fails while committing',
      bound: false,
      commitId: 'r1',
      phase: 'committing',
      settles: false,
    },
    { name: 'the requested round cannot start', bound: false, commitId: undefined, phase: 'starting', settles: true },
  ]
  for (const { name, bound, commitId, phase, settles } of failures) {
    test(`a requested round ${settles ? 'ends' : 'keeps waiting'} when ${name}`, async () => {
      const waiters = new RoundWaiters()
      const requested = waiters.wait(true)
      if (bound) waiters.ending('r2')
      waiters.failed(commitId, phase, failed(commitId, phase))
      assert.deepEqual(await peek(requested), settles ? failed(commitId, phase) : 'pending')
    })
  }

  test('stopping ends every wait with stopped', async () => {
    const waiters = new RoundWaiters()
    const a = waiters.wait(true)
    const b = waiters.wait(false)
    waiters.stopped('r9', 'partition 0 revoked')
    for (const wait of [a, b]) {
      assert.deepEqual(await peek(wait), { kind: 'stopped', commitId: 'r9', reason: 'partition 0 revoked' })
    }
  })
})
