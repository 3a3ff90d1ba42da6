// protocol/'s control messages as participant machine events, and a status for the wire. Pure:
// the runner routes messages of its datasets and groups here, and converts DataFiles with
// protocol's toDataFileEntry (it knows the spec's partition type).
import type { ControlMessage, DataFileEntry, PartitionStatus } from '../../protocol/index.ts'
import type { DataFile } from '../../shared/iceberg/index.ts'
import { partitionOutcome } from './line.ts'
import type { ParticipantEvent, PartitionWriteStatus } from './types.ts'

/** A status for WriteStatus.partitions; the chain's origin travels with it (PartitionStatus.origin). */
export function partitionStatusToWire(
  status: PartitionWriteStatus,
  toEntry: (file: DataFile) => DataFileEntry,
): PartitionStatus {
  const { topic, partition } = status
  if (status.kind === 'error') {
    return { topic, partition, kind: 'error', rangeStart: 0n, rangeEnd: 0n, files: [], error: status.message }
  }
  if (status.kind === 'empty') return { topic, partition, kind: 'empty', rangeStart: 0n, rangeEnd: 0n, files: [] }
  const jump = status.logStartJump
  return {
    topic,
    partition,
    kind: 'data',
    rangeStart: status.range.start,
    rangeEnd: status.range.end,
    files: status.files.map(toEntry),
    origin: status.origin,
    ...(jump ? { logStartJump: { from: jump.from, to: jump.to, lost: jump.to - jump.from } } : {}),
    ...(status.oldestTimestampMs === undefined ? {} : { oldestTimestampMs: status.oldestTimestampMs }),
  }
}

/**
 * The event for one partition's machine, or undefined for a message it does not act on. A
 * rejection's negative table offset means the table never saw the partition.
 */
export function participantEventOf(
  message: ControlMessage,
  topic: string,
  partition: number,
): ParticipantEvent | undefined {
  const body = message.body
  switch (body.type) {
    case 'StartCommit':
      return {
        type: 'control.start-commit',
        commitId: message.commitId,
        tableOffset: body.tableOffsets.find((o) => o.topic === topic && o.partition === partition)?.offset,
      }
    case 'EndCommit':
      // Answered even when not in expectedPartitions: a partition added to the topic after the
      // coordinator counted is committed too, just not waited for.
      return { type: 'control.end-commit', commitId: message.commitId }
    case 'CommitAcked': {
      // A committed partition may have no files (every record dead-lettered): offsets lead.
      const files = new Map(body.committedFiles.map((f) => [`${f.partition}:${f.topic}`, f.filePaths]))
      const outcome = partitionOutcome(
        {
          committed: body.committedOffsets.map((o) => ({
            ...o,
            filePaths: files.get(`${o.partition}:${o.topic}`) ?? [],
          })),
          rejected: body.rejections.map((r) => ({ ...r, tableOffset: r.tableOffset })),
        },
        topic,
        partition,
      )
      return { type: 'control.commit-acked', commitId: message.commitId, outcome }
    }
    default:
      return undefined
  }
}
