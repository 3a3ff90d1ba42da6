import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../shared/index.ts'
import type { Progress } from '../shared/progress/index.ts'
import { planCommit, roundAck } from './commit-content.ts'
import { decodeProgress, encodeProgress, offsetsKey } from './progress.ts'
import type { RotationReport } from './rotation-check.ts'
import { empty, failed, group, rotation, rotationReport, tableWith, topic, written } from './test-fixtures.ts'

const key = offsetsKey(group)
const events = (offsets: Record<number, bigint>): Progress =>
  new Map([[topic, new Map(Object.entries(offsets).map(([p, o]) => [Number(p), o]))]])
const tableAt = (offsets: Record<number, bigint>, other: Record<string, string> = {}) =>
  tableWith([{ id: 1n, summary: { [key]: encodeProgress(events(offsets)), ...other } }, { id: 2n }])

describe('planCommit', () => {
  const metadata = tableAt({ 0: 100n, 1: 200n, 5: 7n })
  const statuses = [
    written(0, 100n, 150n, { files: ['s3://b/0-a.parquet', 's3://b/0-b.parquet'] }),
    written(1, 150n, 180n),
    written(2, 0n, 30n, { origin: 'offset-reset', files: ['s3://b/2.parquet'] }),
    empty(3),
    failed(4),
  ]

  test('commits the accepted files in partition order with the cumulative marker in summary and properties', () => {
    const plan = planCommit(metadata, { group, commitId: 'c-9', statuses, partial: false })
    assert.deepEqual(
      plan.content.files.map((f) => f.filePath),
      ['s3://b/0-a.parquet', 's3://b/0-b.parquet', 's3://b/2.parquet'],
    )
    const marker = '{"events":{"0":150,"1":200,"2":30,"5":7}}'
    assert.deepEqual(plan.content.summary, {
      'floe.commit-id': 'c-9',
      [key]: marker,
      'floe.round.partitions': '2',
      'floe.round.rejected': '1',
    })
    assert.deepEqual(plan.content.properties, { [key]: marker })
    assert.deepEqual(plan.offsets, decodeProgress(marker))
    assert.deepEqual(plan.previous.source, { kind: 'snapshot', snapshotId: 1n })
    assert.deepEqual(
      plan.check.rejected.map((r) => [r.partition, r.reason]),
      [[1, 'behind-table']],
    )
  })

  test('marks a partial round and the records a round lost', () => {
    const plan = planCommit(metadata, {
      group,
      commitId: 'c-9',
      statuses: [written(0, 400n, 450n, { jump: { from: 100n, to: 400n } })],
      partial: true,
    })
    assert.equal(plan.content.summary?.['floe.round.partial'], 'true')
    assert.equal(plan.content.summary?.[`floe.lost-records.${group}`], '{"events":{"0":300}}')
    assert.equal(plan.content.summary?.['floe.round.rejected'], undefined)
  })

  test('commits nothing when nothing is accepted, and keeps the marker as it was', () => {
    const plan = planCommit(metadata, { group, commitId: 'c-9', statuses: [written(0, 50n, 60n)], partial: false })
    assert.deepEqual(plan.check.accepted, [])
    assert.deepEqual(plan.content.files, [])
    assert.deepEqual(plan.offsets, events({ 0: 100n, 1: 200n, 5: 7n }))
  })

  test('refuses a round that lists one data file twice', () => {
    assert.throws(
      () =>
        planCommit(metadata, {
          group,
          commitId: 'c-9',
          statuses: [
            written(0, 100n, 110n, { files: ['s3://b/x.parquet'] }),
            written(1, 200n, 210n, { files: ['s3://b/x.parquet'] }),
          ],
          partial: false,
        }),
      (error) => isFloeError(error, 'INVARIANT_BROKEN'),
    )
  })

  test('asked again after its commit landed, describes the same commit', () => {
    const first = planCommit(metadata, { group, commitId: 'c-9', statuses, partial: false })
    const landed = tableWith([
      { id: 1n, summary: { [key]: encodeProgress(events({ 0: 100n, 1: 200n, 5: 7n })) } },
      { id: 2n },
      { id: 3n, summary: { ...first.content.summary } },
      { id: 4n, summary: { 'spark.app.id': 'compaction' } },
    ])
    const again = planCommit(landed, { group, commitId: 'c-9', statuses, partial: false })
    assert.equal(again.previous.landed, true)
    assert.deepEqual(again.check, first.check)
    assert.deepEqual(again.content, first.content)
  })
})

describe('roundAck', () => {
  test('names the committed partitions with their new offsets and files, and the rejected ones', () => {
    const plan = planCommit(tableAt({ 0: 100n, 1: 200n }), {
      group,
      commitId: 'c-3',
      statuses: [written(0, 100n, 120n, { files: ['s3://b/0.parquet'] }), written(1, 100n, 120n), failed(2)],
      partial: false,
    })
    assert.deepEqual(roundAck('c-3', 42n, plan.check), {
      commitId: 'c-3',
      snapshotId: 42n,
      committed: [
        { topic, partition: 0, range: { start: 100n, end: 120n }, offset: 120n, filePaths: ['s3://b/0.parquet'] },
      ],
      rejected: [{ topic, partition: 1, reason: 'behind-table', tableOffset: 200n, range: { start: 100n, end: 120n } }],
      lost: [],
      acceptedRotations: [],
    })
  })

  test('of a round without a snapshot names only rejections', () => {
    const plan = planCommit(tableAt({ 0: 100n }), {
      group,
      commitId: 'c-4',
      statuses: [written(0, 90n, 120n)],
      partial: false,
    })
    const ack = roundAck('c-4', undefined, plan.check)
    assert.deepEqual(ack.committed, [])
    assert.equal(ack.rejected.length, 1)
    assert.deepEqual(roundAck('c-5', undefined), {
      commitId: 'c-5',
      snapshotId: undefined,
      committed: [],
      rejected: [],
      lost: [],
      acceptedRotations: [],
    })
  })
})

