// One partition's answer to END-COMMIT as both sides hold it (the domain type), and its conversion
// to and from the WriteStatus message: the participant builds a PartitionWriteStatus and sends it
// with toPartitionStatus, the coordinator reads it back with writeStatusReport. One definition, so
// the status a participant builds is the one the coordinator checks.
import type { DataFile } from '../shared/iceberg/index.ts'
import type { DataFileEntry } from './data-file.ts'
import type { ControlMessage, PartitionStatus, RangeOrigin, Rotation, Sender, WriteStatus } from './messages.ts'

/** Kafka offsets `[start, end)`: end is the offset of the last record read plus one. */
export interface OffsetRange {
  start: bigint
  end: bigint
}

/**
 * Retention deleted records the table never got: the broker's log start `to` was past the table's
 * next offset `from` when the participant positioned itself (invariant 3's one allowed gap).
 */
export interface LogStartJump {
  from: bigint
  to: bigint
}

/**
 * One partition's answer to END-COMMIT. `written` covers every uncommitted file of the partition
 * as one contiguous range, from the chain's start to the cut (it may hold no files when every
 * record was dead-lettered, and the range still advances); `empty`: nothing read since the
 * table's offset; `error`: the participant could not report (its files stay for the next round).
 */
export type PartitionWriteStatus =
  | {
      kind: 'written'
      topic: string
      partition: number
      range: OffsetRange
      files: readonly DataFile[]
      origin: RangeOrigin
      logStartJump?: LogStartJump
      /** Kafka timestamp (ms) of the range's oldest record, when known: commit visibility starts there. */
      oldestTimestampMs?: number
    }
  | { kind: 'empty'; topic: string; partition: number }
  | { kind: 'error'; topic: string; partition: number; message: string }

/** One partition's positions in a rotation. */
export interface RotationRange {
  topic: string
  partition: number
  range: OffsetRange
}

/**
 * One cut of a worker's shared segments (docs/architecture.md, "Shared segments"): its files
 * together hold every row of the ranges it claims, one file rows of many partitions, so it is
 * committed whole or not at all. `files` may be empty (every record dead-lettered).
 */
export interface RotationStatus {
  id: string
  /** Its order in the sender's dataset WAL. */
  sequence: bigint
  ranges: readonly RotationRange[]
  files: readonly DataFile[]
}

/**
 * A WRITE-STATUS message: one sender's answers for one commit id. With `rotations` (the
 * shared-segment layout, oldest first) the statuses are the partitions' chain summaries and hold
 * no files; without, it is the per-partition layout.
 */
export interface WriteStatusReport {
  commitId: string
  sender: Sender
  statuses: readonly PartitionWriteStatus[]
  rotations?: readonly RotationStatus[]
  /** The topic it answers for, when its sender's dataset reads several (WriteStatus.topic). */
  topic?: string
}

/**
 * A status for WriteStatus.partitions; the chain's origin travels with it. `toEntry` converts a
 * data file (protocol's toDataFileEntry: the caller knows the spec's partition type).
 */
export function toPartitionStatus(
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

/** A status from WriteStatus.partitions; a missing origin reads as 'table', the strict reading. */
export function fromPartitionStatus(
  status: PartitionStatus,
  toDataFile: (entry: DataFileEntry) => DataFile,
): PartitionWriteStatus {
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

/** A rotation for WriteStatus.rotations; `toEntry` as for toPartitionStatus. */
export function toRotation(rotation: RotationStatus, toEntry: (file: DataFile) => DataFileEntry): Rotation {
  return {
    id: rotation.id,
    sequence: rotation.sequence,
    ranges: rotation.ranges.map(({ topic, partition, range }) => ({
      topic,
      partition,
      start: range.start,
      end: range.end,
    })),
    files: rotation.files.map(toEntry),
  }
}

/** A rotation from WriteStatus.rotations. */
export function fromRotation(rotation: Rotation, toDataFile: (entry: DataFileEntry) => DataFile): RotationStatus {
  return {
    id: rotation.id,
    sequence: rotation.sequence,
    ranges: rotation.ranges.map(({ topic, partition, start, end }) => ({ topic, partition, range: { start, end } })),
    files: rotation.files.map(toDataFile),
  }
}

/**
 * A decoded WRITE-STATUS (its file list resolved, see resolveFiles) as the coordinator records it;
 * `toDataFile` knows each spec's partition type (protocol's toDataFile).
 */
export function writeStatusReport(
  message: ControlMessage<WriteStatus>,
  toDataFile: (entry: DataFileEntry) => DataFile,
): WriteStatusReport {
  return {
    commitId: message.commitId,
    sender: { ...message.sender },
    statuses: message.body.partitions.map((status) => fromPartitionStatus(status, toDataFile)),
    ...(message.body.rotations === undefined
      ? {}
      : { rotations: message.body.rotations.map((rotation) => fromRotation(rotation, toDataFile)) }),
    ...(message.body.topic === undefined ? {} : { topic: message.body.topic }),
  }
}
