// The coordinator's side of shared segments on the real stack: fabricated WRITE-STATUS messages of
// the shared-segment layout (rotations whose real data files each hold rows of several Kafka
// partitions) go over the real control topic to a real DatasetCoordinator, which commits through
// the REST catalog. pyiceberg then reads the table: exactly the accepted rotations' rows, once.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { RoundResult } from '../../coordinator/index.ts'
import {
  type ControlMessage,
  type PartitionStatus,
  type Rotation,
  type Sender,
  toDataFileEntry,
  type WriteStatus,
} from '../../protocol/index.ts'
import { currentSchema, defaultSpec } from '../../shared/iceberg/metadata/index.ts'
import { partitionType } from '../../shared/iceberg/partitioning/index.ts'
import { writeDataFiles } from '../iceberg/table-writer.ts'
import { type CoordinatorFixture, coordinatorFixture } from './fixture.ts'
import { idOf } from './support.ts'

type Claim = [partition: number, start: number, end: number]

interface SenderStatus {
  sender: Sender
  /** Oldest first; each rotation's files hold the rows of every range it claims. */
  rotations: Array<{ id: string; claims: Claim[] }>
  origin?: 'table' | 'offset-reset'
  /** Partitions it owns without a range: their summaries say `empty`. */
  idle?: number[]
}

/** The rotation's rows, of every partition it claims, written as shared data files. */
async function rotationOf(f: CoordinatorFixture, sequence: number, id: string, claims: Claim[]): Promise<Rotation> {
  const { metadata } = await f.catalog.loadTable(f.table)
  const rows = claims.flatMap(([partition, start, end]) =>
    Array.from({ length: end - start }, (_, k) => ({
      id: idOf(partition, start + k),
      kind: (start + k) % 2 === 0 ? 'even' : 'odd',
      position: BigInt(start + k),
    })),
  )
  const type = partitionType(defaultSpec(metadata), currentSchema(metadata))
  const files = await writeDataFiles(f.storage, metadata, rows)
  return {
    id,
    sequence: BigInt(sequence),
    ranges: claims.map(([partition, start, end]) => ({
      topic: f.topic,
      partition,
      start: BigInt(start),
      end: BigInt(end),
    })),
    files: files.map((file) => toDataFileEntry(file, type)),
  }
}

/** The status body: rotations, and the chain summary of every partition it claims or holds idle. */
async function statusBody(f: CoordinatorFixture, status: SenderStatus): Promise<WriteStatus> {
  const rotations = await Promise.all(status.rotations.map((r, i) => rotationOf(f, i + 1, r.id, r.claims)))
  const claimed = new Set(status.rotations.flatMap((r) => r.claims.map(([p]) => p)))
  const partitions: PartitionStatus[] = [0, 1, 2].flatMap((partition): PartitionStatus[] => {
    if (status.idle?.includes(partition)) return [f.empty(partition, 0)]
    const claims = status.rotations.flatMap((r) => r.claims).filter(([p]) => p === partition)
    const first = claims[0]
    const last = claims.at(-1)
    if (!claimed.has(partition) || !first || !last) return []
    return [
      {
        topic: f.topic,
        partition,
        kind: 'data',
        rangeStart: BigInt(first[1]),
        rangeEnd: BigInt(last[2]),
        files: [],
        origin: status.origin ?? 'table',
      },
    ]
  })
  return { type: 'WriteStatus', partitions, rotations }
}

/**
 * Runs one round in which each worker of the fixture's participants answers with the given
 * shared-segment status instead of its scripted one.
 */
async function roundWith(f: CoordinatorFixture, statuses: Record<string, SenderStatus>): Promise<RoundResult> {
  const bodies = new Map<string, WriteStatus>()
  for (const [worker, status] of Object.entries(statuses)) bodies.set(worker, await statusBody(f, status))
  // One answer per worker, so that each sends one message; the rewrite replaces its body.
  f.participants.answers = [f.empty(0, 0), f.empty(2, 0)]
  f.participants.rewrite = async (message: ControlMessage<WriteStatus>) => {
    const status = statuses[message.sender.workerId]
    const body = bodies.get(message.sender.workerId)
    if (!status || !body) return { ...message, body: { type: 'WriteStatus', partitions: [] } }
    return { ...message, sender: status.sender, body }
  }
  try {
    return await f.a.coordinator.requestRound('test')
  } finally {
    f.participants.rewrite = undefined
  }
}

