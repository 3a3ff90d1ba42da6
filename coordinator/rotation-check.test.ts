import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LogStartJump, RotationStatus } from '../protocol/index.ts'
import type { Progress } from '../shared/progress/index.ts'
import type { ContiguityCheck, RejectionReason } from './contiguity.ts'
import { checkRound, type RotationReport } from './rotation-check.ts'
import {
  failed,
  type RotationRangeSpec as Range,
  random,
  rotationReport as report,
  rotation,
  topic,
  written,
} from './test-fixtures.ts'

const at = (offsets: Record<number, bigint>): Progress =>
  new Map([[topic, new Map(Object.entries(offsets).map(([p, o]) => [Number(p), o]))]])

interface Expected {
  accepted: string[]
  /** Per partition the table's offset after the commit, for every partition an accepted rotation touched. */
  committed: Record<number, bigint>
  rejected?: Record<number, RejectionReason>
  rejectedRotations?: Record<string, RejectionReason>
  lost?: Array<[partition: number, from: bigint, to: bigint]>
}

function outcome(check: ContiguityCheck) {
  return {
    accepted: check.rotations.accepted.map((r) => r.id),
    committed: Object.fromEntries(check.accepted.map((a) => [a.partition, a.range.end])),
    rejected: Object.fromEntries(check.rejected.map((r) => [r.partition, r.reason])),
    rejectedRotations: Object.fromEntries(check.rotations.rejected.map((r) => [r.id, r.reason])),
    lost: check.lost.map((l) => [l.partition, l.from, l.to]),
  }
}

