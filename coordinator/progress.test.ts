import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../shared/index.ts'
import type { Progress } from '../shared/progress/index.ts'
import {
  decodeProgress,
  encodeProgress,
  findProgress,
  markerSnapshots,
  mergeProgress,
  offsetsKey,
  type ProgressSource,
  progressForRound,
  readProgress,
} from './progress.ts'
import { group, type SnapshotSpec, tableWith, written } from './test-fixtures.ts'

const key = offsetsKey(group)
const progress = (entries: Record<string, Record<number, bigint>>): Progress =>
  new Map(
    Object.entries(entries).map(([t, p]) => [t, new Map(Object.entries(p).map(([k, v]) => [Number(k), v]))] as const),
  )

describe('the progress marker', () => {
  test('round-trips offsets beyond 2^53 exactly', () => {
    const huge = progress({ events: { 0: 9_007_199_254_740_993n, 1: 9_223_372_036_854_775_807n, 2: 0n } })
    const text = encodeProgress(huge)
    assert.equal(text, '{"events":{"0":9007199254740993,"1":9223372036854775807,"2":0}}')
    assert.deepEqual(decodeProgress(text), huge)
  })

  test('is written in topic and partition order so equal progress gives equal text', () => {
    const a = new Map([
      ['zeta', new Map([[10, 1n]])],
      [
        'alpha',
        new Map([
          [2, 5n],
          [10, 7n],
          [1, 3n],
        ]),
      ],
    ])
    assert.equal(encodeProgress(a), '{"alpha":{"1":3,"2":5,"10":7},"zeta":{"10":1}}')
  })

  test('reads an empty object as no progress', () => {
    assert.deepEqual(decodeProgress('{}'), new Map())
  })

  for (const [name, text] of [
    ['text that is not JSON', '{"events":'],
    ['an array', '[1]'],
    ['a number', '12'],
    ['a topic that is not an object', '{"events": 12}'],
    ['a negative offset', '{"events": {"0": -1}}'],
    ['a fractional offset', '{"events": {"0": 1.5}}'],
    ['an offset written as a string', '{"events": {"0": "12"}}'],
    ['a partition that is not a number', '{"events": {"p0": 1}}'],
    ['a partition with a leading zero', '{"events": {"01": 1}}'],
    ['a negative partition', '{"events": {"-1": 1}}'],
    ['a partition beyond int32', '{"events": {"2147483648": 1}}'],
  ] as const) {
    test(`refuses ${name} as a broken invariant`, () => {
      assert.throws(
        () => decodeProgress(text),
        (error) => isFloeError(error, 'INVARIANT_BROKEN'),
      )
    })
  }
})

describe('readProgress', () => {
  const marker = (offsets: Record<number, bigint>) => ({ [key]: encodeProgress(progress({ events: offsets })) })
  const cases: Array<{
    name: string
    snapshots: SnapshotSpec[]
    properties?: Record<string, string>
    main?: bigint | null
    expected: Progress
    source: ProgressSource
  }> = [
    {
      name: 'a table without snapshots or property has no progress',
      snapshots: [],
      expected: new Map(),
      source: { kind: 'none' },
    },
    {
      name: 'the newest ancestor that carries the marker gives the progress',
      snapshots: [
        { id: 1n, summary: marker({ 0: 10n }) },
        { id: 2n, summary: marker({ 0: 20n }) },
      ],
      expected: progress({ events: { 0: 20n } }),
      source: { kind: 'snapshot', snapshotId: 2n },
    },
    {
      name: 'snapshots of other writers are skipped over',
      snapshots: [
        { id: 1n, summary: marker({ 0: 10n }) },
        { id: 2n, summary: { 'spark.app.id': 'compaction' } },
        { id: 3n },
      ],
      expected: progress({ events: { 0: 10n } }),
      source: { kind: 'snapshot', snapshotId: 1n },
    },
    {
      name: "another group's marker is not this group's progress",
      snapshots: [
        { id: 1n, summary: marker({ 0: 10n }) },
        { id: 2n, summary: { [offsetsKey('other')]: '{"events":{"0":99}}' } },
      ],
      expected: progress({ events: { 0: 10n } }),
      source: { kind: 'snapshot', snapshotId: 1n },
    },
    {
      name: 'the table property stands in when expiry removed every marked snapshot',
      snapshots: [{ id: 7n, parent: 6n }, { id: 8n }],
      properties: marker({ 0: 70n, 1: 5n }),
      expected: progress({ events: { 0: 70n, 1: 5n } }),
      source: { kind: 'property' },
    },
    {
      name: 'an ancestor wins over a newer property (a rollback does not roll properties back)',
      snapshots: [
        { id: 1n, summary: marker({ 0: 10n }) },
        { id: 2n, summary: marker({ 0: 20n }) },
      ],
      main: 1n,
      properties: marker({ 0: 20n }),
      expected: progress({ events: { 0: 10n } }),
      source: { kind: 'snapshot', snapshotId: 1n },
    },
    {
      name: 'a marked snapshot that is not on main does not count',
      snapshots: [
        { id: 1n, summary: marker({ 0: 10n }) },
        { id: 2n, summary: marker({ 0: 20n }), parent: 1n },
        { id: 3n, parent: 1n },
      ],
      main: 3n,
      expected: progress({ events: { 0: 10n } }),
      source: { kind: 'snapshot', snapshotId: 1n },
    },
  ]
  for (const c of cases) {
    test(c.name, () => {
      const metadata = tableWith(c.snapshots, {
        ...(c.properties ? { properties: c.properties } : {}),
        ...(c.main !== undefined ? { main: c.main } : {}),
      })
      assert.deepEqual(readProgress(metadata, group), c.expected)
      assert.deepEqual(findProgress(metadata, group).source, c.source)
    })
  }

  test('a damaged marker on the newest marked ancestor is a broken invariant', () => {
    const metadata = tableWith([
      { id: 1n, summary: marker({ 0: 1n }) },
      { id: 2n, summary: { [key]: 'oops' } },
    ])
    assert.throws(
      () => readProgress(metadata, group),
      (error) => isFloeError(error, 'INVARIANT_BROKEN'),
    )
  })
})

