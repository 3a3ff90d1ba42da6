import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { activeFileName, jumpFileName, readyFileName } from './names.ts'
import { planRecovery, type RecoveryDeletionReason } from './recovery-plan.ts'

// a topic name with every character Kafka allows besides letters and digits
const topic = 'orders_eu.v1-x'
const partition = 3
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const parquet = (start: number, end: number, n: number) =>
  readyFileName(topic, partition, BigInt(start), BigInt(end), uuid(n), 'parquet')
const json = (start: number, end: number, n: number) =>
  readyFileName(topic, partition, BigInt(start), BigInt(end), uuid(n), 'json')
const pair = (start: number, end: number, n: number) => [parquet(start, end, n), json(start, end, n)]
const active = (n: number) => activeFileName(topic, partition, uuid(n))
const marker = (from: number, to: number) => jumpFileName(topic, partition, { from: BigInt(from), to: BigInt(to) })

interface Case {
  name: string
  files: string[]
  tableOffset: bigint | undefined
  /** file -> reason; files not listed here nor in `unknown` must be kept */
  deleted?: Record<string, RecoveryDeletionReason>
  unknown?: string[]
  resumeFrom: bigint | undefined
  /** ranges of the kept rotations, in order */
  kept?: [number | bigint, number | bigint][]
  /** the recorded jump the kept rotations cross (its marker kept) */
  jump?: [number, number]
}