const offsetsOf = (offsets: Array<{ partition: number; offset: bigint }>) =>
  Object.fromEntries(offsets.map(({ partition, offset }) => [partition, offset]))

const member = (workerId: string, generation: number): Sender => ({
  workerId,
  memberId: `${workerId}-member`,
  generation,
})

describe('the coordinator with shared-segment rotations on the local stack', () => {
  test('commits whole rotations only: a stale range rejects its rotation, a duel for one start has one winner', {
    timeout: 120_000,
  }, async (t) => {
    const f = await coordinatorFixture(t)
    const a = 'participant-a'
    const b = 'participant-b'

    // Round 1: a first commit of all three partitions in two rotations of one worker.
    const first = await roundWith(f, {
      [a]: {
        sender: member(a, 1),
        origin: 'offset-reset',
        rotations: [
          {
            id: 'r1',
            claims: [
              [0, 0, 5],
              [1, 0, 3],
            ],
          },
          {
            id: 'r2',
            claims: [
              [0, 5, 8],
              [2, 0, 4],
            ],
          },
        ],
      },
    })
    assert.equal(first.kind, 'committed')
    const firstAck = await f.participants.ack(first.commitId ?? '')
    assert.deepEqual(firstAck.acceptedRotations, ['r1', 'r2'])
    assert.deepEqual(offsetsOf(firstAck.committedOffsets), { 0: 8n, 1: 3n, 2: 4n })
    assert.deepEqual(firstAck.rejections, [])
    f.land(0, 0, 8)
    f.land(1, 0, 3)
    f.land(2, 0, 4)

    // Round 2: r3's range of partition 1 is stale (the table holds [0, 3) already): r3 goes whole,
    // partition 0's range in it included; r4, holding neither, lands.
    const stale = await roundWith(f, {
      [a]: {
        sender: member(a, 1),
        rotations: [
          {
            id: 'r3',
            claims: [
              [0, 8, 10],
              [1, 1, 3],
            ],
          },
          { id: 'r4', claims: [[2, 4, 6]] },
        ],
      },
    })
    assert.equal(stale.kind, 'committed')
    const staleAck = await f.participants.ack(stale.commitId ?? '')
    assert.deepEqual(staleAck.acceptedRotations, ['r4'])
    assert.deepEqual(offsetsOf(staleAck.committedOffsets), { 2: 6n })
    assert.deepEqual(
      staleAck.rejections.map((r) => [r.partition, r.reason, r.tableOffset]),
      [
        [0, 'rotation-rejected', 8n],
        [1, 'behind-table', 3n],
      ],
    )
    f.land(2, 4, 6)

    // Round 3: a zombie (generation 2) and the new owner (generation 3) both claim partition 0
    // from the table's offset 8; the newer generation wins, the zombie's rotation is rejected whole.
    // (The zombie answers first; the round waits for the owner, which answers every partition.)
    const duel = await roundWith(f, {
      [a]: { sender: member(a, 2), rotations: [{ id: 'z1', claims: [[0, 8, 12]] }] },
      [b]: {
        sender: member(b, 3),
        idle: [2],
        rotations: [
          {
            id: 'o1',
            claims: [
              [0, 8, 10],
              [1, 3, 5],
            ],
          },
        ],
      },
    })
    assert.equal(duel.kind, 'committed')
    const duelAck = await f.participants.ack(duel.commitId ?? '')
    assert.deepEqual(duelAck.acceptedRotations, ['o1'])
    assert.deepEqual(offsetsOf(duelAck.committedOffsets), { 0: 10n, 1: 5n })
    assert.deepEqual(duelAck.rejections, [])
    f.land(0, 8, 10)
    f.land(1, 3, 5)

    const report = await f.verify()
    assert.equal(report.error, undefined)
    const count = f.landed.length
    const { expected, found, missing, duplicated, unexpected } = report.ids ?? {}
    assert.deepEqual(
      { rows: report.rows, expected, found, missing, duplicated, unexpected },
      { rows: count, expected: count, found: count, missing: 0, duplicated: 0, unexpected: 0 },
    )
    const marker = report.snapshots.at(-1)?.summary[`floe.offsets.${f.group}`]
    assert.equal(marker, `{"${f.topic}":{"0":10,"1":5,"2":6}}`)
  })
})
