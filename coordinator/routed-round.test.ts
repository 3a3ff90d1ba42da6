import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { RotationStatus } from '../protocol/index.ts'
import type { Progress } from '../shared/progress/index.ts'
import { markerOf as at, ordered, type PartSpec, routed } from './routed-fixtures.ts'
import { checkRoutedRound, type RoutedCheck } from './routed-round.ts'
import { landedMarkers, routedCutReads, settleRoutedRound, type TableFate } from './routed-settle.ts'
import { type TableWalk, walkTable } from './routed-walk.ts'
import { dataFile, rotationReport as report, topic } from './test-fixtures.ts'

/** Per rotation with a part of the table: 'accepted' or [reason, expected]. */
function verdicts(walk: TableWalk) {
  return Object.fromEntries(
    [...walk.parts].map(([id, v]) => [
      id,
      v.kind === 'accepted' ? 'accepted' : [v.stoppedBy.reason, v.stoppedBy.expected, v.stoppedBy.partition],
    ]),
  )
}
const movesOf = (walk: TableWalk) => Object.fromEntries(walk.moves.map((m) => [m.partition, m.offset]))

describe('walkTable: a claim must start where the table stops vouching', () => {
  test('a table without rows for many rounds, the ledger vouching: its claim starts at L', () => {
    const walk = walkTable('t', at({ 0: 10n }), at({ 0: 100n }), [
      ordered('r1', [[0, 100n, 150n]], [['t', [[0, 100n, 150n]]]]),
    ])
    assert.deepEqual(verdicts(walk), { r1: 'accepted' })
    assert.deepEqual(movesOf(walk), { 0: 150n })
    assert.deepEqual(
      walk.files.map((f) => f.filePath),
      ['s3://bucket/r1-t.parquet'],
    )
  })

  test('a table ahead of the ledger after a crash: a claim at its floor is taken, one at a is behind', () => {
    const marker = at({ 0: 150n })
    const ledger = at({ 0: 100n })
    const floor = walkTable('t', marker, ledger, [ordered('r1', [[0, 100n, 200n]], [['t', [[0, 150n, 200n]]]])])
    assert.deepEqual(verdicts(floor), { r1: 'accepted' })
    const again = walkTable('t', marker, ledger, [ordered('r1', [[0, 100n, 200n]], [['t', [[0, 100n, 200n]]]])])
    assert.deepEqual(verdicts(again), { r1: ['behind-table', 150n, 0] })
    assert.deepEqual(again.moves, [])
  })

  test('two rotations, rows of the table only in the second: the first moves the pointer without a claim', () => {
    const rotations = [ordered('r1', [[0, 100n, 150n]]), ordered('r2', [[0, 150n, 200n]], [['t', [[0, 150n, 200n]]]])]
    const walk = walkTable('t', at({ 0: 90n }), at({ 0: 100n }), rotations)
    assert.deepEqual(verdicts(walk), { r2: 'accepted' })
    assert.deepEqual(movesOf(walk), { 0: 200n })
  })

  const shapes: Array<[name: string, part: PartSpec, reason: string]> = [
    ['a claim not ending at the range end', ['t', [[0, 100n, 140n]]], 'invalid-range'],
    ['a claim starting before the range', ['t', [[0, 90n, 150n]]], 'invalid-range'],
    ['a claim of no positions', ['t', [[0, 150n, 150n]]], 'invalid-range'],
    ['a claim of a partition the rotation does not read', ['t', [[1, 100n, 150n]]], 'invalid-range'],
    [
      'a partition claimed twice',
      [
        't',
        [
          [0, 100n, 150n],
          [0, 100n, 150n],
        ],
      ],
      'invalid-range',
    ],
    ['a claim past the table (a gap)', ['t', [[0, 120n, 150n]]], 'ahead-of-table'],
  ]
  for (const [name, part, reason] of shapes) {
    test(`${name}: ${reason}`, () => {
      const walk = walkTable('t', at({ 0: 100n }), at({ 0: 100n }), [ordered('r1', [[0, 100n, 150n]], [part])])
      assert.equal(verdicts(walk).r1?.[0], reason)
    })
  }

  test('a table named twice in one rotation is refused', () => {
    const rotation = ordered(
      'r1',
      [[0, 100n, 150n]],
      [
        ['t', [[0, 100n, 150n]]],
        ['t', [[0, 100n, 150n]]],
      ],
    )
    assert.equal(verdicts(walkTable('t', at({}), at({ 0: 100n }), [rotation])).r1?.[0], 'invalid-range')
  })

  test('a partition neither the table nor the ledger knows: unknown-to-table', () => {
    const walk = walkTable('t', at({}), at({}), [ordered('r1', [[0, 100n, 150n]], [['t', [[0, 100n, 150n]]]])])
    assert.deepEqual(verdicts(walk), { r1: ['unknown-to-table', undefined, 0] })
  })

  test('all or nothing per (rotation, table): one bad claim, no pointer moves, the later claims miss', () => {
    const rotations = [
      ordered(
        'r1',
        [
          [0, 100n, 150n],
          [1, 10n, 20n],
        ],
        [
          [
            't',
            [
              [0, 100n, 150n],
              [1, 5n, 20n],
            ],
          ],
        ],
      ),
      ordered('r2', [[0, 150n, 160n]], [['t', [[0, 150n, 160n]]]]),
      ordered('r3', [[1, 20n, 30n]]),
      ordered('r4', [[1, 30n, 40n]], [['t', [[1, 30n, 40n]]]]),
    ]
    const walk = walkTable('t', at({ 0: 100n, 1: 10n }), at({ 0: 100n, 1: 10n }), rotations)
    // r1's pointer at 100 never moved: r2 is ahead of it; r3 without rows cannot move p1 past 10.
    assert.deepEqual(verdicts(walk), {
      r1: ['invalid-range', 10n, 1],
      r2: ['ahead-of-table', 100n, 0],
      r4: ['ahead-of-table', 10n, 1],
    })
    assert.deepEqual(walk.moves, [])
  })

  describe('a range the ledger took across a log-start jump', () => {
    const jump = { from: 100n, to: 130n }
    test('a claim at the jump end is taken; a table without rows there moves past it', () => {
      const rotations = [
        ordered('r1', [[0, 130n, 160n]], [['t', [[0, 130n, 160n]]]], { 0: jump }),
        ordered('r2', [[0, 160n, 170n]], [['u', [[0, 160n, 170n]]]]),
      ]
      const ledger = at({ 0: 100n })
      assert.deepEqual(verdicts(walkTable('t', at({ 0: 90n }), ledger, rotations)), { r1: 'accepted' })
      const u = walkTable('u', at({}), ledger, rotations)
      assert.deepEqual([verdicts(u), movesOf(u)], [{ r2: 'accepted' }, { 0: 170n }])
    })

    test('only the declared jump is bridged: a pointer below its start misses', () => {
      const rotations = [ordered('r1', [[0, 130n, 160n]], [['t', [[0, 130n, 160n]]]], { 0: { from: 120n, to: 130n } })]
      assert.deepEqual(verdicts(walkTable('t', at({}), at({ 0: 100n }), rotations)), {
        r1: ['ahead-of-table', 100n, 0],
      })
    })
  })
})

