import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { decodeProgress, floeSummaryKeys, offsetsKey } from './progress.ts'
import { checkRound } from './rotation-check.ts'
import { group, rotation, rotationReport, tableWith, topic, written } from './test-fixtures.ts'
import {
  maxUnresolved,
  rememberCommit,
  resolveCommits,
  type UnresolvedCommit,
  withoutLanded,
  withoutLandedRotations,
} from './unresolved-commits.ts'

const marker = (p0: number, p1: number) => `{"${topic}":{"0":${p0},"1":${p1}}}`
const floe = (commitId: string, p0: number, p1: number) => ({
  [floeSummaryKeys.commitId]: commitId,
  [offsetsKey(group)]: marker(p0, p1),
})

function unresolved(commitId: string, asserted: (string | null)[]): UnresolvedCommit {
  return {
    commitId,
    statuses: [written(0, 10n, 20n), written(1, 5n, 9n)],
    partial: false,
    asserted,
    since: 0,
  }
}

describe('rounds whose commit outcome was unknown', () => {
  test('a round found on main, under later snapshots, is committed: its ACK names what it committed', () => {
    const metadata = tableWith([
      { id: 1n, summary: floe('r0', 10, 5) },
      { id: 2n, summary: floe('late', 20, 9) },
      { id: 3n, summary: { 'other.job': 'compaction' } },
      { id: 4n, summary: floe('r2', 30, 9) },
    ])
    const { resolved, pending } = resolveCommits(metadata, group, [unresolved('late', ['1'])])
    assert.deepEqual(pending, [])
    const [landed] = resolved
    assert.equal(landed?.kind, 'landed')
    if (landed?.kind !== 'landed') return
    assert.equal(landed.snapshotId, 2n)
    assert.deepEqual(
      landed.ack.committed.map((c) => [c.partition, c.range.start, c.offset]),
      [
        [0, 10n, 20n],
        [1, 5n, 9n],
      ],
    )
    assert.deepEqual(landed.ack.rejected, [])
  })

  test('a round not on main stays open while main is the snapshot it asserted', () => {
    const metadata = tableWith([{ id: 1n, summary: floe('r0', 10, 5) }])
    const { resolved, pending } = resolveCommits(metadata, group, [unresolved('late', ['1'])])
    assert.deepEqual(resolved, [])
    assert.deepEqual(
      pending.map((c) => c.commitId),
      ['late'],
    )
  })

  test('a round that asserted an empty table stays open only while the table is empty', () => {
    const empty = tableWith([])
    assert.equal(resolveCommits(empty, group, [unresolved('late', [null])]).pending.length, 1)
    const moved = tableWith([{ id: 7n, summary: floe('r1', 10, 5) }])
    assert.equal(resolveCommits(moved, group, [unresolved('late', [null])]).resolved[0]?.kind, 'never')
  })

  test('a round can never land once main moved past every snapshot it asserted without it', () => {
    const metadata = tableWith([
      { id: 1n, summary: floe('r0', 10, 5) },
      { id: 2n, summary: floe('r1', 20, 9) },
    ])
    const { resolved, pending } = resolveCommits(metadata, group, [unresolved('late', ['1'])])
    assert.deepEqual(pending, [])
    assert.deepEqual(
      resolved.map((r) => r.kind),
      ['never'],
    )
  })

  test(`keeps at most ${maxUnresolved} rounds, dropping the oldest, and a round once`, () => {
    let commits: UnresolvedCommit[] = []
    for (let i = 0; i <= maxUnresolved; i++) commits = rememberCommit(commits, unresolved(`r${i}`, ['1']))
    commits = rememberCommit(commits, unresolved(`r${maxUnresolved}`, ['1']))
    assert.equal(commits.length, maxUnresolved)
    assert.equal(commits[0]?.commitId, 'r1')
  })

  test("a later round's statuses lose the ranges and files a round found landed committed", () => {
    const metadata = tableWith([
      { id: 1n, summary: floe('r0', 10, 5) },
      { id: 2n, summary: floe('late', 20, 9) },
    ])
    const late = unresolved('late', ['1'])
    const landed = resolveCommits(metadata, group, [late]).resolved.filter((r) => r.kind === 'landed')
    const p0 = written(0, 10n, 30n, { files: ['s3://bucket/0-10-20.parquet', 's3://bucket/0-20-30.parquet'] })
    // partition 1 read nothing more than the late round committed; partition 2 was not in it
    const p1 = written(1, 5n, 9n, { files: ['s3://bucket/1-5-9.parquet'] })
    const p2 = written(2, 0n, 4n)
    const [t0, t1, t2] = withoutLanded([p0, p1, p2], landed)
    assert.ok(t0?.kind === 'written' && t1?.kind === 'written')
    assert.deepEqual(t0.range, { start: 20n, end: 30n })
    assert.deepEqual(
      t0.files.map((f) => f.filePath),
      ['s3://bucket/0-20-30.parquet'],
    )
    assert.deepEqual(t1.range, { start: 9n, end: 9n })
    assert.deepEqual(t1.files, [])
    assert.equal(t2, p2)
  })

  test('a status that does not hold every file the landed round committed is left for the contiguity check', () => {
    const metadata = tableWith([
      { id: 1n, summary: floe('r0', 10, 5) },
      { id: 2n, summary: floe('late', 20, 9) },
    ])
    const landed = resolveCommits(metadata, group, [unresolved('late', ['1'])]).resolved.filter(
      (r) => r.kind === 'landed',
    )
    const other = written(0, 10n, 30n, { files: ['s3://bucket/0-other.parquet'] })
    assert.equal(withoutLanded([other], landed)[0], other)
  })
})

