// The check of a round of a routed dataset (docs/architecture.md, "Markers and the ledger", "The
// argument" M1-M5): shared-layout rotations whose rows go to many tables, each table with its own
// marker and commit, and the dataset's ledger after them. Pure: the caller reads the markers and the
// ledger, commits the ledger's starts, each table (walkTable again inside its loop) and the ledger
// (routed-settle.ts), in that order.
//
// Two walks decide a rotation, all or nothing:
// - the ledger's chain, which is checkRound's walk with `next[p]` starting at `L[p]`: every range
//   `[a, e)` of the rotation must start at `next[p]` (or across the declared log-start jump), so
//   the ranges of the accepted rotations tile each partition from the ledger on, and the ledger
//   may later move to their ends (planLedgerAdvance);
// - every table's pointer walk (routed-walk.ts) over the rotations accepted so far and this one:
//   each table part must start where the table stops vouching, `E_T[p]` moved by the earlier ones.
// A rotation rejected by either moves nothing: the ledger's `next` and every pointer stay, so the
// later rotations holding one of its partitions miss and are rejected in turn, as in checkRound.
//
// A partition the ledger lacks is started where its senders positioned it (planLedgerStarts, the
// lowest start of a sender not positioned from the ledger), and both walks run from that start,
// as the caller commits it before any table: the table walks inside their loops read the ledger
// again and refuse the claims of a partition whose start did not land (`unknown-to-table`).
// Walking the ledger from the first sender's chain instead (checkRound's first-commit rule) could
// take a higher start than the one committed, and a table would then pass rows below it that it
// lacks. Statuses of the per-partition layout have no place in a routed round.

import type { RotationRange, Sender } from '../protocol/index.ts'
import { type CommittedOffset, mergeProgress, type Progress } from '../shared/progress/index.ts'
import { advancesTable, type LostRecords, lostBy, type RejectionReason, type WrittenStatus } from './contiguity.ts'
import { type ClaimMismatch, planLedgerStarts } from './ledger.ts'
import { chainSummaries, judgeClaim, type RotationReport, topicPartitionKey } from './rotation-check.ts'
import { type LedgerRange, type OrderedRotation, TablePointers, type TableWalk, walkTable } from './routed-walk.ts'

/** A rotation both walks took: its table parts go to their tables' commits, its ranges to the ledger's. */
export interface AcceptedRoutedRotation extends OrderedRotation {
  sender: Sender
}

/** A rotation refused whole: none of its parts is committed, the ledger does not pass it. */
export interface RejectedRoutedRotation {
  id: string
  sender: Sender
  reason: RejectionReason
  /** The range or claim that stopped it (the first range, for a status whose chain was invalid). */
  stoppedBy: RotationRange | undefined
  /** When a table's claim stopped it: the table, and where its pointer stood. */
  table?: { name: string; mismatch: ClaimMismatch }
}

/** A partition with a range in a refused rotation or status (even if another rotation took it too). */
export interface RefusedPartition {
  topic: string
  partition: number
  reason: RejectionReason
}

export interface RoutedCheck {
  /** The ledger's first position of each partition it lacked: a ledger-only commit before the tables'. */
  ledgerStarts: CommittedOffset[]
  rotations: { accepted: AcceptedRoutedRotation[]; rejected: RejectedRoutedRotation[] }
  /** Per table with a part in an accepted rotation, its walk over them: what its commit holds. */
  tables: ReadonlyMap<string, TableWalk>
  /** First reason per partition; where to read again is known only after the commits (routed-settle.ts). */
  rejected: RefusedPartition[]
  lost: LostRecords[]
  errored: Array<{ topic: string; partition: number; message: string }>
  unchanged: Array<{ topic: string; partition: number }>
}

/**
 * Checks the senders' reports against the ledger and the tables' markers as read at the round's
 * start (`markers`: every table the caller read; a table missing from it has no marker).
 */
