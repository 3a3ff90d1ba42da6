import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { PartitionWriteStatus, RotationStatus, Sender } from '../protocol/index.ts'
import type { RotationReport } from './rotation-check.ts'
import {
  answeredPartitions,
  answeredReports,
  answeredStatuses,
  decideRound,
  hasDataToCommit,
  isRoundComplete,
  missingPartitions,
  openRound,
  type RoundDecision,
  type RoundTracker,
  recordWriteStatus,
} from './round-tracker.ts'
import { empty, failed, rotation, rotationReport, sender, topic, written } from './test-fixtures.ts'

const commitId = 'c-1'
/** Partitions of the fixtures' topic, as the tracker names them. */
const at = (...partitions: number[]) => partitions.map((partition) => ({ topic, partition }))
const report = (statuses: PartitionWriteStatus[], from: Sender = sender(), id = commitId) => ({
  commitId: id,
  sender: from,
  statuses,
})

function withAnswers(partitionCount: number, statuses: PartitionWriteStatus[]): RoundTracker {
  return recordWriteStatus(openRound(commitId, new Map([[topic, partitionCount]])), report(statuses)).tracker
}

describe('RoundTracker', () => {
  test('a new round waits for every partition of the topic', () => {
    const tracker = openRound(commitId, new Map([[topic, 3]]))
    assert.deepEqual(missingPartitions(tracker), at(0, 1, 2))
    assert.equal(isRoundComplete(tracker), false)
  })

  test('is complete once every partition answered, an ERROR answer included', () => {
    const tracker = withAnswers(3, [written(0, 0n, 5n), empty(1), failed(2)])
    assert.deepEqual(missingPartitions(tracker), at())
    assert.equal(isRoundComplete(tracker), true)
  })

  test('a round of a topic with no partitions is complete at once', () => {
    assert.equal(isRoundComplete(openRound(commitId, new Map([[topic, 0]]))), true)
  })

  test('records one report for many partitions', () => {
    const result = recordWriteStatus(
      openRound(commitId, new Map([[topic, 4]])),
      report([written(0, 0n, 5n), written(2, 0n, 5n)]),
    )
    assert.deepEqual(result.recorded, at(0, 2))
    assert.deepEqual(missingPartitions(result.tracker), at(1, 3))
  })

  const ignoredCases: Array<{ name: string; report: ReturnType<typeof report>; reason: string }> = [
    {
      name: 'a status for another commit id',
      report: report([written(0, 0n, 5n)], sender(), 'c-0'),
      reason: 'other-commit',
    },
    {
      name: 'a status for another topic',
      report: report([written(0, 0n, 5n, { topic: 'elsewhere' })]),
      reason: 'other-topic',
    },
    { name: 'a status for a negative partition', report: report([written(-1, 0n, 5n)]), reason: 'invalid-partition' },
    {
      name: 'a status for a fractional partition',
      report: report([written(0.5, 0n, 5n)]),
      reason: 'invalid-partition',
    },
  ]
  for (const c of ignoredCases) {
    test(`ignores ${c.name}`, () => {
      const tracker = openRound(commitId, new Map([[topic, 2]]))
      const result = recordWriteStatus(tracker, c.report)
      assert.equal(result.tracker, tracker)
      assert.deepEqual(result.recorded, at())
      assert.deepEqual(
        result.ignored.map((i) => i.reason),
        [c.reason],
      )
    })
  }

  test('the newest status of a partition wins within one generation', () => {
    let tracker = withAnswers(1, [written(0, 0n, 5n)])
    tracker = recordWriteStatus(tracker, report([written(0, 0n, 9n)])).tracker
    assert.deepEqual(answeredStatuses(tracker), [written(0, 0n, 9n)])
  })

  test('a newer generation replaces the old owner of a partition', () => {
    let tracker = withAnswers(1, [written(0, 0n, 5n)])
    tracker = recordWriteStatus(tracker, report([written(0, 5n, 9n)], sender(2, 'w2'))).tracker
    assert.deepEqual(answeredStatuses(tracker), [written(0, 5n, 9n)])
    assert.equal([...tracker.statuses.values()][0]?.sender.workerId, 'w2')
  })

  test('an older generation (a zombie owner) cannot replace a newer one', () => {
    const tracker = recordWriteStatus(
      openRound(commitId, new Map([[topic, 1]])),
      report([written(0, 5n, 9n)], sender(3, 'w2')),
    ).tracker
    const result = recordWriteStatus(tracker, report([written(0, 0n, 5n)], sender(2, 'w1')))
    assert.equal(result.tracker, tracker)
    assert.deepEqual(result.ignored, [{ topic, partition: 0, reason: 'older-generation' }])
  })

  test('the same status delivered twice is idempotent', () => {
    const tracker = withAnswers(2, [written(0, 0n, 5n)])
    const again = recordWriteStatus(tracker, report([written(0, 0n, 5n)]))
    assert.equal(again.tracker, tracker)
    assert.deepEqual(again.ignored, [{ topic, partition: 0, reason: 'duplicate' }])
  })

  test('recording never changes the tracker it was given', () => {
    const tracker = openRound(commitId, new Map([[topic, 2]]))
    recordWriteStatus(tracker, report([written(0, 0n, 5n)]))
    assert.equal(tracker.statuses.size, 0)
  })

  test('a partition added to the topic during the round is kept but not waited for', () => {
    const tracker = withAnswers(2, [
      written(0, 0n, 5n),
      written(1, 0n, 5n),
      written(2, 0n, 5n, { origin: 'offset-reset' }),
    ])
    assert.equal(isRoundComplete(tracker), true)
    assert.deepEqual(
      answeredStatuses(tracker).map((s) => s.partition),
      [0, 1, 2],
    )
  })

  test('answers come out in partition order', () => {
    const tracker = withAnswers(3, [empty(2), written(0, 0n, 5n), failed(1)])
    assert.deepEqual(
      answeredStatuses(tracker).map((s) => s.partition),
      [0, 1, 2],
    )
  })

  const dataCases: Array<[string, PartitionWriteStatus[], boolean]> = [
    ['files', [written(0, 0n, 5n)], true],
    ['an advanced range without files', [written(0, 0n, 5n, { files: [] })], true],
    ['a log-start jump alone', [written(0, 5n, 5n, { jump: { from: 0n, to: 5n } })], true],
    ['only EMPTY answers', [empty(0), empty(1)], false],
    ['only ERROR answers', [failed(0)], false],
    ['a range that did not move', [written(0, 5n, 5n)], false],
    ['no answers', [], false],
  ]
  for (const [name, statuses, expected] of dataCases) {
    test(`has data to commit with ${name}: ${expected}`, () => {
      assert.equal(hasDataToCommit(withAnswers(2, statuses)), expected)
    })
  }
})