const cases: Case[] = [
  { name: 'an empty folder resumes at the table offset', files: [], tableOffset: 100n, resumeFrom: 100n },
  {
    name: 'crash before a segment rotates: active files are deleted and the range is read again',
    files: [active(1), active(2)],
    tableOffset: 100n,
    deleted: { [active(1)]: 'active', [active(2)]: 'active' },
    resumeFrom: 100n,
  },
  {
    name: 'crash while sidecars are written: active files and sidecars without a .parquet are deleted',
    files: [active(1), active(2), json(100, 200, 1)],
    tableOffset: 100n,
    deleted: { [active(1)]: 'active', [active(2)]: 'active', [json(100, 200, 1)]: 'orphan' },
    resumeFrom: 100n,
  },
  {
    name: 'crash between the renames: the whole rotation goes, the renamed segment too',
    files: [...pair(100, 200, 1), json(100, 200, 2), active(2)],
    tableOffset: 100n,
    deleted: {
      [parquet(100, 200, 1)]: 'incomplete-rotation',
      [json(100, 200, 1)]: 'incomplete-rotation',
      [json(100, 200, 2)]: 'orphan',
      [active(2)]: 'active',
    },
    resumeFrom: 100n,
  },
  {
    name: 'after rotation, before upload or commit: a rotation starting at the table offset is kept',
    files: [...pair(100, 200, 1), ...pair(100, 200, 2)],
    tableOffset: 100n,
    kept: [[100, 200]],
    resumeFrom: 200n,
  },
  {
    name: 'after rotation, with the partition reassigned past it: a rotation behind the table is deleted',
    files: [...pair(100, 200, 1)],
    tableOffset: 250n,
    deleted: { [parquet(100, 200, 1)]: 'behind-table', [json(100, 200, 1)]: 'behind-table' },
    resumeFrom: 250n,
  },
  {
    name: 'after the Iceberg commit, before the ACK: a rotation ending at the table offset is deleted',
    files: [...pair(100, 200, 1)],
    tableOffset: 200n,
    deleted: { [parquet(100, 200, 1)]: 'behind-table', [json(100, 200, 1)]: 'behind-table' },
    resumeFrom: 200n,
  },
  {
    name: 'a rotation straddling the table offset is deleted',
    files: [...pair(100, 200, 1)],
    tableOffset: 150n,
    deleted: { [parquet(100, 200, 1)]: 'straddles-table', [json(100, 200, 1)]: 'straddles-table' },
    resumeFrom: 150n,
  },
  {
    name: 'a rotation starting after the table offset leaves a gap and is deleted',
    files: [...pair(150, 200, 1)],
    tableOffset: 100n,
    deleted: { [parquet(150, 200, 1)]: 'gap', [json(150, 200, 1)]: 'gap' },
    resumeFrom: 100n,
  },
  {
    name: 'coordinator dies mid-round: several uncommitted rotations chain from the table offset and are kept',
    files: [...pair(200, 300, 3), ...pair(100, 200, 1), ...pair(100, 200, 2), ...pair(300, 301, 4)],
    tableOffset: 100n,
    kept: [
      [100, 200],
      [200, 300],
      [300, 301],
    ],
    resumeFrom: 301n,
  },
  {
    name: 'a committed rotation, kept ones after it, and the chain continues from the table offset',
    files: [...pair(0, 100, 1), ...pair(100, 200, 2), ...pair(200, 300, 3)],
    tableOffset: 100n,
    deleted: { [parquet(0, 100, 1)]: 'behind-table', [json(0, 100, 1)]: 'behind-table' },
    kept: [
      [100, 200],
      [200, 300],
    ],
    resumeFrom: 300n,
  },
  {
    name: 'the chain ends at a gap (an empty rotation left no file); what follows is deleted',
    files: [...pair(100, 200, 1), ...pair(250, 300, 2), ...pair(300, 400, 3)],
    tableOffset: 100n,
    deleted: {
      [parquet(250, 300, 2)]: 'gap',
      [json(250, 300, 2)]: 'gap',
      [parquet(300, 400, 3)]: 'gap',
      [json(300, 400, 3)]: 'gap',
    },
    kept: [[100, 200]],
    resumeFrom: 200n,
  },
  {
    name: 'a rotation starting inside the kept chain overlaps it and is deleted',
    files: [...pair(100, 200, 1), ...pair(150, 250, 2)],
    tableOffset: 100n,
    deleted: { [parquet(150, 250, 2)]: 'overlap', [json(150, 250, 2)]: 'overlap' },
    kept: [[100, 200]],
    resumeFrom: 200n,
  },
  {
    name: 'two rotations starting at the same offset are both deleted, and the chain stops there',
    files: [...pair(100, 200, 1), ...pair(100, 250, 2), ...pair(200, 300, 3)],
    tableOffset: 100n,
    deleted: {
      [parquet(100, 200, 1)]: 'ambiguous',
      [json(100, 200, 1)]: 'ambiguous',
      [parquet(100, 250, 2)]: 'ambiguous',
      [json(100, 250, 2)]: 'ambiguous',
      [parquet(200, 300, 3)]: 'gap',
      [json(200, 300, 3)]: 'gap',
    },
    resumeFrom: 100n,
  },
  {
    name: 'crash while dropping a rejected range (sidecars go first): the rest of the rotation goes',
    files: [parquet(100, 200, 1), ...pair(100, 200, 2)],
    tableOffset: 100n,
    deleted: {
      [parquet(100, 200, 1)]: 'orphan',
      [parquet(100, 200, 2)]: 'incomplete-rotation',
      [json(100, 200, 2)]: 'incomplete-rotation',
    },
    resumeFrom: 100n,
  },
  {
    name: 'an incomplete rotation inside the chain ends it',
    files: [...pair(100, 200, 1), ...pair(200, 300, 2), json(200, 300, 3), ...pair(300, 400, 4)],
    tableOffset: 100n,
    deleted: {
      [parquet(200, 300, 2)]: 'incomplete-rotation',
      [json(200, 300, 2)]: 'incomplete-rotation',
      [json(200, 300, 3)]: 'orphan',
      [parquet(300, 400, 4)]: 'gap',
      [json(300, 400, 4)]: 'gap',
    },
    kept: [[100, 200]],
    resumeFrom: 200n,
  },
  {
    name: 'crash while the sidecar records an upload: the staged rewrite is deleted, the segment kept',
    files: [...pair(100, 200, 1), `${json(100, 200, 1)}.tmp`],
    tableOffset: 100n,
    deleted: { [`${json(100, 200, 1)}.tmp`]: 'temporary' },
    kept: [[100, 200]],
    resumeFrom: 200n,
  },
  {
    name: 'a partition the table has never committed keeps nothing and leaves positioning to the caller',
    files: [...pair(0, 100, 1), active(2)],
    tableOffset: undefined,
    deleted: { [parquet(0, 100, 1)]: 'no-table-offset', [json(0, 100, 1)]: 'no-table-offset', [active(2)]: 'active' },
    resumeFrom: undefined,
  },
  {
    name: 'names the WAL does not make are left alone and reported',
    files: [
      'notes.txt',
      'ready_orders_3_100-200_not-a-uuid.parquet',
      `ready_${topic}_${partition}_0100-200_${uuid(1)}.parquet`,
      `ready_${topic}_${partition}_200-200_${uuid(1)}.parquet`,
      `ready_${topic}_${partition}_300-200_${uuid(1)}.json`,
      `active_${topic}_${partition}_${uuid(1)}.json`,
      `ready_${topic}_03_100-200_${uuid(1)}.json`,
    ],
    tableOffset: 100n,
    unknown: [
      'notes.txt',
      'ready_orders_3_100-200_not-a-uuid.parquet',
      `ready_${topic}_${partition}_0100-200_${uuid(1)}.parquet`,
      `ready_${topic}_${partition}_200-200_${uuid(1)}.parquet`,
      `ready_${topic}_${partition}_300-200_${uuid(1)}.json`,
      `active_${topic}_${partition}_${uuid(1)}.json`,
      `ready_${topic}_03_100-200_${uuid(1)}.json`,
    ],
    resumeFrom: 100n,
  },
  {
    name: 'files of another Kafka partition in the folder are left alone and reported',
    files: [
      ...pair(100, 200, 1),
      readyFileName(topic, 4, 100n, 200n, uuid(2), 'parquet'),
      activeFileName('other', partition, uuid(3)),
    ],
    tableOffset: 100n,
    unknown: [readyFileName(topic, 4, 100n, 200n, uuid(2), 'parquet'), activeFileName('other', partition, uuid(3))],
    kept: [[100, 200]],
    resumeFrom: 200n,
  },
  {
    name: 'offsets beyond 2^53 are compared exactly',
    files: [
      readyFileName(topic, partition, 9007199254740993n, 9007199254740995n, uuid(1), 'parquet'),
      readyFileName(topic, partition, 9007199254740993n, 9007199254740995n, uuid(1), 'json'),
    ],
    tableOffset: 9007199254740993n,
    kept: [[9007199254740993n, 9007199254740995n]],
    resumeFrom: 9007199254740995n,
  },
  {
    name: 'files read past a recorded log-start jump chain across it from the files before it',
    files: [...pair(100, 200, 1), marker(200, 300), ...pair(300, 400, 2), ...pair(400, 450, 3)],
    tableOffset: 100n,
    kept: [
      [100, 200],
      [300, 400],
      [400, 450],
    ],
    jump: [200, 300],
    resumeFrom: 450n,
  },
  {
    name: 'a jump from the table offset itself is crossed: nothing was kept before it',
    files: [marker(100, 300), ...pair(300, 400, 1)],
    tableOffset: 100n,
    kept: [[300, 400]],
    jump: [100, 300],
    resumeFrom: 400n,
  },
  {
    name: 'a recorded jump with nothing read past it is not crossed, and its marker goes',
    files: [...pair(100, 200, 1), marker(200, 300)],
    tableOffset: 100n,
    deleted: { [marker(200, 300)]: 'jump-not-crossed' },
    kept: [[100, 200]],
    resumeFrom: 200n,
  },
  {
    name: "files at the chain's end win over a marker from there: they are what was read",
    files: [...pair(100, 200, 1), marker(200, 300), ...pair(200, 250, 2), ...pair(300, 400, 3)],
    tableOffset: 100n,
    deleted: {
      [marker(200, 300)]: 'jump-not-crossed',
      [parquet(300, 400, 3)]: 'gap',
      [json(300, 400, 3)]: 'gap',
    },
    kept: [
      [100, 200],
      [200, 250],
    ],
    resumeFrom: 250n,
  },
  {
    name: 'a chain crosses one jump: a second marker past it is not crossed',
    files: [marker(100, 200), ...pair(200, 300, 1), marker(300, 400), ...pair(400, 500, 2)],
    tableOffset: 100n,
    deleted: {
      [marker(300, 400)]: 'jump-not-crossed',
      [parquet(400, 500, 2)]: 'gap',
      [json(400, 500, 2)]: 'gap',
    },
    kept: [[200, 300]],
    jump: [100, 200],
    resumeFrom: 300n,
  },
  {
    name: 'two markers from one offset with files past each: neither is trusted, and what lies past them goes',
    files: [...pair(100, 200, 1), marker(200, 300), marker(200, 350), ...pair(300, 400, 2), ...pair(350, 400, 3)],
    tableOffset: 100n,
    deleted: {
      [marker(200, 300)]: 'jump-not-crossed',
      [marker(200, 350)]: 'jump-not-crossed',
      [parquet(300, 400, 2)]: 'gap',
      [json(300, 400, 2)]: 'gap',
      [parquet(350, 400, 3)]: 'gap',
      [json(350, 400, 3)]: 'gap',
    },
    kept: [[100, 200]],
    resumeFrom: 200n,
  },
  {
    name: 'markers the table has passed go',
    files: [marker(20, 50), marker(60, 120), ...pair(120, 200, 1)],
    tableOffset: 120n,
    deleted: { [marker(20, 50)]: 'behind-table', [marker(60, 120)]: 'behind-table' },
    kept: [[120, 200]],
    resumeFrom: 200n,
  },
  {
    name: 'without a table offset, markers go with the files',
    files: [marker(100, 200), ...pair(200, 300, 1)],
    tableOffset: undefined,
    deleted: {
      [marker(100, 200)]: 'no-table-offset',
      [parquet(200, 300, 1)]: 'no-table-offset',
      [json(200, 300, 1)]: 'no-table-offset',
    },
    resumeFrom: undefined,
  },
  {
    name: "another partition's marker in the folder is left alone and reported",
    files: [jumpFileName(topic, 4, { from: 100n, to: 200n }), ...pair(200, 300, 1)],
    tableOffset: 100n,
    unknown: [jumpFileName(topic, 4, { from: 100n, to: 200n })],
    deleted: { [parquet(200, 300, 1)]: 'gap', [json(200, 300, 1)]: 'gap' },
    resumeFrom: 100n,
  },
]