const cases: Array<{ name: string; table: Progress; reports: RotationReport[]; expected: Expected }> = [
  {
    name: 'rotations that chain from the table are accepted, each partition moved to the end of its chain',
    table: at({ 0: 10n, 1: 20n }),
    reports: [
      report(1, 'w1', [
        rotation('r1', [
          [0, 10n, 15n],
          [1, 20n, 21n],
        ]),
        rotation('r2', [[0, 15n, 18n]], []),
      ]),
    ],
    expected: { accepted: ['r1', 'r2'], committed: { 0: 18n, 1: 21n } },
  },
  {
    name: 'crash after WRITE-STATUS: the other status committed first, the restarted one is behind the table whole',
    table: at({ 0: 15n, 1: 21n }),
    reports: [
      report(2, 'w1', [
        rotation('r1', [
          [0, 10n, 15n],
          [1, 20n, 21n],
        ]),
      ]),
    ],
    expected: { accepted: [], committed: {}, rejected: { 0: 'behind-table', 1: 'rotation-rejected' } },
  },
  {
    name: 'crash after the commit, before the ACK: a rotation wholly behind the table is refused',
    table: at({ 0: 30n, 1: 40n }),
    reports: [
      report(1, 'w1', [
        rotation('r1', [
          [0, 10n, 15n],
          [1, 20n, 21n],
        ]),
      ]),
    ],
    expected: { accepted: [], committed: {}, rejectedRotations: { r1: 'behind-table' } },
  },
  {
    name: 'one stale range (ending at the table) stops the whole rotation; the other partition does not move',
    table: at({ 0: 50n, 1: 20n }),
    reports: [
      report(1, 'w1', [
        rotation('r1', [
          [0, 40n, 50n],
          [1, 20n, 30n],
        ]),
      ]),
    ],
    expected: {
      accepted: [],
      committed: {},
      rejected: { 0: 'behind-table', 1: 'rotation-rejected' },
      rejectedRotations: { r1: 'behind-table' },
    },
  },
  {
    name: 'one stale range straddling the table stops the whole rotation',
    table: at({ 0: 45n, 1: 20n }),
    reports: [
      report(1, 'w1', [
        rotation('r1', [
          [1, 20n, 30n],
          [0, 40n, 50n],
        ]),
      ]),
    ],
    expected: {
      accepted: [],
      committed: {},
      rejected: { 0: 'behind-table', 1: 'rotation-rejected' },
      rejectedRotations: { r1: 'behind-table' },
    },
  },
  {
    name: 'a rejected rotation stops later rotations of its partitions, and through them other partitions; an unrelated one lands',
    table: at({ 0: 10n, 1: 20n, 2: 30n, 3: 40n }),
    reports: [
      report(1, 'w1', [
        rotation('r1', [
          [0, 10n, 15n],
          [3, 35n, 40n],
        ]),
        rotation('r2', [
          [0, 15n, 18n],
          [1, 20n, 25n],
        ]),
        rotation('r3', [[1, 25n, 27n]]),
        rotation('r4', [[2, 30n, 33n]]),
      ]),
    ],
    expected: {
      accepted: ['r4'],
      committed: { 2: 33n },
      rejected: { 0: 'rotation-rejected', 1: 'rotation-rejected', 3: 'behind-table' },
      rejectedRotations: { r1: 'behind-table', r2: 'ahead-of-table', r3: 'ahead-of-table' },
    },
  },
  {
    name: 'a log-start jump between two rotations is bridged, the records between counted lost',
    table: at({ 0: 10n, 1: 20n }),
    reports: [
      report(
        1,
        'w1',
        [
          rotation('r1', [
            [0, 10n, 15n],
            [1, 20n, 22n],
          ]),
          rotation('r2', [
            [0, 40n, 45n],
            [1, 22n, 23n],
          ]),
        ],
        { jumps: { 0: { from: 15n, to: 40n } } },
      ),
    ],
    expected: { accepted: ['r1', 'r2'], committed: { 0: 45n, 1: 23n }, lost: [[0, 15n, 40n]] },
  },
  {
    name: 'a log-start jump before the chain bridges the table to the broker log start',
    table: at({ 0: 10n }),
    reports: [report(1, 'w1', [rotation('r1', [[0, 40n, 45n]])], { jumps: { 0: { from: 10n, to: 40n } } })],
    expected: { accepted: ['r1'], committed: { 0: 45n }, lost: [[0, 10n, 40n]] },
  },
  {
    name: 'kept files then a jump after them with nothing read since: the files land and the table moves on to the log start',
    table: at({ 0: 10n, 1: 20n }),
    reports: [
      report(
        1,
        'w1',
        [
          rotation('r1', [
            [0, 10n, 15n],
            [1, 20n, 22n],
          ]),
        ],
        { summaries: [written(0, 10n, 40n, { files: [], jump: { from: 15n, to: 40n } })] },
      ),
    ],
    expected: { accepted: ['r1'], committed: { 0: 40n, 1: 22n }, lost: [[0, 15n, 40n]] },
  },
  {
    name: 'a jump after the chain moves nothing when the files before it are refused',
    table: at({ 0: 12n }),
    reports: [
      report(1, 'w1', [rotation('r1', [[0, 10n, 15n]])], {
        summaries: [written(0, 10n, 40n, { files: [], jump: { from: 15n, to: 40n } })],
      }),
    ],
    expected: {
      accepted: [],
      committed: {},
      rejected: { 0: 'behind-table' },
      rejectedRotations: { r1: 'behind-table' },
    },
  },
  {
    name: 'a chain starting where its jump starts (the files before it committed) bridges the table to the log start',
    table: at({ 0: 15n }),
    reports: [
      report(1, 'w1', [rotation('r1', [[0, 40n, 45n]])], {
        summaries: [written(0, 15n, 45n, { files: [], jump: { from: 15n, to: 40n } })],
      }),
    ],
    expected: { accepted: ['r1'], committed: { 0: 45n }, lost: [[0, 15n, 40n]] },
  },
  {
    name: 'a jump declared from elsewhere than the table does not bridge',
    table: at({ 0: 12n }),
    reports: [report(1, 'w1', [rotation('r1', [[0, 40n, 45n]])], { jumps: { 0: { from: 10n, to: 40n } } })],
    expected: { accepted: [], committed: {}, rejected: { 0: 'log-start-jump-mismatch' } },
  },
  {
    name: "a jump of one partition never lets another partition's gap through",
    table: at({ 0: 10n, 1: 20n }),
    reports: [
      report(
        1,
        'w1',
        [
          rotation('r1', [
            [0, 40n, 45n],
            [1, 25n, 26n],
          ]),
        ],
        { jumps: { 0: { from: 10n, to: 40n } } },
      ),
    ],
    expected: { accepted: [], committed: {}, rejected: { 0: 'rotation-rejected', 1: 'ahead-of-table' } },
  },
  {
    name: 'zombie and new owner claim the same start: the newer generation wins, the zombie is rejected whole',
    table: at({ 0: 10n, 1: 20n }),
    reports: [
      report(3, 'zombie', [
        rotation('z1', [
          [0, 10n, 14n],
          [1, 20n, 24n],
        ]),
      ]),
      report(4, 'owner', [rotation('o1', [[0, 10n, 12n]])]),
    ],
    expected: {
      accepted: ['o1'],
      committed: { 0: 12n },
      rejected: { 1: 'rotation-rejected' },
      rejectedRotations: { z1: 'behind-table' },
    },
  },
  {
    name: 'two senders of one generation claiming the same start: exactly one lands',
    table: at({ 0: 10n }),
    reports: [report(4, 'a', [rotation('a1', [[0, 10n, 14n]])]), report(4, 'b', [rotation('b1', [[0, 10n, 16n]])])],
    expected: { accepted: ['a1'], committed: { 0: 14n }, rejectedRotations: { b1: 'behind-table' } },
  },
  {
    name: 'a partition new to the table is taken at any start when its chain did not start from the table',
    table: at({}),
    reports: [report(1, 'w1', [rotation('r1', [[0, 500n, 510n]])], { origin: 'group-offset' })],
    expected: { accepted: ['r1'], committed: { 0: 510n } },
  },
  {
    name: 'a partition new to the table whose chain started from a table offset is refused',
    table: at({}),
    reports: [report(1, 'w1', [rotation('r1', [[0, 500n, 510n]])])],
    expected: { accepted: [], committed: {}, rejected: { 0: 'unknown-to-table' } },
  },
]

