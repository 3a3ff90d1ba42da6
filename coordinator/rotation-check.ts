// The contiguity check of the shared-segment layout (docs/architecture.md, "Shared segments"): one
// file holds rows of many Kafka partitions, so the unit of acceptance is the rotation (every file
// of one cut), never one file or one partition of it. Run inside the commit's retry loop against
// the table as it was just loaded, as checkContiguity is. Pure.
//
// The walk: `next[p]` starts at the table's offset of every partition. Senders' statuses are taken
// newest consumer-group generation first (the current owner of a partition should win a duel with
// a zombie; safety does not rest on the order), each status's rotations oldest first. A rotation is
// accepted iff every range it claims is in line: `start == next[p]`, or the partition's declared
// log-start jump bridges it (`next[p] == jump.from`, `start == jump.to`), or the table never saw
// `p` and the chain did not start from the table (invariant 2's first-commit rule). Then every
// `next[p]` moves to its range's end. Otherwise it is rejected whole and no `next` moves: every
// later rotation holding one of its partitions starts past `next[p]` and is rejected in turn, so
// per partition the accepted ranges are a prefix of its chain, and they tile `[table, next)`.
//
// A summary's log-start jump sits where the per-partition check (contiguity.ts) allows it: before
// the chain (the summary starts at the jump's end or its start), between two of its ranges, or
// after its last range (the summary ends where the jump ends: the table moves on to the log start
// once every range of the partition is taken). A status whose partition summaries disagree with
// its rotations' chain (a gap, an overlap, a summary range other than the chain's, a jump anywhere
// else) is rejected whole, `invalid-range`. Statuses of the per-partition layout in the same round
// (a rolling upgrade) are judged after every rotation, each against `next[p]` as the rotations
// left it.

import type { LogStartJump, OffsetRange, PartitionWriteStatus, RotationStatus, Sender } from '../protocol/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'
import type { Progress } from '../shared/progress/index.ts'
import {
  advancesTable,
  type ContiguityCheck,
  checkContiguity,
  emptyCheck,
  judgeWritten,
  lostBy,
  type RejectedPartition,
  type RejectionReason,
  type WrittenStatus,
} from './contiguity.ts'

/** One sender's newest WRITE-STATUS of the shared-segment layout. */
export interface RotationReport {
  sender: Sender
  /** Per partition its chain summary over the rotations (no files), or `empty`/`error`. */
  statuses: readonly PartitionWriteStatus[]
  /** Oldest first. */
  rotations: readonly RotationStatus[]
}

/** The report would change the table: a rotation with files, or a summary that advances. */
export function reportAdvances(report: RotationReport): boolean {
  return report.rotations.some((r) => r.files.length > 0) || report.statuses.some(advancesTable)
}

/** One key per (topic, partition): the partition's digits end at the first colon. */
export const topicPartitionKey = (topic: string, partition: number): string => `${partition}:${topic}`

/** What one partition gained in this commit. */
interface Touched {
  topic: string
  partition: number
  start: bigint
  tableOffset: bigint | undefined
  files: DataFile[]
  logStartJump?: LogStartJump
  oldestTimestampMs?: number
}

export interface Claim {
  topic: string
  partition: number
  range: OffsetRange
}

/**
 * The check of a round: `statuses` of the per-partition layout (the tracker's newest per
 * partition) and `reports` of the shared-segment layout. Without reports it is checkContiguity.
 */
