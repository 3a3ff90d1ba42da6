// The bodies of a round's commands and its ACK, built from and read into the domain: the
// coordinator writes START-COMMIT, END-COMMIT and ACK-COMMIT with these, and a participant reads
// what an ACK-COMMIT says about its partitions and rotations with partitionAcksOf.
import type { Progress } from '../shared/progress/index.ts'
import type { CommitAcked, EndCommit, StartCommit, TableOffset } from './messages.ts'

/** The parts of an ACK-COMMIT a participant acts on (the coordinator's round ACK has this shape). */
export interface PartitionAcks {
  /** The table now holds each of these partitions up to `offset`; `filePaths` are the files committed. */
  committed: ReadonlyArray<{ topic: string; partition: number; offset: bigint; filePaths: readonly string[] }>
  /**
   * Out of line: `tableOffset` undefined when the table never saw the partition. A routed
   * dataset's (`tableOffset` is the ledger's) names the tables ahead of it in `skipFloors`.
   */
  rejected: ReadonlyArray<{
    topic: string
    partition: number
    reason: string
    tableOffset: bigint | undefined
    skipFloors?: readonly TableOffset[]
  }>
}

/** Everything an ACK-COMMIT says: per partition, and the rotations accepted whole. */
export interface CommitAcks extends PartitionAcks {
  /** The ids of the rotations the commit accepted (shared-segment layout; none otherwise). */
  acceptedRotations: readonly string[]
}

/** START-COMMIT's body: the table's progress for every partition it knows. */
export function startCommitBody(progress: Progress, snapshotId: bigint | null): StartCommit {
  const tableOffsets = []
  for (const [topic, offsets] of progress) {
    for (const [partition, offset] of offsets) tableOffsets.push({ topic, partition, offset })
  }
  return { type: 'StartCommit', tableOffsets, snapshotId }
}

/** END-COMMIT's body: partitions 0 .. count-1 of each topic are expected to answer. */
export function endCommitBody(expected: ReadonlyMap<string, number>): EndCommit {
  return {
    type: 'EndCommit',
    expectedPartitions: [...expected].flatMap(([topic, count]) =>
      Array.from({ length: count }, (_, partition) => ({ topic, partition })),
    ),
  }
}

/** ACK-COMMIT's body; `snapshotId` undefined when the round committed nothing. */
export function commitAckedBody(ack: CommitAcks & { snapshotId: bigint | undefined }): CommitAcked {
  return {
    type: 'CommitAcked',
    snapshotId: ack.snapshotId ?? null,
    committedOffsets: ack.committed.map(({ topic, partition, offset }) => ({ topic, partition, offset })),
    committedFiles: ack.committed.map(({ topic, partition, filePaths }) => ({
      topic,
      partition,
      filePaths: [...filePaths],
    })),
    rejections: ack.rejected.map(({ topic, partition, reason, tableOffset, skipFloors }) => ({
      topic,
      partition,
      reason,
      ...(tableOffset === undefined ? {} : { tableOffset }),
      ...(skipFloors === undefined || skipFloors.length === 0 ? {} : { skipFloors: [...skipFloors] }),
    })),
    ...(ack.acceptedRotations.length === 0 ? {} : { acceptedRotations: [...ack.acceptedRotations] }),
  }
}

/**
 * What an ACK-COMMIT says, per partition and per rotation. A committed partition may have no files
 * (every record dead-lettered): its offset leads.
 */
export function partitionAcksOf(body: CommitAcked): CommitAcks {
  const files = new Map(body.committedFiles.map((f) => [`${f.partition}:${f.topic}`, f.filePaths]))
  return {
    committed: body.committedOffsets.map((o) => ({ ...o, filePaths: files.get(`${o.partition}:${o.topic}`) ?? [] })),
    rejected: body.rejections.map((r) => ({ ...r, tableOffset: r.tableOffset })),
    acceptedRotations: body.acceptedRotations ?? [],
  }
}
