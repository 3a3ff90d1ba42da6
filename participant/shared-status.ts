// What a worker says and does per round in the shared-segment layout (docs/architecture.md,
// "Shared segments"), as pure functions over its dataset's rotations: the WRITE-STATUS (the
// uncommitted rotations oldest first, and per partition the chain summary that must equal the
// chain of its ranges over them), and what an ACK-COMMIT makes of the WAL (which rotations go as
// accepted, which as rejected, and where each partition's chain starts for the walk).
import type {
  CommitAcks,
  LogStartJump,
  PartitionWriteStatus,
  RangeOrigin,
  RotationRange,
  RotationStatus,
} from '../protocol/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'
import { chainedRange } from './chain.ts'
import { partitionKey, type SharedRotation, type WalkRange } from './wal/index.ts'

/** What the participant holds about one assigned partition's uncommitted chain. */
export interface ChainState {
  topic: string
  partition: number
  /** Where the chain starts: the table's offset, or the group's / reset's for a partition new to the table. */
  chainStart: bigint
  origin: RangeOrigin
  logStartJump?: LogStartJump
  oldestTimestampMs?: number
}

export interface SharedStatusInput {
  /** Every partition assigned to the worker for the dataset. */
  chains: readonly ChainState[]
  /** The dataset's uncommitted rotations, oldest first. */
  rotations: readonly SharedRotation[]
  /** Uploaded data files by segment UUID: a rotation is reported only once all its files are there. */
  uploaded: ReadonlyMap<string, DataFile>
  /** At most this many rotations (a status must fit one control message); default all. */
  maxRotations?: number
}

export interface SharedStatus {
  statuses: PartitionWriteStatus[]
  rotations: RotationStatus[]
  /** Partitions whose ranges do not chain from their chain start: nothing of theirs can pass; they resync. */
  gaps: number[]
}

/**
 * The WRITE-STATUS of one worker for one dataset: the oldest rotations whose files are all
 * uploaded (up to `maxRotations`; the rest wait for the next round), and per partition the
 * summary of its chain over exactly those.
 */
export function sharedStatus(input: SharedStatusInput): SharedStatus {
  const limit = input.maxRotations ?? Number.POSITIVE_INFINITY
  const reported: RotationStatus[] = []
  for (const rotation of input.rotations) {
    if (reported.length >= limit) break
    const files = rotation.segments.map((segment) => input.uploaded.get(segment.uuid))
    if (files.some((file) => file === undefined)) break
    const status: RotationStatus = {
      id: rotation.id,
      sequence: rotation.sequence,
      ranges: rotation.ranges.map(toRotationRange),
      files: files as DataFile[],
    }
    reported.push(rotation.tables === undefined ? status : routed(status, rotation, files as DataFile[]))
  }
  const rangesOf = new Map<string, Array<{ start: bigint; end: bigint }>>()
  for (const rotation of reported) {
    for (const { topic, partition, range } of rotation.ranges) {
      const key = partitionKey(topic, partition)
      const list = rangesOf.get(key)
      if (list) list.push(range)
      else rangesOf.set(key, [range])
    }
  }
  const statuses: PartitionWriteStatus[] = []
  const gaps: number[] = []
  for (const chain of input.chains) {
    const { topic, partition, chainStart, origin, logStartJump } = chain
    const ranges = rangesOf.get(partitionKey(topic, partition)) ?? []
    if (ranges.length === 0 && !logStartJump) {
      statuses.push({ kind: 'empty', topic, partition })
      continue
    }
    const chained = chainedRange(chainStart, logStartJump, ranges)
    if (chained.kind === 'gap') {
      gaps.push(partition)
      statuses.push({
        kind: 'error',
        topic,
        partition,
        message: `WAL continues at ${chained.found}, chain at ${chained.expected}`,
      })
      continue
    }
    statuses.push({
      kind: 'written',
      topic,
      partition,
      range: chained.range,
      files: [],
      origin,
      ...(chained.jump ? { logStartJump: chained.jump } : {}),
      ...(chain.oldestTimestampMs === undefined ? {} : { oldestTimestampMs: chain.oldestTimestampMs }),
    })
  }
  return { statuses, rotations: reported, gaps }
}

const toRotationRange = ({ topic, partition, start, end }: WalkRange): RotationRange => ({
  topic,
  partition,
  range: { start, end },
})

/** A routed rotation's status: each table's claims and the files of its segments, none outside them. */
function routed(status: RotationStatus, rotation: SharedRotation, files: readonly DataFile[]): RotationStatus {
  const byTable = new Map<string, DataFile[]>()
  rotation.segments.forEach((segment, index) => {
    const table = segment.table ?? ''
    const list = byTable.get(table) ?? []
    list.push(files[index] as DataFile)
    byTable.set(table, list)
  })
  const tables = (rotation.tables ?? []).map(({ table, claims }) => ({
    table,
    claims: claims.map(toRotationRange),
    files: byTable.get(table) ?? [],
  }))
  return { ...status, files: [], tables }
}

export interface AckPlan {
  /** Accepted whole by the commit: delete them. */
  accepted: string[]
  /** Reported, not accepted, and holding a rejected partition: dropped whole (the walk takes them out). */
  rejected: Set<string>
  /** Where each partition's chain starts now (key: the WAL's partitionKey), for the walk. */
  from: Map<string, bigint | undefined>
  /**
   * A routed dataset: per rejected partition (partitionKey) read again from the ledger, the tables
   * that hold its records past there and from where on they do not (the decoder skips below).
   */
  floors: Map<string, Map<string, bigint>>
}

/**
 * What an ACK-COMMIT means for the WAL. A committed partition's chain starts at its new offset
 * (unless it already starts past it), a rejected one's at the table's offset the ACK names; others
 * keep the chain start they had.
 */
export function ackPlan(acks: CommitAcks, chains: readonly ChainState[], reported: readonly RotationStatus[]): AckPlan {
  const from = new Map<string, bigint | undefined>()
  for (const chain of chains) from.set(partitionKey(chain.topic, chain.partition), chain.chainStart)
  for (const { topic, partition, offset } of acks.committed) {
    // The late ACK of a round whose outcome was unknown can come after a newer round's: the table
    // only moves forward, so an older offset would only rewind what is kept for nothing.
    const key = partitionKey(topic, partition)
    const held = from.get(key)
    if (held === undefined || offset > held) from.set(key, offset)
  }
  const rejectedPartitions = new Set<string>()
  const floors = new Map<string, Map<string, bigint>>()
  for (const { topic, partition, tableOffset, skipFloors } of acks.rejected) {
    const key = partitionKey(topic, partition)
    from.set(key, tableOffset)
    rejectedPartitions.add(key)
    if (skipFloors !== undefined && skipFloors.length > 0) {
      floors.set(key, new Map(skipFloors.map(({ table, offset }) => [table, offset])))
    }
  }
  const accepted = new Set(acks.acceptedRotations)
  const rejected = new Set<string>()
  for (const rotation of reported) {
    if (accepted.has(rotation.id)) continue
    if (rotation.ranges.some(({ topic, partition }) => rejectedPartitions.has(partitionKey(topic, partition)))) {
      rejected.add(rotation.id)
    }
  }
  return { accepted: [...accepted], rejected, from, floors }
}
