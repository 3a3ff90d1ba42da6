// What one round did, gathered from the machine's emitted events for the round's single log line
// and its metrics (the runner, dataset-coordinator.ts, feeds it). Pure: a fold over events.
import type { TopicPartition } from '../protocol/index.ts'
import { acceptedFiles, type LostRecords, type RejectedPartition } from './contiguity.ts'
import type { CoordinatorEmitted, FailureSummary, PhaseDurations, Phase as RoundPhase } from './machine-types.ts'
import type { Resolution } from './unresolved-commits.ts'

export interface RoundReport {
  commitId: string | undefined
  /** Partitions of the topics when the round started: the ones that had to answer. */
  partitionCount: number | undefined
  /** The dataset reads several topics: a missing partition is named with its topic. */
  severalTopics: boolean
  answered: number | undefined
  missing: TopicPartition[]
  /** The timeout cut the round short. */
  partial: boolean
  accepted: number
  rejected: RejectedPartition[]
  lost: LostRecords[]
  /** Commit attempts (1 when the first won); 0 when nothing was committed. */
  attempts: number
  /** An attempt whose outcome was unknown had landed: found by the commit id, not made again. */
  foundAfterUnknownOutcome: boolean
  /** Statuses the round did not count (other commit, older generation, late, ...). */
  ignored: number
  /** Records in the accepted files (the runner sets it from the commit's plan). */
  recordsCommitted: bigint
}

export function newRoundReport(commitId?: string): RoundReport {
  return {
    commitId,
    partitionCount: undefined,
    severalTopics: false,
    answered: undefined,
    missing: [],
    partial: false,
    accepted: 0,
    rejected: [],
    lost: [],
    attempts: 0,
    foundAfterUnknownOutcome: false,
    ignored: 0,
    recordsCommitted: 0n,
  }
}

/** The report after `event`; a `round.started` begins a new one. */
export function foldRoundEvent(report: RoundReport, event: CoordinatorEmitted): RoundReport {
  switch (event.type) {
    case 'round.started':
      return {
        ...newRoundReport(event.commitId),
        partitionCount: [...event.expected.values()].reduce((sum, count) => sum + count, 0),
        severalTopics: event.expected.size > 1,
      }
    case 'round.status-ignored':
      return { ...report, ignored: report.ignored + event.ignored.length }
    case 'round.collected':
      return { ...report, answered: event.answered, missing: event.missing, partial: event.partial }
    case 'round.committed':
      return {
        ...report,
        accepted: event.accepted,
        rejected: event.rejected,
        lost: event.lost,
        attempts: event.attempts,
        foundAfterUnknownOutcome: event.foundAfterUnknownOutcome,
      }
    default:
      return report
  }
}

/** Total records a round lost to retention. */
export function lostRecordCount(report: RoundReport): bigint {
  return report.lost.reduce((sum, lost) => sum + lost.count, 0n)
}

function baseFields(dataset: string, report: RoundReport): Record<string, unknown> {
  return {
    dataset,
    commitId: report.commitId,
    partitions: report.partitionCount,
    answered: report.answered,
    // one topic: its partition numbers, as the line always said them; several: `topic:partition`
    missing: report.missing.map(({ topic, partition }) => (report.severalTopics ? `${topic}:${partition}` : partition)),
    partial: report.partial,
    accepted: report.accepted,
    rejected: report.rejected.map(({ topic, partition, reason, tableOffset, range }) => ({
      ...(report.severalTopics ? { topic } : {}),
      partition,
      reason,
      tableOffset: tableOffset?.toString(),
      range: `${range.start}-${range.end}`,
    })),
    ignoredStatuses: report.ignored,
  }
}

/** The log line of a finished round (JSON-safe: ids and counts past 2^53 as strings). */
export function completedRoundFields(
  dataset: string,
  report: RoundReport,
  completed: Extract<CoordinatorEmitted, { type: 'round.completed' }>,
): Record<string, unknown> {
  const { outcome } = completed
  return {
    ...baseFields(dataset, report),
    outcome: outcome.kind,
    snapshotId: outcome.kind === 'committed' ? outcome.snapshotId.toString() : undefined,
    records: report.recordsCommitted.toString(),
    lostRecords: report.lost.length > 0 ? lostRecordCount(report).toString() : undefined,
    attempts: report.attempts,
    ...(report.foundAfterUnknownOutcome ? { foundAfterUnknownOutcome: true } : {}),
    phasesMs: phaseFields(completed.phases),
    totalMs: completed.totalMs,
  }
}

/** The log line of a failed round. */
export function failedRoundFields(
  dataset: string,
  report: RoundReport,
  failed: { commitId: string | undefined; phase: RoundPhase; error: FailureSummary; consecutiveFailures: number },
): Record<string, unknown> {
  return {
    // A round that failed to start has no commit id: the report still holds the previous round's.
    ...(failed.phase === 'starting'
      ? { ...baseFields(dataset, newRoundReport()), commitId: undefined }
      : baseFields(dataset, { ...report, commitId: failed.commitId ?? report.commitId })),
    outcome: 'failed',
    phase: failed.phase,
    code: failed.error.code,
    retryable: failed.error.retryable,
    error: failed.error.message,
    consecutiveFailures: failed.consecutiveFailures,
  }
}

function phaseFields(phases: PhaseDurations): Record<string, number> {
  return {
    open: phases.openMs,
    collecting: phases.collectingMs,
    committing: phases.committingMs,
    acking: phases.ackingMs,
  }
}

/** The log line of a round found committed after it gave up with its outcome unknown. */
export function lateRoundFields(
  dataset: string,
  landed: Extract<Resolution, { kind: 'landed' }>,
  now: number,
): { records: string } & Record<string, unknown> {
  let records = 0n
  for (const file of acceptedFiles(landed.plan.check)) records += file.recordCount
  return {
    dataset,
    commitId: landed.commit.commitId,
    outcome: 'committed',
    late: true,
    snapshotId: landed.snapshotId.toString(),
    partitions: landed.plan.check.accepted.length,
    records: records.toString(),
    unknownForMs: now - landed.commit.since,
  }
}

/** The phases as the `floe_round_phase_seconds` histogram labels them. */
export function phaseSeconds(phases: PhaseDurations): Array<{ phase: string; seconds: number }> {
  return Object.entries(phaseFields(phases)).map(([phase, ms]) => ({ phase, seconds: ms / 1000 }))
}