describe('rounds found landed, in the shared-segment layout', () => {
  test("a later round's statuses lose the rotations the landed round accepted, and their summaries start after them", () => {
    const earlier = rotationReport(1, 'w', [rotation('r1', [[0, 10n, 20n]])])
    const metadata = tableWith([
      { id: 1n, summary: floe('r0', 10, 5) },
      { id: 2n, summary: floe('late', 20, 5) },
    ])
    const late: UnresolvedCommit = { ...unresolved('late', ['1']), statuses: [], reports: [earlier], since: 0 }
    const landed = resolveCommits(metadata, group, [late]).resolved.filter((r) => r.kind === 'landed')
    assert.deepEqual(landed[0]?.ack.acceptedRotations, ['r1'])

    // The next round's status still holds r1 (its ACK had not arrived), then r2, with a jump after r1.
    const now = rotationReport(
      1,
      'w',
      [
        rotation('r1', [[0, 10n, 20n]]),
        rotation('r2', [
          [0, 30n, 35n],
          [1, 5n, 6n],
        ]),
      ],
      { jumps: { 0: { from: 20n, to: 30n } } },
    )
    const [less] = withoutLandedRotations([now], landed)
    assert.deepEqual(
      less?.rotations.map((r) => r.id),
      ['r2'],
    )
    assert.deepEqual(
      less?.statuses.find((s) => s.partition === 0),
      {
        kind: 'written',
        topic,
        partition: 0,
        range: { start: 30n, end: 35n },
        files: [],
        origin: 'table',
        logStartJump: { from: 20n, to: 30n },
      },
    )
    // And checked against the table the late round left, r2 lands across the jump.
    const check = checkRound(decodeProgress(marker(20, 5)), [], less ? [less] : [])
    assert.deepEqual(
      check.rotations.accepted.map((r) => r.id),
      ['r2'],
    )
    // A status whose oldest rotation is not the landed one is left for the check.
    const other = rotationReport(1, 'x', [rotation('x1', [[0, 10n, 20n]])])
    assert.deepEqual(withoutLandedRotations([other], landed), [other])
  })
})