describe('mergeProgress', () => {
  test('moves committed partitions forward and keeps every other partition the group ever committed', () => {
    const previous = progress({ events: { 0: 10n, 1: 20n }, old: { 0: 5n } })
    const merged = mergeProgress(previous, [
      { topic: 'events', partition: 1, offset: 25n },
      { topic: 'events', partition: 2, offset: 3n },
      { topic: 'new', partition: 0, offset: 1n },
    ])
    assert.deepEqual(merged, progress({ events: { 0: 10n, 1: 25n, 2: 3n }, old: { 0: 5n }, new: { 0: 1n } }))
    assert.deepEqual(previous, progress({ events: { 0: 10n, 1: 20n }, old: { 0: 5n } }), 'previous is untouched')
  })

  test('keeps an offset that did not move', () => {
    const previous = progress({ events: { 0: 10n } })
    assert.deepEqual(mergeProgress(previous, [{ topic: 'events', partition: 0, offset: 10n }]), previous)
  })

  test('refuses to move a partition backwards', () => {
    assert.throws(
      () => mergeProgress(progress({ events: { 0: 10n } }), [{ topic: 'events', partition: 0, offset: 9n }]),
      (error) => isFloeError(error, 'INVARIANT_BROKEN'),
    )
  })
})

describe('progressForRound', () => {
  const marker = (offsets: Record<number, bigint>) => encodeProgress(progress({ events: offsets }))
  const round = 'round-7'
  const statuses = [
    written(0, 100n, 150n),
    written(1, 40n, 60n, { origin: 'group-offset' }),
    written(2, 500n, 600n, { jump: { from: 300n, to: 500n } }),
    written(3, 10n, 20n),
  ]

  test('is the table progress when the round has not landed', () => {
    const metadata = tableWith([{ id: 1n, summary: { [key]: marker({ 0: 100n }) } }])
    assert.deepEqual(progressForRound(metadata, group, round, statuses), {
      ...findProgress(metadata, group),
      landed: false,
    })
  })

  test('once the round landed, is the marker of the newest older ancestor', () => {
    const metadata = tableWith([
      { id: 1n, summary: { [key]: marker({ 0: 100n, 2: 300n }) } },
      { id: 2n, summary: { 'floe.commit-id': round, [key]: marker({ 0: 150n, 1: 60n, 2: 600n }) } },
      { id: 3n },
    ])
    assert.deepEqual(progressForRound(metadata, group, round, statuses), {
      progress: progress({ events: { 0: 100n, 2: 300n } }),
      source: { kind: 'snapshot', snapshotId: 1n },
      landed: true,
    })
  })

  test('once a first round landed with no older marker, rebuilds the table as it stood before it', () => {
    const metadata = tableWith(
      [{ id: 2n, summary: { 'floe.commit-id': round, [key]: marker({ 0: 150n, 1: 60n, 2: 600n, 3: 15n }) } }],
      {
        properties: { [key]: marker({ 0: 150n, 1: 60n, 2: 600n, 3: 15n }) },
      },
    )
    assert.deepEqual(progressForRound(metadata, group, round, statuses), {
      // 0 and 1 committed by the round, 2 committed across its jump, 3 not the round's (15 != 20).
      progress: progress({ events: { 0: 100n, 1: 40n, 2: 300n, 3: 15n } }),
      source: { kind: 'snapshot', snapshotId: 2n },
      landed: true,
    })
  })
})

describe('the snapshots an expiry keeps for the markers', () => {
  test('the newest ancestor of main carrying each group’s marker, and none off main', () => {
    const other = offsetsKey('floe-other')
    const metadata = tableWith(
      [
        { id: 1n, summary: { [key]: '{}' } },
        { id: 2n, summary: { [other]: '{}' } },
        { id: 3n, summary: { [key]: '{}' } },
        { id: 4n },
        { id: 5n, summary: { [key]: '{}' }, parent: 4n },
        { id: 6n, parent: 4n },
      ],
      { main: 6n },
    )
    assert.deepEqual([...markerSnapshots(metadata)].sort(), [2n, 3n])
  })

  test('a table without a marker keeps nothing for it', () => {
    assert.deepEqual([...markerSnapshots(tableWith([{ id: 1n }, { id: 2n }]))], [])
  })
})