describe('decideRound', () => {
  const cases: Array<[string, PartitionWriteStatus[], number, RoundDecision]> = [
    [
      'every partition answered with data: commit in full',
      [written(0, 0n, 5n), empty(1)],
      10,
      { kind: 'commit', partial: false, missing: at() },
    ],
    [
      'every partition answered, none with data: close the round without a snapshot',
      [empty(0), failed(1)],
      10,
      { kind: 'close-empty', partial: false, missing: at() },
    ],
    ['a partition missing before the timeout: wait', [written(0, 0n, 5n)], 29_999, { kind: 'wait', missing: at(1) }],
    [
      'a partition missing at the timeout: commit those that answered',
      [written(0, 0n, 5n)],
      30_000,
      { kind: 'commit', partial: true, missing: at(1) },
    ],
    [
      'a partition missing at the timeout and no data: close without a snapshot',
      [empty(0)],
      30_001,
      { kind: 'close-empty', partial: true, missing: at(1) },
    ],
    [
      'nobody answered by the timeout: close without a snapshot',
      [],
      30_000,
      { kind: 'close-empty', partial: true, missing: at(0, 1) },
    ],
  ]
  for (const [name, statuses, elapsed, expected] of cases) {
    test(name, () => {
      assert.deepEqual(decideRound(withAnswers(2, statuses), elapsed, 30_000), expected)
    })
  }
})

