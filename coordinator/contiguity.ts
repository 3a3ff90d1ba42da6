// The contiguity check of docs/design.md invariant 3, run inside the commit's retry loop against the
// table as it was just loaded: a partition's files are committed only if their range starts
// exactly where the table's progress for that partition ends. Pure.
//
// The rules, per partition status:
// - `empty`, and `written` that neither holds files nor advances: nothing to commit, nothing to
//   check (`unchanged`).
// - `error`: skipped; the partition's files stay with its participant for the next round.
// - a range that ends before it starts, or holds files but no offsets: rejected (`invalid-range`).
// - the table knows the partition: accepted iff `range.start` equals the table's next offset. The
//   one allowed gap (retention deleted records the table never got) is declared as a log-start
//   jump, in one of two places:
//   - before the range: `jump.from` equals the table's offset and `range.start` equals `jump.to`
//     (the participant held nothing from the table's offset on);
//   - inside the range: `range.start` equals the table's offset and `range.start <= jump.from <
//     jump.to <= range.end` (the participant's files cover [range.start, jump.from) and
//     [jump.to, range.end): files it had written durably before the log start passed them are
//     committed in the same commit as the jump, not thrown away; participant/chain.ts).
//   Either way the records of the jump are reported lost. A jump anywhere else is rejected.
// - the table has never seen the partition: accepted at any start, but only if the participant's
//   chain did not start from the table (`origin` is `group-offset` or `offset-reset`). That is the
//   partition's first-ever commit for this group (invariant 2), and the check runs against the
//   freshly loaded table on every attempt, so two first commits cannot both land: the second one
//   sees the first's offset and is checked as usual. A chain that started from a table offset the
//   table no longer holds means the table's history changed under the participant (a rollback, a
//   recreated table, a lost marker). Accepting it would take the participant's memory over the
//   table's; it is rejected (`unknown-to-table`) and the participant repositions from the group's
//   offset or `auto.offset.reset` — the settings an operator uses to say where a table without
//   history starts — and its next status says so in its origin.

import type {
  LogStartJump,
  OffsetRange,
  PartitionWriteStatus,
  RotationRange,
  Sender,
  TableOffset,
} from '../protocol/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'
import type { Progress } from '../shared/progress/index.ts'

export interface AcceptedPartition {
  topic: string
  partition: number
  range: OffsetRange
  files: readonly DataFile[]
  /** The table's next offset for the partition before this commit (undefined: first commit). */
  tableOffset: bigint | undefined
  /** The jump this commit accepted, when retention deleted records the table never got. */
  logStartJump?: LogStartJump
  /** Kafka timestamp (ms) of the range's oldest record, for commit-visibility latency. */
  oldestTimestampMs?: number
}

export type RejectionReason =
  /** The range starts before the table's offset: a replay, a zombie or a stale WAL file. */
  | 'behind-table'
  /** The range starts past the table's offset: a gap; the participant is out of line. */
  | 'ahead-of-table'
  /** A declared log-start jump that does not start at the table's offset or end at the range. */
  | 'log-start-jump-mismatch'
  | 'invalid-range'
  /** The table holds no offset for a chain that started from a table offset. */
  | 'unknown-to-table'
  /** Shared segments: the partition's range was in line, another range of its rotation was not. */
  | 'rotation-rejected'

export interface RejectedPartition {
  topic: string
  partition: number
  reason: RejectionReason
  /** Where the participant must seek back to; undefined when the table never saw the partition. */
  tableOffset: bigint | undefined
  range: OffsetRange
  /**
   * A routed dataset (`tableOffset` is the ledger's): the tables holding records of the partition
   * past it, each with its marker; the participant skips what each already holds.
   */
  skipFloors?: TableOffset[]
}

export interface LostRecords {
  topic: string
  partition: number
  /** The table's offset: the first record lost. */
  from: bigint
  /** The broker's log start: the first record kept. */
  to: bigint
  count: bigint
}

/** A shared-segment rotation the check took whole: every file of it is committed. */
export interface AcceptedRotation {
  id: string
  sender: Sender
  ranges: readonly RotationRange[]
  files: readonly DataFile[]
}

/** A rotation the check refused whole: none of its files is committed. */
export interface RejectedRotation {
  id: string
  sender: Sender
  reason: RejectionReason
  /** The range that stopped it (the first one, for a status whose chain was invalid). */
  stoppedBy: RotationRange | undefined
}