const rotationIds = (check: RoutedCheck) => ({
  accepted: check.rotations.accepted.map((r) => r.id),
  rejected: Object.fromEntries(check.rotations.rejected.map((r) => [r.id, r.reason])),
})
const refusedOf = (check: RoutedCheck) => Object.fromEntries(check.rejected.map((r) => [r.partition, r.reason]))

describe('checkRoutedRound', () => {
  const ledger = at({ 0: 100n, 1: 10n })
  const markers = new Map<string, Progress>([
    ['t', at({ 0: 90n })],
    ['u', at({ 0: 100n, 1: 10n })],
  ])

  test('rotations in line with the ledger and every table: each table commits its parts in order', () => {
    const rotations = [
      routed(
        'r1',
        [
          [0, 100n, 150n],
          [1, 10n, 20n],
        ],
        [
          [
            'u',
            [
              [0, 100n, 150n],
              [1, 10n, 20n],
            ],
          ],
        ],
      ),
      routed(
        'r2',
        [[0, 150n, 200n]],
        [
          ['t', [[0, 150n, 200n]]],
          ['u', [[0, 150n, 200n]]],
        ],
      ),
    ]
    const check = checkRoutedRound(ledger, markers, [report(1, 'w1', rotations)])
    assert.deepEqual(rotationIds(check), { accepted: ['r1', 'r2'], rejected: {} })
    assert.deepEqual(
      [...check.tables].map(([name, walk]) => [name, walk.files.map((f) => f.filePath), movesOf(walk)]),
      [
        ['u', ['s3://bucket/r1-u.parquet', 's3://bucket/r2-u.parquet'], { 0: 200n, 1: 20n }],
        // t had no rows of p1: r1 moves its pointer there too, and the commit says so.
        ['t', ['s3://bucket/r2-t.parquet'], { 0: 200n, 1: 20n }],
      ],
    )
    assert.deepEqual(check.ledgerStarts, [])
  })

  const invalid: Array<[name: string, rotation: RotationStatus]> = [
    [
      'a table named twice',
      routed(
        'r1',
        [[0, 100n, 150n]],
        [
          ['t', [[0, 100n, 150n]]],
          ['t', [[0, 120n, 150n]]],
        ],
      ),
    ],
    ['a claim not ending at the range end', routed('r1', [[0, 100n, 150n]], [['t', [[0, 100n, 140n]]]])],
    ['a claim outside the ranges', routed('r1', [[0, 100n, 150n]], [['t', [[1, 10n, 20n]]]])],
    ['files of its own beside table parts', { ...routed('r1', [[0, 100n, 150n]]), files: [dataFile('s3://x')] }],
  ]
  for (const [name, bad] of invalid) {
    test(`${name}: the whole report is invalid-range`, () => {
      const later = routed('r2', [[1, 10n, 20n]], [['u', [[1, 10n, 20n]]]])
      const check = checkRoutedRound(ledger, markers, [report(1, 'w1', [bad, later])])
      assert.deepEqual(rotationIds(check), { accepted: [], rejected: { r1: 'invalid-range', r2: 'invalid-range' } })
      assert.deepEqual(refusedOf(check), { 0: 'invalid-range', 1: 'invalid-range' })
      assert.equal(check.tables.size, 0)
    })
  }

  test('the first commit of a new partition: the ledger starts it, its claims are taken from there', () => {
    const rotations = [routed('r1', [[2, 500n, 510n]], [['t', [[2, 500n, 510n]]]])]
    const check = checkRoutedRound(ledger, markers, [report(1, 'w1', rotations, { origin: 'offset-reset' })])
    assert.deepEqual(check.ledgerStarts, [{ topic, partition: 2, offset: 500n }])
    assert.deepEqual(rotationIds(check).accepted, ['r1'])
    assert.deepEqual(movesOf(check.tables.get('t') as TableWalk), { 2: 510n })
    const fromTable = checkRoutedRound(ledger, markers, [report(1, 'w1', rotations)])
    assert.deepEqual([fromTable.ledgerStarts, rotationIds(fromTable).rejected], [[], { r1: 'unknown-to-table' }])
  })

  test('a new partition positioned twice: the ledger starts at the lower start, the other chain is ahead', () => {
    const high = routed('h1', [[2, 700n, 710n]], [['t', [[2, 700n, 710n]]]])
    const low = routed('l1', [[2, 500n, 510n]], [['t', [[2, 500n, 510n]]]])
    const check = checkRoutedRound(ledger, markers, [
      report(3, 'w1', [high], { origin: 'group-offset' }),
      report(2, 'w2', [low], { origin: 'offset-reset' }),
    ])
    assert.deepEqual(check.ledgerStarts, [{ topic, partition: 2, offset: 500n }])
    assert.deepEqual(rotationIds(check), { accepted: ['l1'], rejected: { h1: 'ahead-of-table' } })
  })

  test('a range behind the ledger stops its rotation and the later ones holding its partitions', () => {
    const rotations = [
      routed('r1', [
        [0, 90n, 150n],
        [1, 10n, 20n],
      ]),
      routed('r2', [[1, 20n, 30n]]),
      routed('r3', [[0, 150n, 160n]], [['t', [[0, 150n, 160n]]]]),
    ]
    const other = routed('o1', [[0, 100n, 120n]], [['t', [[0, 100n, 120n]]]])
    const check = checkRoutedRound(ledger, markers, [report(1, 'w1', rotations), report(1, 'w2', [other])])
    assert.deepEqual(rotationIds(check), {
      accepted: ['o1'],
      rejected: { r1: 'behind-table', r2: 'ahead-of-table', r3: 'ahead-of-table' },
    })
    assert.deepEqual(refusedOf(check), { 0: 'behind-table', 1: 'rotation-rejected' })
  })

  test('a table ahead of the ledger stops the rotation whose claim starts at a, and the ledger stays', () => {
    const ahead = new Map([['t', at({ 0: 150n })]])
    const rotations = [routed('r1', [[0, 100n, 200n]], [['t', [[0, 100n, 200n]]]]), routed('r2', [[0, 200n, 210n]])]
    const check = checkRoutedRound(ledger, ahead, [report(1, 'w1', rotations)])
    assert.deepEqual(rotationIds(check), { accepted: [], rejected: { r1: 'behind-table', r2: 'ahead-of-table' } })
    const stop = check.rotations.rejected[0]
    assert.deepEqual([stop?.table?.name, stop?.table?.mismatch.expected], ['t', 150n])
    const floor = [routed('r1', [[0, 100n, 200n]], [['t', [[0, 150n, 200n]]]])]
    assert.deepEqual(rotationIds(checkRoutedRound(ledger, ahead, [report(1, 'w1', floor)])).accepted, ['r1'])
  })

  test('a declared log-start jump: the ledger and the tables cross it, its records are counted lost', () => {
    const rotations = [routed('r1', [[0, 130n, 160n]], [['t', [[0, 130n, 160n]]]])]
    const jumped = report(1, 'w1', rotations, { jumps: { 0: { from: 100n, to: 130n } } })
    const check = checkRoutedRound(ledger, markers, [jumped])
    assert.deepEqual(rotationIds(check).accepted, ['r1'])
    assert.deepEqual(check.rotations.accepted[0]?.ranges[0]?.jump, { from: 100n, to: 130n })
    assert.deepEqual(
      check.lost.map((l) => [l.partition, l.from, l.to]),
      [[0, 100n, 130n]],
    )
  })
})