describe('RoundTracker, shared-segment statuses', () => {
  const asMessage = (r: RotationReport, id = commitId) => ({ commitId: id, ...r })
  const a1 = rotationReport(3, 'wa', [
    rotation('ra1', [
      [0, 0n, 5n],
      [1, 0n, 2n],
    ]),
  ])

  test('keeps the newest status of each sender, whole; completeness still counts partitions', () => {
    let tracker = openRound(commitId, new Map([[topic, 3]]))
    let result = recordWriteStatus(tracker, asMessage(a1))
    assert.deepEqual(result.recorded, at(0, 1))
    tracker = result.tracker
    assert.deepEqual(missingPartitions(tracker), at(2))
    assert.equal(tracker.statuses.size, 0)
    // Another sender claiming partition 0 too (a zombie or the new owner): both are kept.
    const b1 = rotationReport(4, 'wb', [
      rotation('rb1', [
        [0, 0n, 3n],
        [2, 0n, 1n],
      ]),
    ])
    tracker = recordWriteStatus(tracker, asMessage(b1)).tracker
    assert.equal(isRoundComplete(tracker), true)
    assert.deepEqual(answeredPartitions(tracker), at(0, 1, 2))
    // The first sender again, with one rotation more: its status is replaced, not merged.
    const a2 = rotationReport(3, 'wa', [...a1.rotations, rotation('ra2', [[1, 2n, 4n]])])
    result = recordWriteStatus(tracker, asMessage(a2))
    assert.deepEqual(result.recorded, at(0, 1))
    assert.deepEqual(
      answeredReports(result.tracker).map((r) => [r.sender.workerId, r.rotations.map((x) => x.id)]),
      [
        ['wa', ['ra1', 'ra2']],
        ['wb', ['rb1']],
      ],
    )
    assert.equal(hasDataToCommit(result.tracker), true)
  })

  test('ignores an older generation of the same member, a redelivery, and a status naming another topic', () => {
    const tracker = recordWriteStatus(openRound(commitId, new Map([[topic, 2]])), asMessage(a1)).tracker
    const older = { ...rotationReport(2, 'wa', []), statuses: [written(0, 0n, 0n, { files: [] })] }
    assert.deepEqual(recordWriteStatus(tracker, asMessage(older)).ignored, [
      { topic, partition: 0, reason: 'older-generation' },
    ])
    const again = recordWriteStatus(tracker, asMessage(a1))
    assert.equal(again.tracker, tracker)
    assert.deepEqual(
      again.ignored.map((i) => i.reason),
      ['duplicate', 'duplicate'],
    )
    const elsewhere = {
      ...a1,
      rotations: [
        {
          ...(a1.rotations[0] as RotationStatus),
          ranges: [{ topic: 'other', partition: 0, range: { start: 0n, end: 1n } }],
        },
      ],
    }
    assert.deepEqual(
      recordWriteStatus(tracker, asMessage(elsewhere)).ignored.map((i) => i.reason),
      ['other-topic', 'other-topic'],
    )
    assert.deepEqual(
      recordWriteStatus(tracker, asMessage(a1, 'c-0')).ignored.map((i) => i.reason),
      ['other-commit', 'other-commit'],
    )
  })

  test("a routed round takes only statuses of the coordinator's route", () => {
    const round = openRound(commitId, new Map([[topic, 2]]), 'route-b')
    const ofRoute = (route?: string) => ({ ...asMessage(a1), ...(route === undefined ? {} : { route }) })
    assert.deepEqual(
      recordWriteStatus(round, ofRoute('route-a')).ignored.map((i) => i.reason),
      ['other-route', 'other-route'],
    )
    assert.deepEqual(
      recordWriteStatus(round, ofRoute()).ignored.map((i) => i.reason),
      ['other-route', 'other-route'],
      'a sender that names no route is of none',
    )
    const taken = recordWriteStatus(round, ofRoute('route-b'))
    assert.deepEqual(taken.recorded, at(0, 1))
    // an unrouted round takes any
    assert.deepEqual(
      recordWriteStatus(openRound(commitId, new Map([[topic, 2]])), ofRoute('route-a')).recorded,
      at(0, 1),
    )
  })

  test('on the timeout commits the senders that answered', () => {
    const tracker = recordWriteStatus(openRound(commitId, new Map([[topic, 4]])), asMessage(a1)).tracker
    assert.deepEqual(decideRound(tracker, 10, 10), { kind: 'commit', partial: true, missing: at(2, 3) })
    const idle = rotationReport(1, 'wc', [], { summaries: [empty(2), empty(3)] })
    const quiet = recordWriteStatus(openRound(commitId, new Map([[topic, 2]])), asMessage(idle)).tracker
    assert.equal(hasDataToCommit(quiet), false)
  })

  test('both layouts answer one round (a rolling upgrade)', () => {
    let tracker = recordWriteStatus(openRound(commitId, new Map([[topic, 3]])), asMessage(a1)).tracker
    tracker = recordWriteStatus(tracker, report([written(2, 0n, 4n)])).tracker
    assert.equal(isRoundComplete(tracker), true)
    assert.deepEqual(
      answeredStatuses(tracker).map((s) => s.partition),
      [2],
    )
    assert.equal(answeredReports(tracker).length, 1)
  })
})