export function checkRound(
  progress: Progress,
  statuses: readonly PartitionWriteStatus[],
  reports: readonly RotationReport[] = [],
): ContiguityCheck {
  if (reports.length === 0) return checkContiguity(progress, statuses)
  const check = emptyCheck()
  const next = new Map<string, bigint>()
  const touched = new Map<string, Touched>()
  const refused = new Map<string, Omit<RejectedPartition, 'tableOffset'>>()
  const nextOf = (topic: string, partition: number) =>
    next.get(topicPartitionKey(topic, partition)) ?? progress.get(topic)?.get(partition)
  const refuse = (claim: Claim, reason: RejectionReason) => {
    const { topic, partition, range } = claim
    const key = topicPartitionKey(topic, partition)
    if (!refused.has(key)) refused.set(key, { topic, partition, range, reason })
  }
  /** Moves `next` over accepted claims; files go with the partition only for per-partition statuses. */
  const advance = (claim: Claim, summary: WrittenStatus, jump: LogStartJump | undefined, files: DataFile[] = []) => {
    const { topic, partition, range } = claim
    const key = topicPartitionKey(topic, partition)
    let entry = touched.get(key)
    if (!entry) {
      entry = { topic, partition, start: range.start, tableOffset: progress.get(topic)?.get(partition), files: [] }
      if (summary.oldestTimestampMs !== undefined) entry.oldestTimestampMs = summary.oldestTimestampMs
      touched.set(key, entry)
    }
    entry.files.push(...files)
    if (jump) {
      entry.logStartJump ??= jump
      check.lost.push(lostBy(topic, partition, jump))
    }
    next.set(key, range.end)
  }

  const ordered = [...reports].sort((a, b) => b.sender.generation - a.sender.generation)
  for (const report of ordered) walkReport(report)
  for (const status of statuses) judgeStatus(status)

  for (const entry of touched.values()) {
    const { start, files, ...rest } = entry
    check.accepted.push({ ...rest, range: { start, end: nextOf(entry.topic, entry.partition) ?? start }, files })
  }
  for (const [key, rejection] of refused) {
    if (touched.has(key)) continue
    check.rejected.push({ ...rejection, tableOffset: nextOf(rejection.topic, rejection.partition) })
  }
  return check

  function walkReport(report: RotationReport): void {
    const summaries = chainSummaries(report)
    if (summaries === undefined) {
      // The status contradicts itself: none of it is taken.
      for (const rotation of report.rotations) {
        check.rotations.rejected.push({
          id: rotation.id,
          sender: report.sender,
          reason: 'invalid-range',
          stoppedBy: rotation.ranges[0],
        })
        for (const claim of rotation.ranges) refuse(claim, 'invalid-range')
      }
      for (const status of report.statuses) {
        if (status.kind === 'written' && advancesTable(status)) refuse(status, 'invalid-range')
        else noteUnclaimed(status)
      }
      return
    }
    for (const status of report.statuses) {
      if (summaries.claimed.has(topicPartitionKey(status.topic, status.partition))) continue
      // A jump with nothing read after it yet: a claim of no positions that moves the table.
      if (status.kind === 'written' && advancesTable(status)) judgeStatus(status)
      else noteUnclaimed(status)
    }
    for (const rotation of report.rotations) {
      const verdicts = rotation.ranges.map((claim) => {
        const summary = summaries.claimed.get(topicPartitionKey(claim.topic, claim.partition)) as WrittenStatus
        return { claim, summary, verdict: judgeClaim(claim, summary, nextOf(claim.topic, claim.partition)) }
      })
      const stop = verdicts.find((v) => v.verdict.kind === 'rejected')
      if (stop?.verdict.kind === 'rejected') {
        check.rotations.rejected.push({
          id: rotation.id,
          sender: report.sender,
          reason: stop.verdict.reason,
          stoppedBy: stop.claim,
        })
        for (const { claim } of verdicts)
          refuse(claim, claim === stop.claim ? stop.verdict.reason : 'rotation-rejected')
        continue
      }
      for (const { claim, summary, verdict } of verdicts) {
        advance(claim, summary, verdict.kind === 'accepted' ? verdict.logStartJump : undefined)
      }
      check.rotations.accepted.push({
        id: rotation.id,
        sender: report.sender,
        ranges: rotation.ranges,
        files: rotation.files,
      })
    }
    // A jump after the chain's last file moves the table on to the log start, with the files:
    // only when every range of the partition was taken, so the files reach the jump's start.
    for (const summary of summaries.claimed.values()) {
      const jump = summary.logStartJump
      const { topic, partition } = summary
      if (!jump || summary.range.end !== jump.to || nextOf(topic, partition) !== jump.from) continue
      if (refused.has(topicPartitionKey(topic, partition))) continue
      advance({ topic, partition, range: { start: jump.from, end: jump.to } }, summary, jump)
    }
  }

  function noteUnclaimed(status: PartitionWriteStatus): void {
    const { topic, partition } = status
    if (status.kind === 'error') check.errored.push({ topic, partition, message: status.message })
    else check.unchanged.push({ topic, partition })
  }

  function judgeStatus(status: PartitionWriteStatus): void {
    if (status.kind !== 'written' || !advancesTable(status)) {
      noteUnclaimed(status)
      return
    }
    const verdict = judgeWritten(status, nextOf(status.topic, status.partition))
    if (verdict.kind === 'rejected') refuse(status, verdict.reason)
    else advance(status, status, verdict.logStartJump, [...status.files])
  }
}

/** One range of a rotation against `next[p]` (undefined: the table never saw the partition). */
export function judgeClaim(
  claim: Claim,
  summary: WrittenStatus,
  next: bigint | undefined,
): { kind: 'accepted'; logStartJump?: LogStartJump } | { kind: 'rejected'; reason: RejectionReason } {
  const jump = summary.logStartJump
  const bridged = jump !== undefined && jump.to === claim.range.start
  if (next === undefined) {
    if (summary.origin === 'table') return { kind: 'rejected', reason: 'unknown-to-table' }
    // A first commit positioned past the group's offset because of retention: the gap is counted.
    return bridged ? { kind: 'accepted', logStartJump: jump } : { kind: 'accepted' }
  }
  if (claim.range.start === next) return { kind: 'accepted' }
  if (bridged) {
    return jump.from === next
      ? { kind: 'accepted', logStartJump: jump }
      : { kind: 'rejected', reason: 'log-start-jump-mismatch' }
  }
  return { kind: 'rejected', reason: claim.range.start < next ? 'behind-table' : 'ahead-of-table' }
}

