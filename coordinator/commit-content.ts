// What a round commits and what its ACK says, from the statuses that answered and the table as
// the commit loop just loaded it. `planCommit` is the body of appendFiles' `content` callback
// (shared/iceberg/commit), so the contiguity check runs against every freshly loaded table. Pure.

import type { OffsetRange, PartitionWriteStatus } from '../protocol/index.ts'
import type { AppendContent } from '../shared/iceberg/commit/index.ts'
import type { TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { FloeError } from '../shared/index.ts'
import { stringifyJson } from '../shared/json/index.ts'
import type { Progress } from '../shared/progress/index.ts'
import { type ContiguityCheck, checkContiguity, type LostRecords, type RejectedPartition } from './contiguity.ts'
import {
  encodeProgress,
  floeSummaryKeys,
  lostRecordsKey,
  mergeProgress,
  offsetsKey,
  progressForRound,
  type RoundProgress,
} from './progress.ts'

export interface RoundToCommit {
  group: string
  commitId: string
  /** The statuses that count (RoundTracker's answeredStatuses). */
  statuses: readonly PartitionWriteStatus[]
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
  const previous = progressForRound(metadata, round.group, round.commitId, round.statuses)
  const check = checkContiguity(previous.progress, round.statuses)
  const offsets = mergeProgress(
    previous.progress,
    check.accepted.map(({ topic, partition, range }) => ({ topic, partition, offset: range.end })),
  )
  const files = check.accepted.flatMap((accepted) => accepted.files)
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
  /** The data files committed for the partition: its participant may delete their local copies. */
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
  /** The ids of the rotations committed whole (shared-segment layout). */
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
    acceptedRotations: [],
  }
}