describe('checkRound over rotations', () => {
  for (const c of cases) {
    test(c.name, () => {
      const got = outcome(checkRound(c.table, [], c.reports))
      assert.deepEqual(got.accepted, c.expected.accepted)
      assert.deepEqual(got.committed, c.expected.committed)
      if (c.expected.rejected) assert.deepEqual(got.rejected, c.expected.rejected)
      if (c.expected.rejectedRotations) assert.deepEqual(got.rejectedRotations, c.expected.rejectedRotations)
      assert.deepEqual(got.lost, c.expected.lost ?? [])
    })
  }

  test('the zombie duel has one winner whatever order the statuses arrive in', () => {
    const zombie = report(3, 'zombie', [rotation('z1', [[0, 10n, 14n]])])
    const owner = report(4, 'owner', [rotation('o1', [[0, 10n, 12n]])])
    for (const reports of [
      [zombie, owner],
      [owner, zombie],
    ]) {
      const check = checkRound(at({ 0: 10n }), [], reports)
      assert.deepEqual(
        check.rotations.accepted.map((r) => r.id),
        ['o1'],
      )
    }
  })

  test("the commit carries exactly the accepted rotations' files, and the ACK per partition the new offset", () => {
    const check = checkRound(
      at({ 0: 10n, 1: 20n, 2: 9n }),
      [],
      [
        report(1, 'w1', [
          rotation(
            'r1',
            [
              [0, 10n, 15n],
              [1, 20n, 22n],
            ],
            ['s3://b/a.parquet', 's3://b/b.parquet'],
          ),
          rotation(
            'r2',
            [
              [1, 22n, 30n],
              [2, 5n, 9n],
            ],
            ['s3://b/c.parquet'],
          ),
        ]),
      ],
    )
    assert.deepEqual(
      check.rotations.accepted.flatMap((r) => r.files.map((f) => f.filePath)),
      ['s3://b/a.parquet', 's3://b/b.parquet'],
    )
    assert.deepEqual(
      check.accepted.map((a) => [a.partition, a.range, a.tableOffset, a.files]),
      [
        [0, { start: 10n, end: 15n }, 10n, []],
        [1, { start: 20n, end: 22n }, 20n, []],
      ],
    )
    assert.deepEqual(check.rejected, [
      { topic, partition: 2, reason: 'behind-table', tableOffset: 9n, range: { start: 5n, end: 9n } },
    ])
  })
})