describe('settling a routed round', () => {
  const ledger = at({ 0: 100n, 1: 10n })
  const markers = new Map<string, Progress>([
    ['t', at({ 0: 100n })],
    ['u', at({ 1: 10n })],
  ])
  const rotations = [
    routed(
      'r1',
      [
        [0, 100n, 150n],
        [1, 10n, 20n],
      ],
      [
        ['t', [[0, 100n, 150n]]],
        ['u', [[1, 10n, 20n]]],
      ],
    ),
    routed('r2', [[0, 150n, 160n]], [['t', [[0, 150n, 160n]]]]),
  ]
  const check = checkRoutedRound(ledger, markers, [report(1, 'w1', rotations)])
  const walked = (table: string, marker: Progress): TableWalk =>
    walkTable(table, marker, ledger, check.rotations.accepted)
  const fates = (t: TableFate, u: TableFate) =>
    new Map([
      ['t', t],
      ['u', u],
    ])
  const landed = (table: string, marker = markers.get(table) as Progress): TableFate => ({
    commit: 'landed',
    walk: walked(table, marker),
  })
  const readsOf = (f: Map<string, TableFate>) =>
    routedCutReads(check, f).map((r) => [r.partition, r.read.start, r.read.end, Object.fromEntries(r.tables)])
  const ledgerLanded = (after: Record<number, bigint>) => ({
    landed: true,
    moves: Object.entries(after).map(([p, offset]) => ({ topic, partition: Number(p), offset })),
    after: at(after),
  })

  test('every table landed, the ledger too: every rotation accepted, nothing to read again', () => {
    const all = fates(landed('t'), landed('u'))
    assert.deepEqual(readsOf(all), [
      [0, 100n, 150n, { t: 'landed' }],
      [1, 10n, 20n, { u: 'landed' }],
      [0, 150n, 160n, { t: 'landed' }],
    ])
    const ack = settleRoutedRound(check, all, ledgerLanded({ 0: 160n, 1: 20n }), landedMarkers(markers, all))
    assert.deepEqual(ack.acceptedRotations, ['r1', 'r2'])
    assert.deepEqual([ack.rejectedRotations, ack.rejections], [[], []])
    assert.equal(ack.committedOffsets.length, 2)
  })

  test('the ledger commit did not land: no rotation is accepted, the participant sends them again', () => {
    const all = fates(landed('t'), landed('u'))
    const ack = settleRoutedRound(check, all, { landed: false, moves: [], after: ledger }, landedMarkers(markers, all))
    assert.deepEqual([ack.acceptedRotations, ack.rejections, ack.committedOffsets], [[], [], []])
  })

  test('an unconfirmed table: the ledger waits on its partition, its rotation is neither taken nor refused', () => {
    const f = fates(landed('t'), { commit: 'unconfirmed', walk: walked('u', markers.get('u') as Progress) })
    assert.deepEqual(readsOf(f)[1], [1, 10n, 20n, { u: 'unconfirmed' }])
    const ack = settleRoutedRound(check, f, ledgerLanded({ 0: 160n, 1: 10n }), landedMarkers(markers, f))
    assert.deepEqual([ack.acceptedRotations, ack.rejections], [['r2'], []])
  })

  test('a part the table walk refused inside its loop: refused, read again from L past the landed floors', () => {
    // t moved to 150 between the round's start and its commit (a commit the round did not know).
    const tAfter = { commit: 'landed' as const, walk: walked('t', at({ 0: 150n })) }
    const uUnconfirmed = { commit: 'unconfirmed' as const, walk: walked('u', at({ 1: 10n })) }
    const f = fates(tAfter, uUnconfirmed)
    // r1's rows of t are there already; r2's claim starts where t is, and is taken.
    assert.deepEqual(verdicts(tAfter.walk), { r1: ['behind-table', 150n, 0], r2: 'accepted' })
    const after = landedMarkers(markers, f)
    const ack = settleRoutedRound(check, f, { landed: false, moves: [], after: ledger }, after)
    assert.deepEqual(
      ack.rejectedRotations.map((r) => [r.id, r.reason, r.table?.name]),
      [['r1', 'behind-table', 't']],
    )
    // t landed r2: its floor is 160. u's commit is unconfirmed: its moves are no floor.
    assert.deepEqual(
      ack.rejections.map((r) => [r.partition, r.reason, r.rereadFrom, r.floors]),
      [
        [0, 'behind-table', 100n, [{ table: 't', offset: 160n }]],
        [1, 'rotation-rejected', 10n, []],
      ],
    )
  })

  test('floors come from confirmed moves only', () => {
    const f = fates(landed('t'), { commit: 'unconfirmed', walk: walked('u', markers.get('u') as Progress) })
    assert.deepEqual(
      [...landedMarkers(markers, f)].map(([name, m]) => [name, m.get(topic)]),
      [
        [
          't',
          new Map([
            [0, 160n],
            [1, 20n],
          ]),
        ],
        ['u', new Map([[1, 10n]])],
      ],
    )
  })

  test('a range crossed by a jump reads, for the ledger, from the jump start', () => {
    const jumped = report(1, 'w1', [routed('r1', [[0, 130n, 160n]])], { jumps: { 0: { from: 100n, to: 130n } } })
    const reads = routedCutReads(checkRoutedRound(ledger, markers, [jumped]), new Map())
    assert.deepEqual(
      reads.map((r) => [r.read.start, r.read.end, r.tables.size]),
      [[100n, 160n, 0]],
    )
  })
})