/**
 * The report's summaries by partition for every partition its rotations claim, when they agree
 * with the chain; undefined when anything disagrees. A partition's chain is its ranges over the
 * rotations, in order: each starts where the one before ended, except once across the declared
 * log-start jump; the summary's range runs from the chain's first start to its last end, holds no
 * files, and its jump is either before the chain (ending at its first start) or that one step.
 */
export function chainSummaries(report: RotationReport): { claimed: Map<string, WrittenStatus> } | undefined {
  const byPartition = new Map<string, PartitionWriteStatus>()
  for (const status of report.statuses) {
    const key = topicPartitionKey(status.topic, status.partition)
    if (byPartition.has(key) || (status.kind === 'written' && status.files.length > 0)) return undefined
    byPartition.set(key, status)
  }
  const chains = new Map<string, OffsetRange[]>()
  for (const rotation of report.rotations) {
    const seen = new Set<string>()
    let holdsPositions = false
    for (const { topic, partition, range } of rotation.ranges) {
      const key = topicPartitionKey(topic, partition)
      if (seen.has(key) || range.end < range.start) return undefined
      seen.add(key)
      holdsPositions ||= range.end > range.start
      const chain = chains.get(key) ?? []
      chain.push(range)
      chains.set(key, chain)
    }
    // Rows of no position: nothing could say they are not a duplicate.
    if (rotation.files.length > 0 && !holdsPositions) return undefined
  }
  const claimed = new Map<string, WrittenStatus>()
  for (const [key, chain] of chains) {
    const summary = byPartition.get(key)
    if (summary?.kind !== 'written') return undefined
    const jump = summary.logStartJump
    if (jump !== undefined && jump.from >= jump.to) return undefined
    const first = chain[0] as OffsetRange
    const last = chain.at(-1) as OffsetRange
    // The jump before the chain: the summary starts at the log start, or at the jump's start.
    let jumped = jump !== undefined && jump.to === first.start
    const summaryStart = jumped && summary.range.start === jump?.from ? jump.from : first.start
    for (let i = 1; i < chain.length; i++) {
      const { end } = chain[i - 1] as OffsetRange
      const { start } = chain[i] as OffsetRange
      if (start === end) continue
      if (jumped || jump === undefined || jump.from !== end || jump.to !== start) return undefined
      jumped = true
    }
    // The jump after the chain: the last file ends where it starts, the summary where it ends.
    let summaryEnd = last.end
    if (jump !== undefined && !jumped && jump.from === last.end) {
      jumped = true
      summaryEnd = jump.to
    }
    if (summary.range.start !== summaryStart || summary.range.end !== summaryEnd) return undefined
    if (jump !== undefined && !jumped) return undefined
    claimed.set(key, summary)
  }
  // A summary that advances without any rotation holding it claims positions no file has; only a
  // jump with nothing read after it (an empty range starting at the jump's end) does that rightly.
  for (const [key, status] of byPartition) {
    if (claimed.has(key) || status.kind !== 'written' || !advancesTable(status)) continue
    const jump = status.logStartJump
    if (status.range.end !== status.range.start || jump === undefined || jump.to !== status.range.start)
      return undefined
  }
  return { claimed }
}

/**
 * For progressForRound's rebuild of the table before a landed round: per partition of each
 * report, a status per point where an accepted prefix of its chain may have ended (a landed round
 * moved the partition to the end of one of its ranges), each from the chain's start and with the
 * summary's jump.
 */
export function landedCandidates(reports: readonly RotationReport[]): PartitionWriteStatus[] {
  const candidates: PartitionWriteStatus[] = []
  for (const report of reports) {
    for (const summary of report.statuses) {
      if (summary.kind !== 'written') continue
      // a chain whose jump comes after its last file lands at the jump's end
      const jump = summary.logStartJump
      if (jump && summary.range.end === jump.to && summary.range.start !== jump.to) candidates.push(summary)
      for (const rotation of report.rotations) {
        for (const { topic, partition, range } of rotation.ranges) {
          if (topic !== summary.topic || partition !== summary.partition || range.end <= summary.range.start) continue
          candidates.push({ ...summary, range: { start: summary.range.start, end: range.end } })
        }
      }
    }
  }
  return candidates
}