describe('checkRound: a status whose summaries disagree with its rotations is refused whole', () => {
  const table = at({ 0: 10n, 1: 20n })
  const r1 = rotation('r1', [
    [0, 10n, 15n],
    [1, 20n, 22n],
  ])
  const variants: Array<[string, RotationReport]> = [
    ['a gap in a chain', report(1, 'w', [r1, rotation('r2', [[0, 16n, 18n]])])],
    ['an overlap in a chain', report(1, 'w', [r1, rotation('r2', [[0, 14n, 18n]])])],
    [
      'a summary range other than the chain',
      report(1, 'w', [r1], { summaries: [written(0, 10n, 16n, { files: [] })] }),
    ],
    ['a summary with files', report(1, 'w', [r1], { summaries: [written(0, 10n, 15n)] })],
    [
      'a claimed partition without a summary',
      { ...report(1, 'w', [r1]), statuses: [written(0, 10n, 15n, { files: [] })] },
    ],
    ['a claimed partition reported failed', report(1, 'w', [r1], { summaries: [failed(1)] })],
    ['a jump where the chain does not jump', report(1, 'w', [r1], { jumps: { 0: { from: 12n, to: 13n } } })],
    [
      'a jump after the chain that the summary does not end at',
      report(1, 'w', [r1], { summaries: [written(0, 10n, 30n, { files: [], jump: { from: 15n, to: 40n } })] }),
    ],
    [
      'a jump after the chain that does not start where the chain ends',
      report(1, 'w', [r1], { summaries: [written(0, 10n, 40n, { files: [], jump: { from: 16n, to: 40n } })] }),
    ],
    [
      'a summary advancing over positions no rotation holds',
      report(1, 'w', [r1], { summaries: [written(2, 5n, 9n, { files: [] })] }),
    ],
    ['a rotation with files and no positions', report(1, 'w', [r1, rotation('r2', [[0, 15n, 15n]])])],
    [
      'summaries that advance with no rotation at all (a shared sender whose rotations were not sent)',
      { ...report(1, 'w', []), statuses: [written(0, 10n, 15n, { files: [] }), written(1, 20n, 22n, { files: [] })] },
    ],
    [
      'one partition twice in one rotation',
      report(1, 'w', [
        rotation('r1', [
          [0, 10n, 12n],
          [0, 12n, 15n],
        ]),
      ]),
    ],
  ]
  for (const [name, bad] of variants) {
    test(name, () => {
      const check = checkRound(table, [], [bad])
      assert.deepEqual(check.rotations.accepted, [])
      assert.ok(check.rotations.rejected.every((r) => r.reason === 'invalid-range'))
      assert.ok(check.rejected.length > 0 && check.rejected.every((r) => r.reason === 'invalid-range'), name)
    })
  }

  test('another sender of the same round is judged on its own', () => {
    const check = checkRound(
      table,
      [],
      [report(1, 'bad', [r1, rotation('r2', [[0, 16n, 18n]])]), report(1, 'good', [rotation('g1', [[1, 20n, 23n]])])],
    )
    assert.deepEqual(
      check.rotations.accepted.map((r) => r.id),
      ['g1'],
    )
    assert.deepEqual(
      check.rejected.map((r) => [r.partition, r.reason]),
      [[0, 'invalid-range']],
    )
  })
})

describe('checkRound with both layouts in one round (a rolling upgrade)', () => {
  test('per-partition statuses are judged after the rotations, against the offsets the rotations left', () => {
    const check = checkRound(
      at({ 0: 10n, 1: 20n, 2: 30n }),
      [written(0, 10n, 13n), written(2, 30n, 31n), failed(3)],
      [report(2, 'new', [rotation('r1', [[0, 10n, 12n]]), rotation('r2', [[1, 20n, 24n]])])],
    )
    assert.deepEqual(
      check.rotations.accepted.map((r) => r.id),
      ['r1', 'r2'],
    )
    assert.deepEqual(
      check.accepted.map((a) => [a.partition, a.range.start, a.range.end, a.files.length]),
      [
        [0, 10n, 12n, 0],
        [1, 20n, 24n, 0],
        [2, 30n, 31n, 1],
      ],
    )
    // Partition 0's old-layout status starts behind the offset r1 left: committed wins in the ACK.
    assert.deepEqual(check.rejected, [])
    assert.deepEqual(check.errored, [{ topic, partition: 3, message: 'upload failed' }])
  })

  test('a per-partition status may continue where an accepted rotation ended', () => {
    const check = checkRound(
      at({ 0: 10n }),
      [written(0, 12n, 20n)],
      [report(2, 'new', [rotation('r1', [[0, 10n, 12n]])])],
    )
    assert.deepEqual(
      check.accepted.map((a) => [a.partition, a.range.start, a.range.end, a.files.length]),
      [[0, 10n, 20n, 1]],
    )
  })

  test('without rotation reports the check is the per-partition one', () => {
    const statuses = [written(0, 10n, 13n), written(1, 5n, 9n)]
    const check = checkRound(at({ 0: 10n, 1: 20n }), statuses)
    assert.deepEqual(
      check.accepted.map((a) => a.partition),
      [0],
    )
    assert.deepEqual(
      check.rejected.map((r) => [r.partition, r.reason, r.tableOffset]),
      [[1, 'behind-table', 20n]],
    )
  })
})

