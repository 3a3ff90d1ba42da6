import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { CoordinatorEmitted } from './machine-types.ts'
import {
  completedRoundFields,
  failedRoundFields,
  foldRoundEvent,
  newRoundReport,
  phaseSeconds,
} from './round-report.ts'
import { sender } from './test-fixtures.ts'

const events: CoordinatorEmitted[] = [
  { type: 'round.started', commitId: 'c-1', expected: new Map([['events', 3]]), tableOffsets: new Map(), at: 1000 },
  { type: 'round.ended', commitId: 'c-1', at: 3000, openMs: 2000 },
  {
    type: 'round.status-recorded',
    commitId: 'c-1',
    sender: sender(),
    partitions: [
      { topic: 'events', partition: 0 },
      { topic: 'events', partition: 1 },
    ],
    answered: 2,
  },
  {
    type: 'round.status-ignored',
    commitId: 'c-1',
    sender: sender(),
    ignored: [{ partition: 2, reason: 'older-generation' }],
  },
  {
    type: 'round.collected',
    commitId: 'c-1',
    partial: true,
    answered: 2,
    missing: [{ topic: 'events', partition: 2 }],
    toCommit: true,
    collectingMs: 500,
  },
  {
    type: 'round.committed',
    commitId: 'c-1',
    snapshotId: 2n ** 62n,
    accepted: 1,
    rejected: [
      { topic: 'events', partition: 1, reason: 'behind-table', tableOffset: 40n, range: { start: 30n, end: 35n } },
    ],
    lost: [{ topic: 'events', partition: 0, from: 10n, to: 12n, count: 2n }],
    attempts: 2,
    foundAfterUnknownOutcome: false,
    committingMs: 120,
  },
]

describe('the round report', () => {
  const report = events.reduce(foldRoundEvent, newRoundReport())

  test('gathers who answered, what was rejected and lost, and how many attempts the commit took', () => {
    assert.equal(report.commitId, 'c-1')
    assert.equal(report.partitionCount, 3)
    assert.equal(report.answered, 2)
    assert.deepEqual(report.missing, [{ topic: 'events', partition: 2 }])
    assert.equal(report.partial, true)
    assert.equal(report.accepted, 1)
    assert.equal(report.rejected.length, 1)
    assert.equal(report.attempts, 2)
    assert.equal(report.ignored, 1)
  })

  test('a new round starts a new report', () => {
    const next = foldRoundEvent(report, {
      type: 'round.started',
      commitId: 'c-2',
      expected: new Map([
        ['a', 3],
        ['b', 1],
      ]),
      tableOffsets: new Map(),
      at: 9000,
    })
    assert.deepEqual(next, { ...newRoundReport('c-2'), partitionCount: 4, severalTopics: true })
  })

  test('the completed line is JSON-safe and carries the snapshot id, phases and rejections', () => {
    const fields = completedRoundFields(
      'events',
      { ...report, recordsCommitted: 2n ** 60n },
      {
        type: 'round.completed',
        commitId: 'c-1',
        outcome: { kind: 'committed', commitId: 'c-1', snapshotId: 2n ** 62n },
        phases: { openMs: 2000, collectingMs: 500, committingMs: 120, ackingMs: 8 },
        totalMs: 2628,
      },
    )
    assert.doesNotThrow(() => JSON.stringify(fields))
    assert.equal(fields['snapshotId'], String(2n ** 62n))
    assert.equal(fields['records'], String(2n ** 60n))
    assert.equal(fields['lostRecords'], '2')
    assert.deepEqual(fields['phasesMs'], { open: 2000, collecting: 500, committing: 120, acking: 8 })
    assert.deepEqual(fields['rejected'], [{ partition: 1, reason: 'behind-table', tableOffset: '40', range: '30-35' }])
  })

  test('a missing or rejected partition is named with its topic when the dataset reads several', () => {
    const completed = {
      type: 'round.completed' as const,
      commitId: 'c-1',
      outcome: { kind: 'committed' as const, commitId: 'c-1', snapshotId: 1n },
      phases: { openMs: 0, collectingMs: 0, committingMs: 0, ackingMs: 0 },
      totalMs: 0,
    }
    assert.deepEqual(completedRoundFields('events', report, completed)['missing'], [2])
    const several = { ...report, severalTopics: true }
    const fields = completedRoundFields('events', several, completed)
    assert.deepEqual(fields['missing'], ['events:2'])
    assert.deepEqual(fields['rejected'], [
      { topic: 'events', partition: 1, reason: 'behind-table', tableOffset: '40', range: '30-35' },
    ])
  })

  test('the failed line names the phase and the error code', () => {
    const fields = failedRoundFields('events', report, {
      commitId: 'c-1',
      phase: 'committing',
      error: { code: 'COMMIT_CONFLICT', retryable: true, message: 'lost the race five times' },
      consecutiveFailures: 3,
    })
    assert.equal(fields['outcome'], 'failed')
    assert.equal(fields['phase'], 'committing')
    assert.equal(fields['code'], 'COMMIT_CONFLICT')
    assert.equal(fields['consecutiveFailures'], 3)
  })

  test("a round that failed to start is not reported under the previous round's commit id", () => {
    const fields = failedRoundFields('events', report, {
      commitId: undefined,
      phase: 'starting',
      error: { code: 'CATALOG_UNAVAILABLE', retryable: true, message: 'GET table: TimeoutError' },
      consecutiveFailures: 1,
    })
    assert.ok(report.commitId !== undefined)
    assert.equal(fields['commitId'], undefined)
    assert.equal(fields['accepted'], 0)
    assert.equal(fields['phase'], 'starting')
  })

  test('phase durations become seconds per histogram label', () => {
    assert.deepEqual(phaseSeconds({ openMs: 20_000, collectingMs: 1500, committingMs: 250, ackingMs: 5 }), [
      { phase: 'open', seconds: 20 },
      { phase: 'collecting', seconds: 1.5 },
      { phase: 'committing', seconds: 0.25 },
      { phase: 'acking', seconds: 0.005 },
    ])
  })
})
