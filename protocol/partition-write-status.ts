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
  /** Empty in a routed rotation: its files are in `tables`, each with the table it goes to. */
  files: readonly DataFile[]
  /**
   * A dataset that routes records into many tables: the rotation's share of each table that got
   * rows in it (docs/architecture.md, "Markers and the ledger"). Absent without a route.
   */
  tables?: readonly RotationTablePart[]
}

/**
 * One table's share of a routed rotation: per partition with rows of the table in the cut, the
 * claim `[s, e)` (every record of the partition in it that the route sends to the table is in
 * `files`; `e` is the rotation's range end, `s` its start or, past it, the table's skip floor).
 */
export interface RotationTablePart {
  /** `namespace.table`. */
  table: string
  claims: readonly RotationRange[]
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
  /** The fingerprint of its sender's route (WriteStatus.route), from a routed dataset. */
  route?: string
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

/**
 * A rotation for WriteStatus.rotations; `toEntry` as for toPartitionStatus. A routed rotation's
 * parts travel flat: each file and each claim names its table.
 */
export function toRotation(rotation: RotationStatus, toEntry: (file: DataFile) => DataFileEntry): Rotation {
  const wire: Rotation = {
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
  if (rotation.tables === undefined) return wire
  wire.tableClaims = []
  for (const { table, claims, files } of rotation.tables) {
    for (const file of files) wire.files.push({ ...toEntry(file), table })
    for (const { topic, partition, range } of claims) {
      wire.tableClaims.push({ table, topic, partition, start: range.start, end: range.end })
    }
  }
  return wire
}

/**
 * A rotation from WriteStatus.rotations. Files and claims that name a table make its parts, in
 * the order tables first appear; whether the parts agree with the ranges is the coordinator's check.
 */
export function fromRotation(rotation: Rotation, toDataFile: (entry: DataFileEntry) => DataFile): RotationStatus {
  const status = {
    id: rotation.id,
    sequence: rotation.sequence,
    ranges: rotation.ranges.map(({ topic, partition, start, end }) => ({ topic, partition, range: { start, end } })),
  }
  const claims = rotation.tableClaims ?? []
  if (claims.length === 0 && rotation.files.every((file) => file.table === undefined)) {
    return { ...status, files: rotation.files.map(toDataFile) }
  }
  const parts = new Map<string, { table: string; claims: RotationRange[]; files: DataFile[] }>()
  const partOf = (table: string) => {
    let part = parts.get(table)
    if (!part) {
      part = { table, claims: [], files: [] }
      parts.set(table, part)
    }
    return part
  }
  const unrouted: DataFile[] = []
  for (const { table, topic, partition, start, end } of claims) {
    partOf(table).claims.push({ topic, partition, range: { start, end } })
  }
  for (const entry of rotation.files) {
    if (entry.table === undefined) unrouted.push(toDataFile(entry))
    else partOf(entry.table).files.push(toDataFile(entry))
  }
  return { ...status, files: unrouted, tables: [...parts.values()] }
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
    ...(message.body.route === undefined ? {} : { route: message.body.route }),
  }
}