describe('planCommit and roundAck with shared-segment rotations', () => {
  const metadata = tableAt({ 0: 100n, 1: 200n, 2: 300n })
  const reports = [
    rotationReport(2, 'wa', [
      rotation(
        'r1',
        [
          [0, 100n, 110n],
          [1, 200n, 205n],
        ],
        ['s3://b/r1-a.parquet', 's3://b/r1-b.parquet'],
      ),
      rotation('r2', [[0, 110n, 120n]], []),
      // Partition 2's range is stale: the rotation goes whole, with its file.
      rotation(
        'r3',
        [
          [1, 205n, 210n],
          [2, 290n, 300n],
        ],
        ['s3://b/r3.parquet'],
      ),
    ]),
  ]

  test('commits the union of the accepted rotations files, and the marker each partition reached', () => {
    const plan = planCommit(metadata, { group, commitId: 'c-7', statuses: [], reports, partial: false })
    assert.deepEqual(
      plan.content.files.map((f) => f.filePath),
      ['s3://b/r1-a.parquet', 's3://b/r1-b.parquet'],
    )
    assert.deepEqual(plan.offsets, events({ 0: 120n, 1: 205n, 2: 300n }))
    assert.deepEqual(plan.content.summary?.['floe.round.partitions'], '2')
    const ack = roundAck('c-7', 9n, plan.check)
    assert.deepEqual(ack.acceptedRotations, ['r1', 'r2'])
    assert.deepEqual(
      ack.committed.map((c) => [c.partition, c.offset, c.filePaths]),
      [
        [0, 120n, []],
        [1, 205n, []],
      ],
    )
    assert.deepEqual(
      ack.rejected.map((r) => [r.partition, r.reason, r.tableOffset]),
      [[2, 'behind-table', 300n]],
    )
    assert.deepEqual(roundAck('c-7', undefined, plan.check).acceptedRotations, [])
  })

  test('asked again after its commit landed on a table with no older marker, describes the same commit', () => {
    const fresh = tableWith([{ id: 1n, summary: { [key]: encodeProgress(events({ 0: 100n, 1: 200n, 2: 300n })) } }])
    const inLine = [
      { ...(reports[0] as RotationReport), rotations: (reports[0] as RotationReport).rotations.slice(0, 2) },
    ]
    const first = planCommit(fresh, { group, commitId: 'c-7', statuses: [], reports: inLine, partial: false })
    // The landed snapshot is the only one that carries a marker (expiry took the older ones).
    const landed = tableWith([{ id: 5n, summary: { ...first.content.summary } }])
    const again = planCommit(landed, { group, commitId: 'c-7', statuses: [], reports: inLine, partial: false })
    assert.equal(again.previous.landed, true)
    assert.deepEqual(again.check, first.check)
  })

  test('a landed round that took kept files and the jump after them is described again the same', () => {
    const fresh = tableWith([{ id: 1n, summary: { [key]: encodeProgress(events({ 0: 100n, 1: 200n })) } }])
    const kept = [
      rotationReport(2, 'wa', [rotation('r1', [[0, 100n, 110n]], ['s3://b/r1.parquet'])], {
        summaries: [written(0, 100n, 150n, { files: [], jump: { from: 110n, to: 150n } })],
      }),
    ]
    const first = planCommit(fresh, { group, commitId: 'c-9', statuses: [], reports: kept, partial: false })
    assert.deepEqual(first.offsets, events({ 0: 150n, 1: 200n }))
    assert.deepEqual(
      first.check.lost.map((l) => [l.partition, l.from, l.to]),
      [[0, 110n, 150n]],
    )
    const landed = tableWith([{ id: 5n, summary: { ...first.content.summary } }])
    const again = planCommit(landed, { group, commitId: 'c-9', statuses: [], reports: kept, partial: false })
    assert.equal(again.previous.landed, true)
    assert.deepEqual(again.check, first.check)
    assert.deepEqual(roundAck('c-9', 5n, again.check).acceptedRotations, ['r1'])
  })

  test('a landed round whose table before cannot be rebuilt names no rotation accepted, only the table offsets', () => {
    const fresh = tableWith([{ id: 1n, summary: { [key]: encodeProgress(events({ 0: 100n, 1: 200n, 2: 300n })) } }])
    const first = planCommit(fresh, { group, commitId: 'c-7', statuses: [], reports, partial: false })
    const landed = tableWith([{ id: 5n, summary: { ...first.content.summary } }])
    // Partition 2's stale range ends at the marker: it looks committed by this round, and r3 with it.
    const again = planCommit(landed, { group, commitId: 'c-7', statuses: [], reports, partial: false })
    const ack = roundAck('c-7', 5n, again.check)
    assert.deepEqual(ack.acceptedRotations, [])
    assert.deepEqual(ack.committed, [])
    assert.deepEqual(
      ack.rejected.map((r) => [r.partition, r.tableOffset]),
      [
        [0, 120n],
        [1, 205n],
        [2, 300n],
      ],
    )
  })
})