export function checkRoutedRound(
  ledger: Progress,
  markers: ReadonlyMap<string, Progress>,
  reports: readonly RotationReport[],
): RoutedCheck {
  const ordered = [...reports]
    .sort((a, b) => b.sender.generation - a.sender.generation)
    .map((report) => ({ report, summaries: routedPartsValid(report) ? chainSummaries(report) : undefined }))
  const starts = planLedgerStarts(
    ledger,
    ordered.flatMap(({ summaries }) =>
      [...(summaries?.claimed.values() ?? [])].map(({ topic, partition, origin, range }) => ({
        topic,
        partition,
        origin,
        start: range.start,
      })),
    ),
  ).moves
  const started = mergeProgress(ledger, starts)
  const check: Omit<RoutedCheck, 'tables'> = {
    ledgerStarts: starts,
    rotations: { accepted: [], rejected: [] },
    rejected: [],
    lost: [],
    errored: [],
    unchanged: [],
  }
  const next = new Map<string, bigint>()
  const nextOf = (topic: string, partition: number) =>
    next.get(topicPartitionKey(topic, partition)) ?? started.get(topic)?.get(partition)
  const refused = new Map<string, RefusedPartition>()
  const refuse = ({ topic, partition }: { topic: string; partition: number }, reason: RejectionReason) => {
    const key = topicPartitionKey(topic, partition)
    if (!refused.has(key)) refused.set(key, { topic, partition, reason })
  }
  // Every table of the round from the start: a rotation without a part of a table still moves its
  // pointers, which a later part of it must find where they went.
  const pointers = new Map<string, TablePointers>()
  for (const { report, summaries } of ordered) {
    if (summaries === undefined) continue
    for (const part of report.rotations.flatMap((rotation) => rotation.tables ?? [])) {
      if (pointers.has(part.table)) continue
      pointers.set(part.table, new TablePointers(part.table, markers.get(part.table) ?? new Map(), started))
    }
  }

  for (const { report, summaries } of ordered) {
    if (summaries === undefined) {
      // The status contradicts itself: none of it is taken.
      for (const rotation of report.rotations) {
        for (const range of rotation.ranges) refuse(range, 'invalid-range')
        reject(report.sender, rotation, 'invalid-range', rotation.ranges[0])
      }
      for (const status of report.statuses) {
        if (status.kind === 'written' && advancesTable(status)) refuse(status, 'invalid-range')
        else noteUnclaimed(status)
      }
      continue
    }
    // A summary no rotation claims (a jump with nothing read after it among them): the ledger
    // crosses the jump with the first rotation after it, which declares it again.
    for (const status of report.statuses) {
      if (!summaries.claimed.has(topicPartitionKey(status.topic, status.partition))) noteUnclaimed(status)
    }
    for (const rotation of report.rotations) {
      const ranges: LedgerRange[] = []
      const lost: LostRecords[] = []
      let stop: { claim: RotationRange; reason: RejectionReason } | undefined
      for (const claim of rotation.ranges) {
        const { topic, partition } = claim
        const summary = summaries.claimed.get(topicPartitionKey(topic, partition)) as WrittenStatus
        const at = nextOf(topic, partition)
        const verdict = judgeClaim(claim, summary, at)
        if (verdict.kind === 'rejected') {
          stop = { claim, reason: verdict.reason }
          break
        }
        const jump = verdict.logStartJump
        ranges.push(jump ? { ...claim, jump } : claim)
        const gap = jump ?? firstStartJump(summary, claim, at)
        if (gap) lost.push(lostBy(topic, partition, gap))
      }
      if (stop) {
        reject(report.sender, rotation, stop.reason, stop.claim)
        continue
      }
      const candidate: OrderedRotation = { id: rotation.id, ranges, tables: rotation.tables ?? [] }
      const steps = [...pointers.values()].map((table) => ({ table, step: table.judge(candidate) }))
      const stopped = steps.find(({ step }) => step.verdict?.kind === 'rejected')
      if (stopped?.step.verdict?.kind === 'rejected') {
        const mismatch = stopped.step.verdict.stoppedBy
        const claim = { topic: mismatch.topic, partition: mismatch.partition, range: mismatch.claimed }
        reject(report.sender, rotation, mismatch.reason, claim, { name: stopped.table.table, mismatch })
        continue
      }
      for (const { table, step } of steps) table.apply(candidate, step)
      for (const { topic, partition, range } of ranges) next.set(topicPartitionKey(topic, partition), range.end)
      check.lost.push(...lost)
      check.rotations.accepted.push({ ...candidate, sender: report.sender })
    }
  }
  check.rejected.push(...refused.values())

  const accepted = check.rotations.accepted
  const tables = new Map<string, TableWalk>()
  for (const name of new Set(accepted.flatMap((rotation) => rotation.tables.map((part) => part.table)))) {
    tables.set(name, walkTable(name, markers.get(name) ?? new Map(), started, accepted))
  }
  return { ...check, tables }

  function reject(
    sender: Sender,
    rotation: { id: string; ranges: readonly RotationRange[] },
    reason: RejectionReason,
    stoppedBy: RotationRange | undefined,
    table?: RejectedRoutedRotation['table'],
  ): void {
    check.rotations.rejected.push({ id: rotation.id, sender, reason, stoppedBy, ...(table ? { table } : {}) })
    const stopKey = stoppedBy && topicPartitionKey(stoppedBy.topic, stoppedBy.partition)
    for (const range of rotation.ranges) {
      refuse(range, topicPartitionKey(range.topic, range.partition) === stopKey ? reason : 'rotation-rejected')
    }
  }

  function noteUnclaimed(status: RotationReport['statuses'][number]): void {
    const { topic, partition } = status
    if (status.kind === 'error') check.errored.push({ topic, partition, message: status.message })
    else check.unchanged.push({ topic, partition })
  }

  /**
   * The jump before the first range of a partition the ledger starts this round: its records are
   * counted lost, as checkRound counts a first commit's; the walks start past it anyway.
   */
  function firstStartJump(summary: WrittenStatus, claim: RotationRange, at: bigint | undefined) {
    const jump = summary.logStartJump
    const inLedger = ledger.get(claim.topic)?.get(claim.partition) !== undefined
    return !inLedger && jump?.to === claim.range.start && at === claim.range.start ? jump : undefined
  }
}

/**
 * The routed shape of each rotation: no files of its own (the ledger holds no data, so rows outside
 * a table part would be committed nowhere while the ledger passes them), each table named once,
 * and each part's claims inside the rotation's ranges: one claim per partition, `[s, e)` with
 * `a <= s < e` and `e` the range's end.
 */
function routedPartsValid(report: RotationReport): boolean {
  for (const rotation of report.rotations) {
    if (rotation.files.length > 0) return false
    const ranges = new Map(rotation.ranges.map((r) => [topicPartitionKey(r.topic, r.partition), r.range]))
    const named = new Set<string>()
    for (const part of rotation.tables ?? []) {
      if (named.has(part.table) || part.claims.length === 0) return false
      named.add(part.table)
      const claimed = new Set<string>()
      for (const { topic, partition, range } of part.claims) {
        const key = topicPartitionKey(topic, partition)
        const read = ranges.get(key)
        if (claimed.has(key) || read === undefined) return false
        if (range.end !== read.end || range.start < read.start || range.start >= range.end) return false
        claimed.add(key)
      }
    }
  }
  return true
}