/**
 * Per partition, what the commit does. With rotations (rotation-check.ts) a partition is
 * `accepted` once if any accepted rotation or status touched it, its range from the first accepted
 * start to the table's new offset, and `rejected` only if nothing of it was accepted.
 */
export interface ContiguityCheck {
  accepted: AcceptedPartition[]
  rejected: RejectedPartition[]
  lost: LostRecords[]
  errored: Array<{ topic: string; partition: number; message: string }>
  unchanged: Array<{ topic: string; partition: number }>
  rotations: { accepted: AcceptedRotation[]; rejected: RejectedRotation[] }
}

/** The status would change the table: files, an advanced range or a log-start jump. */
export function advancesTable(status: PartitionWriteStatus): boolean {
  return (
    status.kind === 'written' &&
    (status.files.length > 0 || status.range.end !== status.range.start || status.logStartJump !== undefined)
  )
}

export function lostBy(topic: string, partition: number, jump: LogStartJump): LostRecords {
  return { topic, partition, from: jump.from, to: jump.to, count: jump.to - jump.from }
}

export type WrittenStatus = Extract<PartitionWriteStatus, { kind: 'written' }>

/** What the check says of a status that advances the table, against the table's next offset `table`. */
export type StatusVerdict =
  | { kind: 'accepted'; logStartJump?: LogStartJump }
  | { kind: 'rejected'; reason: RejectionReason }

export function judgeWritten(status: WrittenStatus, table: bigint | undefined): StatusVerdict {
  const { range, files } = status
  const jump = status.logStartJump
  const reject = (reason: RejectionReason): StatusVerdict => ({ kind: 'rejected', reason })
  const accept = (acceptedJump: LogStartJump | undefined): StatusVerdict =>
    acceptedJump ? { kind: 'accepted', logStartJump: acceptedJump } : { kind: 'accepted' }

  const before = jump !== undefined && jump.to === range.start
  const inside = jump !== undefined && !before && range.start <= jump.from && jump.to <= range.end
  if (range.end < range.start || (files.length > 0 && range.end === range.start)) return reject('invalid-range')
  if (jump && (jump.to <= jump.from || !(before || inside))) {
    return reject(table === undefined || jump.to <= jump.from ? 'invalid-range' : 'log-start-jump-mismatch')
  }
  if (table === undefined) {
    // A first commit that positioned past the group's offset because of retention: the gap
    // is counted, though the table never held the records before it either.
    return status.origin === 'table' ? reject('unknown-to-table') : accept(jump)
  }
  // A jump before the range that ends at the table's offset skipped nothing the table lacks.
  if (range.start === table) return accept(inside ? jump : undefined)
  if (before) return jump.from === table ? accept(jump) : reject('log-start-jump-mismatch')
  return reject(range.start < table ? 'behind-table' : 'ahead-of-table')
}

export function checkContiguity(progress: Progress, statuses: readonly PartitionWriteStatus[]): ContiguityCheck {
  const check = emptyCheck()
  for (const status of statuses) {
    const { topic, partition } = status
    if (status.kind === 'error') {
      check.errored.push({ topic, partition, message: status.message })
      continue
    }
    if (status.kind === 'empty' || !advancesTable(status)) {
      check.unchanged.push({ topic, partition })
      continue
    }
    const table = progress.get(topic)?.get(partition)
    const verdict = judgeWritten(status, table)
    if (verdict.kind === 'rejected') {
      check.rejected.push({ topic, partition, reason: verdict.reason, tableOffset: table, range: status.range })
      continue
    }
    const jump = verdict.logStartJump
    check.accepted.push({
      topic,
      partition,
      range: status.range,
      files: status.files,
      tableOffset: table,
      ...(jump ? { logStartJump: jump } : {}),
      ...(status.oldestTimestampMs === undefined ? {} : { oldestTimestampMs: status.oldestTimestampMs }),
    })
    if (jump) check.lost.push(lostBy(topic, partition, jump))
  }
  return check
}

export function emptyCheck(): ContiguityCheck {
  return { accepted: [], rejected: [], lost: [], errored: [], unchanged: [], rotations: { accepted: [], rejected: [] } }
}

/** Every file the check accepted: the per-partition ones and those of the accepted rotations. */
export function acceptedFiles(check: ContiguityCheck): DataFile[] {
  return [
    ...check.accepted.flatMap((accepted) => accepted.files),
    ...check.rotations.accepted.flatMap((rotation) => rotation.files),
  ]
}
