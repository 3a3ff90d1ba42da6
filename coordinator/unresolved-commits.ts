// Rounds whose commit gave up with its outcome unknown (COMMIT_STATE_UNKNOWN): the request may
// still reach the catalog, however late. The coordinator remembers them and looks for each in
// every later table it reads: a round found on main is committed (its ACK goes out, late, so its
// participants let their files go instead of resyncing); a round whose asserted `main` is gone
// without it can never land (the catalog's compare-and-set refuses it) and is forgotten. Pure.

import type { PartitionWriteStatus, RotationStatus } from '../protocol/index.ts'
import { findCommittedSnapshot } from '../shared/iceberg/commit/index.ts'
import { refSnapshotId, type TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { type CommitPlan, planCommit, type RoundAck, roundAck } from './commit-content.ts'
import { floeSummaryKeys } from './progress.ts'
import type { RotationReport } from './rotation-check.ts'

export interface UnresolvedCommit {
  commitId: string
  statuses: readonly PartitionWriteStatus[]
  /** The senders' shared-segment statuses; none in the per-partition layout. */
  reports?: readonly RotationReport[]
  partial: boolean
  /** The snapshot ids (decimal text, null for an empty table) the unknown attempts asserted as main. */
  asserted: readonly (string | null)[]
  /** When the commit gave up, for logs. */
  since: number
}

export type Resolution =
  | { kind: 'landed'; commit: UnresolvedCommit; snapshotId: bigint; plan: CommitPlan; ack: RoundAck }
  | { kind: 'never'; commit: UnresolvedCommit }

/** How many unresolved rounds are kept; beyond, the oldest is dropped (its participants resync). */
export const maxUnresolved = 64

/**
 * What `metadata` says of each unresolved round: landed (with the ACK it would have sent, planned
 * against the table as it stood before the round's snapshot), never, or still open (`pending`).
 */
export function resolveCommits(
  metadata: TableMetadata,
  group: string,
  commits: readonly UnresolvedCommit[],
): { resolved: Resolution[]; pending: UnresolvedCommit[] } {
  const resolved: Resolution[] = []
  const pending: UnresolvedCommit[] = []
  const main = refSnapshotId(metadata)
  const mainText = main === null ? null : String(main)
  for (const commit of commits) {
    const landed = findCommittedSnapshot(metadata, floeSummaryKeys.commitId, commit.commitId)
    if (landed) {
      const plan = planCommit(metadata, {
        group,
        commitId: commit.commitId,
        statuses: commit.statuses,
        reports: commit.reports ?? [],
        partial: commit.partial,
      })
      const snapshotId = landed['snapshot-id']
      resolved.push({
        kind: 'landed',
        commit,
        snapshotId,
        plan,
        ack: roundAck(commit.commitId, snapshotId, plan.check),
      })
    } else if (!commit.asserted.includes(mainText)) {
      resolved.push({ kind: 'never', commit })
    } else {
      pending.push(commit)
    }
  }
  return { resolved, pending }
}

/** Adds a round that gave up unknown, dropping the oldest beyond maxUnresolved. */
export function rememberCommit(commits: readonly UnresolvedCommit[], commit: UnresolvedCommit): UnresolvedCommit[] {
  const kept = commits.filter((c) => c.commitId !== commit.commitId)
  kept.push(commit)
  return kept.slice(-maxUnresolved)
}

/**
 * A later round's statuses, less what a round found landed committed: when the late round's
 * commit landed while this round was collecting or committing, a participant's status still
 * covers the late round's range from its start. For a partition whose status starts where the
 * landed round's range started and holds every file it committed, those files go and the range
 * starts where the landed one ended: the rest commits now, and the participant's ACK names the
 * end of its whole status as usual. Any other status is left as it is (the contiguity check
 * decides on it).
 */
export function withoutLanded(
  statuses: readonly PartitionWriteStatus[],
  landed: readonly Extract<Resolution, { kind: 'landed' }>[],
): PartitionWriteStatus[] {
  return statuses.map((status) => {
    if (status.kind !== 'written') return status
    for (const { ack } of landed) {
      const committed = ack.committed.find((c) => c.topic === status.topic && c.partition === status.partition)
      if (!committed || committed.range.start !== status.range.start || committed.offset > status.range.end) continue
      const paths = new Set(status.files.map((file) => file.filePath))
      if (!committed.filePaths.every((path) => paths.has(path))) continue
      const gone = new Set(committed.filePaths)
      const { logStartJump: _consumed, ...rest } = status
      return {
        ...rest,
        range: { start: committed.offset, end: status.range.end },
        files: status.files.filter((file) => !gone.has(file.filePath)),
        origin: 'table' as const,
      }
    }
    return status
  })
}

/**
 * withoutLanded for the shared-segment layout: a sender's rotations that a landed round accepted
 * (by id) are taken out when they are the oldest of its status, and each partition's summary then
 * starts where its first remaining range starts (or, with none left, at the end it reached, so
 * it advances nothing). A jump the removed rotations bridged goes with them; one between them and
 * the first range left stays, to bridge from where the landed round ended. Anything else is left
 * as it is: the rotation check decides on it.
 */
export function withoutLandedRotations(
  reports: readonly RotationReport[],
  landed: readonly Extract<Resolution, { kind: 'landed' }>[],
): RotationReport[] {
  const committed = new Set(landed.flatMap(({ ack }) => ack.acceptedRotations))
  if (committed.size === 0) return [...reports]
  return reports.map((report) => {
    let cut = 0
    while (cut < report.rotations.length && committed.has((report.rotations[cut] as RotationStatus).id)) cut++
    if (cut === 0) return report
    const gone = report.rotations.slice(0, cut)
    const rotations = report.rotations.slice(cut)
    const statuses = report.statuses.map((status) => {
      if (status.kind !== 'written') return status
      const mine = (r: RotationStatus) =>
        r.ranges.find((c) => c.topic === status.topic && c.partition === status.partition)
      if (!gone.some(mine)) return status
      const first = rotations.map(mine).find((c) => c !== undefined)
      const start = first?.range.start ?? status.range.end
      const { logStartJump: jump, ...rest } = status
      const keep = jump !== undefined && first !== undefined && jump.to >= start
      return {
        ...rest,
        range: { start, end: status.range.end },
        origin: 'table' as const,
        ...(keep ? { logStartJump: jump } : {}),
      }
    })
    return { ...report, statuses, rotations }
  })
}