describe('checkRound, over many generated rounds', () => {
  test('accepted ranges tile each partition from the table, whole rotations only, nothing twice', () => {
    const pick = random(7)
    let acceptedRotations = 0
    let rejectedRotations = 0
    for (let round = 0; round < 4000; round++) {
      const table = new Map([0, 1, 2].map((p) => [p, BigInt(10 + pick(3))]))
      const reports: RotationReport[] = []
      for (let s = 0; s < 1 + pick(2); s++) {
        // Each sender's chain per partition starts near the table's offset, maybe with one jump.
        const at = new Map([0, 1, 2].map((p) => [p, (table.get(p) as bigint) + BigInt(pick(3) - 1)]))
        const jumps: Record<number, LogStartJump> = {}
        const rotations: RotationStatus[] = []
        for (let r = 0; r < 1 + pick(3); r++) {
          const ranges: Range[] = []
          for (const p of [0, 1, 2]) {
            if (pick(2) === 0) continue
            let start = at.get(p) as bigint
            if (jumps[p] === undefined && pick(5) === 0) {
              const to = start + BigInt(1 + pick(3))
              jumps[p] = { from: start, to }
              start = to
            }
            const end = start + BigInt(1 + pick(3))
            ranges.push([p, start, end])
            at.set(p, end)
          }
          rotations.push(rotation(`s${s}r${r}`, ranges, ranges.length > 0 ? [`s3://b/s${s}r${r}.parquet`] : []))
        }
        // A jump before a partition's first range: its chain summary starts at the jump's end.
        reports.push(report(1 + pick(3), `w${s}`, rotations, { jumps }))
      }
      const progress: Progress = new Map([[topic, table]])
      const check = checkRound(progress, [], reports)
      const label = `round ${round}`
      const accepted = new Set(check.rotations.accepted.map((r) => r.id))
      acceptedRotations += accepted.size
      rejectedRotations += check.rotations.rejected.length
      assert.equal(accepted.size + check.rotations.rejected.length, reports.flatMap((r) => r.rotations).length, label)
      for (const p of [0, 1, 2]) {
        const pieces = check.rotations.accepted
          .flatMap((r) => r.ranges)
          .filter((c) => c.partition === p)
          .map((c) => [c.range.start, c.range.end] as [bigint, bigint])
        for (const lost of check.lost.filter((l) => l.partition === p)) pieces.push([lost.from, lost.to])
        pieces.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        let position = table.get(p) as bigint
        for (const [from, to] of pieces) {
          assert.equal(from, position, `${label}: partition ${p} does not tile`)
          position = to
        }
        const committed = check.accepted.find((a) => a.partition === p)
        assert.equal(committed?.range.end ?? (table.get(p) as bigint), position, label)
      }
      // With one sender, the accepted ranges of each partition are a prefix of its chain past the
      // table (a range already behind it is refused and stops nothing). With two, a range of one
      // sender may land after the other's rotation moved `next` up to it.
      for (const r of reports.length === 1 ? reports : []) {
        for (const p of [0, 1, 2]) {
          const tableOffset = table.get(p) as bigint
          const states = r.rotations
            .filter((x) => x.ranges.some((c) => c.partition === p && c.range.end > tableOffset))
            .map((x) => accepted.has(x.id))
          assert.ok(states.indexOf(false) < 0 || !states.slice(states.indexOf(false)).includes(true), label)
        }
      }
    }
    assert.ok(acceptedRotations > 1000 && rejectedRotations > 1000, `${acceptedRotations} / ${rejectedRotations}`)
  })
})
