// What a round commits and what its ACK says, from the statuses that answered and the table as
// the commit loop just loaded it. `planCommit` is the body of appendFiles' `content` callback
// (shared/iceberg/commit), so the contiguity check runs against every freshly loaded table. Pure.

import type { OffsetRange, PartitionWriteStatus } from '../protocol/index.ts'
import { type AppendContent, findCommittedSnapshot } from '../shared/iceberg/commit/index.ts'
import type { TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { FloeError } from '../shared/index.ts'
import { stringifyJson } from '../shared/json/index.ts'
import type { Progress } from '../shared/progress/index.ts'
import {
  acceptedFiles,
  type ContiguityCheck,
  emptyCheck,
  type LostRecords,
  type RejectedPartition,
} from './contiguity.ts'
import {
  decodeProgress,
  encodeProgress,
  floeSummaryKeys,
  lostRecordsKey,
  mergeProgress,
  offsetsKey,
  progressForRound,
  type RoundProgress,
} from './progress.ts'
import { checkRound, landedCandidates, type RotationReport } from './rotation-check.ts'

export interface RoundToCommit {
  group: string
  commitId: string
  /** The statuses that count (RoundTracker's answeredStatuses). */
  statuses: readonly PartitionWriteStatus[]
  /** The senders' shared-segment statuses (RoundTracker's answeredReports); none in the per-partition layout. */
  reports?: readonly RotationReport[]
  /** The round timed out: some partitions did not answer. */
  partial: boolean
}

export interface CommitPlan {
  check: ContiguityCheck
  /** The table's progress the check used, and where it came from. */
  previous: RoundProgress
  /** The cumulative marker after this commit. */
  offsets: Progress
  /** For appendFiles. Meaningful only when something was accepted. */
  content: AppendContent
}

/**
 * Checks the round against `metadata` and builds the append: the accepted files, the snapshot
 * summary (commit id, cumulative marker, round facts) and the marker again as a table property
 * (invariant 8). The same file listed twice would land its rows twice: INVARIANT_BROKEN.
 */
export function planCommit(metadata: TableMetadata, round: RoundToCommit): CommitPlan {
  const reports = round.reports ?? []
  const previous = progressForRound(metadata, round.group, round.commitId, [
    ...round.statuses,
    ...landedCandidates(reports),
  ])
  let check = checkRound(previous.progress, round.statuses, reports)
  let offsets = advanced(previous.progress, check)
  const landedMarker = previous.landed && reports.length > 0 ? markerOf(metadata, round) : undefined
  if (landedMarker && encodeProgress(offsets) !== encodeProgress(landedMarker)) {
    // The table before the landed round was rebuilt wrongly (a stale range ending at the table's
    // offset looked committed), and with rotations the ACK could name one accepted that was not.
    // It names none then: every partition goes to the landed marker, where it would have gone
    // committed or rejected alike.
    check = landedFallback(check, landedMarker)
    offsets = landedMarker
  }
  // The union of the accepted rotations' files (all-or-nothing each) and the per-partition ones.
  const files = acceptedFiles(check)
  const paths = new Set<string>()
  for (const file of files) {
    if (paths.has(file.filePath)) {
      throw new FloeError('INVARIANT_BROKEN', `round ${round.commitId} lists data file ${file.filePath} twice`, {
        details: { commitId: round.commitId, filePath: file.filePath },
      })
    }
    paths.add(file.filePath)
  }
  const marker = encodeProgress(offsets)
  const summary: Record<string, string> = {
    [floeSummaryKeys.commitId]: round.commitId,
    [offsetsKey(round.group)]: marker,
    [floeSummaryKeys.roundPartitions]: String(check.accepted.length),
  }
  if (check.rejected.length > 0) summary[floeSummaryKeys.roundRejected] = String(check.rejected.length)
  if (round.partial) summary[floeSummaryKeys.roundPartial] = 'true'
  if (check.lost.length > 0) summary[lostRecordsKey(round.group)] = encodeLost(check.lost)
  return { check, previous, offsets, content: { files, summary, properties: { [offsetsKey(round.group)]: marker } } }
}

/** The marker the round's own snapshot wrote. */
function markerOf(metadata: TableMetadata, round: RoundToCommit): Progress | undefined {
  const snapshot = findCommittedSnapshot(metadata, floeSummaryKeys.commitId, round.commitId)
  const marker = snapshot?.summary[offsetsKey(round.group)]
  return marker === undefined ? undefined : decodeProgress(marker)
}

function landedFallback(wrong: ContiguityCheck, marker: Progress): ContiguityCheck {
  const check = emptyCheck()
  check.errored.push(...wrong.errored)
  check.unchanged.push(...wrong.unchanged)
  for (const { topic, partition, range } of [...wrong.accepted, ...wrong.rejected]) {
    const tableOffset = marker.get(topic)?.get(partition)
    if (!check.rejected.some((r) => r.topic === topic && r.partition === partition)) {
      check.rejected.push({ topic, partition, reason: 'behind-table', tableOffset, range })
    }
  }
  return check
}

function advanced(progress: Progress, check: ContiguityCheck): Progress {
  return mergeProgress(
    progress,
    check.accepted.map(({ topic, partition, range }) => ({ topic, partition, offset: range.end })),
  )
}

function encodeLost(lost: readonly LostRecords[]): string {
  const byTopic: Record<string, Record<string, bigint>> = {}
  for (const { topic, partition, count } of lost) {
    const partitions = byTopic[topic] ?? {}
    partitions[String(partition)] = count
    byTopic[topic] = partitions
  }
  return stringifyJson(byTopic)
}

export interface CommittedPartition {
  topic: string
  partition: number
  range: OffsetRange
  /** The table's next offset for the partition now: where its participant continues. */
  offset: bigint
  /**
   * The data files committed for the partition: its participant may delete their local copies.
   * None for a partition committed by rotations: their files hold many partitions, and the ACK
   * names the rotations instead.
   */
  filePaths: string[]
}

/**
 * The ACK-COMMIT of a round. Partitions it does not name (no answer, an `error`, nothing to
 * commit) keep their files for the next round.
 */
export interface RoundAck {
  commitId: string
  /** The snapshot the round committed; undefined when it committed nothing. */
  snapshotId: bigint | undefined
  committed: CommittedPartition[]
  rejected: RejectedPartition[]
  lost: LostRecords[]
  /** The ids of the rotations committed whole (shared-segment layout): their participants delete them. */
  acceptedRotations: string[]
}

/** The ACK of a round; `check` undefined for a round that had nothing to commit. */
export function roundAck(commitId: string, snapshotId: bigint | undefined, check?: ContiguityCheck): RoundAck {
  return {
    commitId,
    snapshotId,
    committed:
      snapshotId === undefined || !check
        ? []
        : check.accepted.map(({ topic, partition, range, files }) => ({
            topic,
            partition,
            range,
            offset: range.end,
            filePaths: files.map((file) => file.filePath),
          })),
    rejected: check?.rejected ?? [],
    lost: snapshotId === undefined ? [] : (check?.lost ?? []),
    acceptedRotations:
      snapshotId === undefined || !check ? [] : check.rotations.accepted.map((rotation) => rotation.id),
  }
}