describe('RoundTracker, a dataset of several topics', () => {
  const expected = new Map([
    ['a', 2],
    ['b', 1],
  ])
  const tp = (t: string, partition: number) => ({ topic: t, partition })
  const onTopic = (t: string, rotations: RotationStatus[], generation = 3) => {
    const base = rotationReport(generation, 'wa', [])
    return {
      commitId,
      sender: base.sender,
      topic: t,
      statuses: rotations.flatMap((r) =>
        r.ranges.map(({ partition }) => written(partition, 0n, 5n, { topic: t, files: [] })),
      ),
      rotations: rotations.map((r) => ({ ...r, ranges: r.ranges.map((range) => ({ ...range, topic: t })) })),
    }
  }

  test('waits for every partition of every topic, and names each missing one with its topic', () => {
    const tracker = openRound(commitId, expected)
    assert.deepEqual(missingPartitions(tracker), [tp('a', 0), tp('a', 1), tp('b', 0)])
    const answered = recordWriteStatus(tracker, report([written(0, 0n, 5n, { topic: 'b' })])).tracker
    assert.deepEqual(missingPartitions(answered), [tp('a', 0), tp('a', 1)])
  })

  test('partition 0 of two topics are two partitions (the per-partition layout)', () => {
    let tracker = openRound(commitId, expected)
    tracker = recordWriteStatus(tracker, report([written(0, 0n, 5n, { topic: 'a' })])).tracker
    tracker = recordWriteStatus(tracker, report([written(0, 0n, 7n, { topic: 'b' })])).tracker
    assert.deepEqual(
      answeredStatuses(tracker).map((s) => [s.topic, s.partition, s.kind === 'written' ? s.range.end : undefined]),
      [
        ['a', 0, 5n],
        ['b', 0, 7n],
      ],
    )
  })

  test("one member's statuses of two topics are both kept, each replaced only by its own topic's", () => {
    let tracker = openRound(commitId, expected)
    tracker = recordWriteStatus(
      tracker,
      onTopic('a', [
        rotation('ra1', [
          [0, 0n, 5n],
          [1, 0n, 2n],
        ]),
      ]),
    ).tracker
    tracker = recordWriteStatus(tracker, onTopic('b', [rotation('rb1', [[0, 0n, 3n]])])).tracker
    assert.equal(isRoundComplete(tracker), true)
    assert.deepEqual(
      answeredReports(tracker).map((r) => r.rotations.map((x) => x.id)),
      [['ra1'], ['rb1']],
    )
    tracker = recordWriteStatus(
      tracker,
      onTopic('b', [rotation('rb1', [[0, 0n, 3n]]), rotation('rb2', [[0, 3n, 4n]])]),
    ).tracker
    assert.deepEqual(
      answeredReports(tracker).map((r) => r.rotations.map((x) => x.id)),
      [['ra1'], ['rb1', 'rb2']],
    )
  })

  test('a status that says one topic and holds another is ignored whole', () => {
    const mixed = { ...onTopic('a', [rotation('ra1', [[0, 0n, 5n]])]), topic: 'b' }
    const result = recordWriteStatus(openRound(commitId, expected), mixed)
    assert.deepEqual(result.recorded, [])
    assert.deepEqual(
      result.ignored.map((i) => i.reason),
      ['other-topic'],
    )
  })
})
