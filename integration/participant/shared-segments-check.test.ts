// The participant's shared WAL, its WRITE-STATUS and its ACK handling against the coordinator's
// rotation check, with no server in between: real SharedLogs on a temporary folder, the status
// through the wire types and back, the check, the ACK the check implies, the participant's walk.
// It pins that the two sides, built apart, agree on the rows S1-S4 of the design: rotations that
// chain are accepted and deleted; of a zombie and the new owner claiming the same start exactly
// one lands and the loser drops its rotation whole; one stale range rejects its rotation whole
// and the other partition reads again from the table.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { checkRound, type RotationReport } from '../../coordinator/index.ts'
import { ackPlan, type ChainState, sharedStatus } from '../../participant/shared-status.ts'
import { SharedLog } from '../../participant/wal/index.ts'
import { daysAndCountries, eventSchema, events } from '../../participant/wal/test-support.ts'
import type { CommitAcks, Sender } from '../../protocol/index.ts'
import type { DataFile } from '../../shared/iceberg/index.ts'

const topic = 'orders'

async function logIn(t: { after(fn: () => Promise<void>): void }): Promise<SharedLog> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-shared-check-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return new SharedLog({ dir, topic, schema: eventSchema, spec: daysAndCountries })
}

function sender(workerId: string, generation: number): Sender {
  return { workerId, memberId: `${workerId}-member`, generation }
}

/** What the upload would return: the segment's data file at an object named by its UUID. */
function uploadedOf(log: SharedLog): Map<string, DataFile> {
  const files = new Map<string, DataFile>()
  for (const rotation of log.rotations) {
    for (const segment of rotation.segments) {
      files.set(segment.uuid, { ...segment.dataFile, filePath: `mem://data/${segment.uuid}.parquet` })
    }
  }
  return files
}

function chains(starts: Record<number, bigint>): ChainState[] {
  return Object.entries(starts).map(([partition, chainStart]) => ({
    topic,
    partition: Number(partition),
    chainStart,
    origin: 'table' as const,
  }))
}

function report(log: SharedLog, from: Sender, starts: Record<number, bigint>): RotationReport {
  const status = sharedStatus({ chains: chains(starts), rotations: log.rotations, uploaded: uploadedOf(log) })
  return { sender: from, statuses: status.statuses, rotations: status.rotations }
}

const table = (offsets: Record<number, bigint>) =>
  new Map([[topic, new Map(Object.entries(offsets).map(([p, o]) => [Number(p), o]))]])

/** The ACK the check implies, as the coordinator sends it. */
function acksOf(check: ReturnType<typeof checkRound>): CommitAcks {
  return {
    committed: check.accepted.map(({ topic, partition, range, files }) => ({
      topic,
      partition,
      offset: range.end,
      filePaths: files.map((file) => file.filePath),
    })),
    rejected: check.rejected.map(({ topic, partition, reason, tableOffset }) => ({
      topic,
      partition,
      reason,
      tableOffset,
    })),
    acceptedRotations: check.rotations.accepted.map((rotation) => rotation.id),
  }
}

async function applyAck(log: SharedLog, acks: CommitAcks, starts: Record<number, bigint>, reported: RotationReport) {
  const plan = ackPlan(acks, chains(starts), reported.rotations)
  await log.deleteRotations(plan.accepted)
  return log.walk({
    from: plan.from,
    assigned: Object.keys(starts).map(Number),
    rejected: plan.rejected,
    reason: 'resync',
  })
}

describe('shared segments: the participant and the coordinator agree', () => {
  test('rotations that chain from the table are accepted whole, committed, and deleted by the ACK', async (t) => {
    const log = await logIn(t)
    log.read(0, 10n)
    log.read(1, 50n)
    await log.append(0, events(0, 10), 20n)
    await log.append(1, events(10, 10), 60n)
    await log.cut('commit')
    await log.append(1, [], 65n) // dead-lettered only: a rotation without files
    await log.cut('commit')
    const reported = report(log, sender('w1', 3), { 0: 10n, 1: 50n })
    const check = checkRound(table({ 0: 10n, 1: 50n }), [], [reported])
    assert.equal(check.rotations.accepted.length, 2)
    assert.deepEqual(check.accepted.map((a) => [a.partition, a.range.end]).sort(), [
      [0, 20n],
      [1, 65n],
    ])
    assert.equal(
      check.rotations.accepted.reduce((files, r) => files + r.files.length, 0),
      log.rotations.reduce((files, r) => files + r.segments.length, 0),
      'every file of every accepted rotation is committed, once',
    )
    const walked = await applyAck(log, acksOf(check), { 0: 10n, 1: 50n }, reported)
    assert.equal(log.rotations.length, 0)
    assert.deepEqual(walked.rewound, [])
    assert.deepEqual(
      log.positions,
      new Map([
        [0, 20n],
        [1, 65n],
      ]),
    )
  })

  test('a zombie and the new owner claim the same start: exactly one lands, the loser drops its rotation whole', async (t) => {
    const zombie = await logIn(t)
    const owner = await logIn(t)
    zombie.read(0, 10n)
    zombie.read(1, 50n)
    await zombie.append(0, events(0, 5), 15n)
    await zombie.append(1, events(5, 5), 55n)
    await zombie.cut('commit')
    owner.read(0, 10n)
    await owner.append(0, events(0, 8), 18n)
    await owner.cut('commit')
    const zombieReport = report(zombie, sender('old', 3), { 0: 10n, 1: 50n })
    const ownerReport = report(owner, sender('new', 4), { 0: 10n })
    const check = checkRound(table({ 0: 10n, 1: 50n }), [], [zombieReport, ownerReport])
    const accepted = check.rotations.accepted.map((r) => r.sender.workerId)
    assert.deepEqual(accepted, ['new'], 'the newer generation wins the duel')
    assert.deepEqual(
      check.accepted.map((a) => [a.partition, a.range.end]),
      [[0, 18n]],
    )
    const acks = acksOf(check)
    await applyAck(owner, acks, { 0: 10n }, ownerReport)
    assert.equal(owner.rotations.length, 0)
    // the zombie's rotation held partition 0 from 10, which the table now has to 18: dropped whole
    const walked = await applyAck(zombie, acks, { 0: 10n, 1: 50n }, zombieReport)
    assert.equal(zombie.rotations.length, 0)
    assert.deepEqual(walked.rewound.sort(), [0, 1])
    assert.deepEqual(
      zombie.positions,
      new Map([
        [0, 18n],
        [1, 50n],
      ]),
    )
  })

  test('one stale range rejects its rotation whole at the coordinator, and the participant re-reads the other partition', async (t) => {
    const log = await logIn(t)
    log.read(0, 10n)
    log.read(1, 50n)
    await log.append(0, events(0, 10), 20n)
    await log.append(1, events(10, 10), 60n)
    await log.cut('commit')
    const reported = report(log, sender('w1', 3), { 0: 10n, 1: 50n })
    // partition 0 was committed elsewhere to 15 meanwhile
    const check = checkRound(table({ 0: 15n, 1: 50n }), [], [reported])
    assert.equal(check.rotations.accepted.length, 0, 'no file of the rotation is committed')
    assert.equal(check.rotations.rejected.length, 1)
    const walked = await applyAck(log, acksOf(check), { 0: 10n, 1: 50n }, reported)
    assert.equal(log.rotations.length, 0)
    assert.deepEqual(walked.rewound.sort(), [0, 1])
    assert.deepEqual(
      walked.next,
      new Map([
        [0, 15n],
        [1, 50n],
      ]),
    )
  })
})