describe('planRecovery', () => {
  for (const c of cases) {
    test(c.name, () => {
      const plan = planRecovery(c.files, c.tableOffset, { topic, partition })
      const deleted = Object.fromEntries(plan.deletions.map((deletion) => [deletion.file, deletion.reason]))
      assert.deepEqual(deleted, c.deleted ?? {})
      assert.deepEqual([...plan.unknown].sort(), [...(c.unknown ?? [])].sort())
      assert.equal(plan.resumeFrom, c.resumeFrom)
      const keptFiles = [
        ...plan.kept.flatMap((rotation) => rotation.files),
        ...(plan.jump ? [plan.jump.file] : []),
      ].sort()
      const expectedKept = c.files.filter((file) => !(file in deleted) && !(c.unknown ?? []).includes(file)).sort()
      assert.deepEqual(keptFiles, expectedKept)
      assert.deepEqual(
        plan.kept.map((rotation) => [rotation.start, rotation.end]),
        (c.kept ?? []).map(([start, end]) => [BigInt(start), BigInt(end)]),
      )
      const jump = c.jump && { from: BigInt(c.jump[0]), to: BigInt(c.jump[1]), file: marker(...c.jump) }
      assert.deepEqual(plan.jump, jump)
      // every file is accounted for exactly once
      assert.equal(plan.deletions.length + plan.unknown.length + keptFiles.length, c.files.length)
    })
  }

  test('a kept rotation lists its segment UUIDs and both files of each', () => {
    const plan = planRecovery([...pair(100, 200, 2), ...pair(100, 200, 1)], 100n)
    assert.deepEqual(plan.kept, [
      { start: 100n, end: 200n, uuids: [uuid(1), uuid(2)], files: [...pair(100, 200, 1), ...pair(100, 200, 2)] },
    ])
  })

  test('told not to cross jumps, the files past a recorded jump go as a gap, and its marker with them', () => {
    const files = [...pair(100, 200, 1), marker(200, 300), ...pair(300, 400, 2)]
    const plan = planRecovery(files, 100n, { topic, partition }, { crossJumps: false })
    assert.deepEqual(
      plan.kept.map((rotation) => [rotation.start, rotation.end]),
      [[100n, 200n]],
    )
    assert.equal(plan.jump, undefined)
    assert.equal(plan.resumeFrom, 200n)
    assert.deepEqual(Object.fromEntries(plan.deletions.map((deletion) => [deletion.file, deletion.reason])), {
      [parquet(300, 400, 2)]: 'gap',
      [json(300, 400, 2)]: 'gap',
      [marker(200, 300)]: 'jump-not-crossed',
    })
  })

  test('without a scope, files of any partition are planned by their own ranges', () => {
    const other = readyFileName(topic, 4, 100n, 200n, uuid(2), 'parquet')
    const plan = planRecovery([other], 100n)
    assert.deepEqual(plan.deletions, [{ file: other, reason: 'orphan' }])
  })
})
