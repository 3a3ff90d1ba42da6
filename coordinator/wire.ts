// The coordinator's domain types to and from protocol/'s control messages. Pure: the runner
// resolves a WriteStatus's spilled file list (protocol's resolveFiles) and knows each spec's
// partition type (protocol's toDataFile) before it calls writeStatusReport.
import type {
  CommitAcked,
  ControlMessage,
  DataFileEntry,
  EndCommit,
  PartitionStatus,
  StartCommit,
  WriteStatus,
} from '../protocol/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'
import type { RoundAck } from './commit-content.ts'
import type { PartitionWriteStatus, Progress, WriteStatusReport } from './types.ts'

function statusFromWire(status: PartitionStatus, toDataFile: (entry: DataFileEntry) => DataFile): PartitionWriteStatus {
  const { topic, partition } = status
  if (status.kind === 'error') return { kind: 'error', topic, partition, message: status.error ?? '' }
  if (status.kind === 'empty') return { kind: 'empty', topic, partition }
  const jump = status.logStartJump
  return {
    kind: 'written',
    topic,
    partition,
    range: { start: status.rangeStart, end: status.rangeEnd },
    files: status.files.map(toDataFile),
    origin: status.origin ?? 'table',
    ...(status.oldestTimestampMs === undefined ? {} : { oldestTimestampMs: status.oldestTimestampMs }),
    ...(jump ? { logStartJump: { from: jump.from, to: jump.to } } : {}),
  }
}

/** A decoded WRITE-STATUS (files in place) as the round tracker records it. */
export function writeStatusReport(
  message: ControlMessage<WriteStatus>,
  toDataFile: (entry: DataFileEntry) => DataFile,
): WriteStatusReport {
  return {
    commitId: message.commitId,
    sender: { ...message.sender },
    statuses: message.body.partitions.map((status) => statusFromWire(status, toDataFile)),
  }
}

/** START-COMMIT's body: the table's progress for every partition it knows. */
export function startCommitBody(progress: Progress, snapshotId: bigint | null): StartCommit {
  const tableOffsets = []
  for (const [topic, offsets] of progress) {
    for (const [partition, offset] of offsets) tableOffsets.push({ topic, partition, offset })
  }
  return { type: 'StartCommit', tableOffsets, snapshotId }
}

/** END-COMMIT's body: every partition of the topic is expected to answer. */
export function endCommitBody(topic: string, partitionCount: number): EndCommit {
  return {
    type: 'EndCommit',
    expectedPartitions: Array.from({ length: partitionCount }, (_, partition) => ({ topic, partition })),
  }
}

/** ACK-COMMIT's body. */
export function commitAckedBody(ack: RoundAck): CommitAcked {
  return {
    type: 'CommitAcked',
    snapshotId: ack.snapshotId ?? null,
    committedOffsets: ack.committed.map(({ topic, partition, offset }) => ({ topic, partition, offset })),
    committedFiles: ack.committed.map(({ topic, partition, filePaths }) => ({ topic, partition, filePaths })),
    rejections: ack.rejected.map(({ topic, partition, reason, tableOffset }) => ({
      topic,
      partition,
      reason,
      ...(tableOffset === undefined ? {} : { tableOffset }),
    })),
  }
}
