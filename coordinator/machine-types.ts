// The coordinator machine's types: its input, the inputs and outputs of the actors the runner
// provides, the events it takes and the events it emits (coordinator.machine.ts).

import type { PartitionWriteStatus, Sender, TopicPartition, WriteStatusReport } from '../protocol/index.ts'
import { isFloeError, messageOf } from '../shared/index.ts'
import type { Progress } from '../shared/progress/index.ts'
import type { RoundAck } from './commit-content.ts'
import type { CommitRoundResult } from './commit-round.ts'
import type { LostRecords, RejectedPartition } from './contiguity.ts'
import type { RotationReport } from './rotation-check.ts'
import type { ExpectedPartitions, IgnoredStatus, RoundTracker } from './round-tracker.ts'

export interface CoordinatorInput {
  dataset: string
  /** The dataset's consumer group: names the progress marker. */
  group: string
  /** START-COMMIT to END-COMMIT: how long participants write before the cut. */
  commitIntervalMs: number
  /** END-COMMIT to the commit: how long to wait for every partition before committing what answered. */
  commitTimeoutMs: number
  /** Wait after a failed round, doubled per consecutive failure (default 1000, capped at the interval). */
  failureBackoffMs?: number
}

// ---- what the runner's actors take and give ------------------------------------------------

export interface StartRoundInput {
  dataset: string
  group: string
}
/** The starting actor loads the table, reads its progress, picks a commit id and sends START-COMMIT. */
export interface StartRoundOutput {
  commitId: string
  /** Partitions of the dataset's topics now: the ones that must answer. */
  expected: ExpectedPartitions
  /** The table's next offsets, as START-COMMIT carried them. */
  tableOffsets: Progress
  /** When START-COMMIT was sent. */
  startedAt: number
  /** A routed dataset's route fingerprint: statuses of another route are ignored. */
  route?: string
}
export interface EndRoundInput {
  dataset: string
  group: string
  commitId: string
}
export interface EndRoundOutput {
  /** When END-COMMIT was sent: the commit timeout counts from here. */
  endedAt: number
}
export interface CommitRetry {
  attempt: number
  reason: 'conflict' | 'unknown' | 'unavailable'
  waitMs: number
}
export interface CommitRoundActorInput {
  dataset: string
  group: string
  commitId: string
  statuses: readonly PartitionWriteStatus[]
  /** The senders' shared-segment statuses (none in the per-partition layout). */
  reports?: readonly RotationReport[]
  partial: boolean
  /** Call for every lost attempt (appendFiles' onRetry): the machine reports it without leaving committing. */
  reportRetry: (retry: CommitRetry) => void
}
export type CommitRoundActorOutput = CommitRoundResult & { committedAt: number }
export interface AckRoundInput {
  dataset: string
  group: string
  ack: RoundAck
}
export interface AckRoundOutput {
  ackedAt: number
}

// ---- events --------------------------------------------------------------------------------

export type CoordinatorEvent =
  /** A participant's WRITE-STATUS, decoded. */
  | { type: 'control.write-status'; report: WriteStatusReport; receivedAt: number }
  /** Someone asked for a round now (a draining worker, an operator): skips the commit interval. */
  | { type: 'control.commit-requested'; requestedBy: string; receivedAt: number }
  /** Partition 0 was revoked, or the worker shuts down. */
  | { type: 'coordinator.stop'; reason: string }
  /** Sent by the committing actor (through `reportRetry`) when an attempt is lost. */
  | ({ type: 'commit.retrying' } & CommitRetry)

export type Phase = 'starting' | 'ending' | 'committing' | 'acking'

export interface PhaseDurations {
  /** START-COMMIT sent -> END-COMMIT sent. */
  openMs: number
  /** END-COMMIT sent -> every answer, or the timeout. */
  collectingMs: number
  /** -> the catalog's answer (0 for a round with nothing to commit). */
  committingMs: number
  /** -> ACK-COMMIT sent. */
  ackingMs: number
}

export type RoundOutcome =
  | { kind: 'committed'; commitId: string; snapshotId: bigint }
  /** Nothing to commit: acknowledged without a snapshot. */
  | { kind: 'empty'; commitId: string }
  /** Everything with data was rejected: acknowledged without a snapshot, participants resync. */
  | { kind: 'rejected'; commitId: string }
  | { kind: 'failed'; commitId: string | undefined; phase: Phase; error: FailureSummary }

export interface FailureSummary {
  code: string | undefined
  retryable: boolean
  message: string
}

/** What the machine emits (`actor.on(type, listener)`): for `floe observe`, logs and metrics. */
export type CoordinatorEmitted =
  | { type: 'round.started'; commitId: string; expected: ExpectedPartitions; tableOffsets: Progress; at: number }
  | { type: 'round.ended'; commitId: string; at: number; openMs: number }
  | { type: 'round.status-recorded'; commitId: string; sender: Sender; partitions: TopicPartition[]; answered: number }
  | { type: 'round.status-ignored'; commitId: string | undefined; sender: Sender; ignored: IgnoredStatus[] }
  | {
      type: 'round.collected'
      commitId: string
      partial: boolean
      answered: number
      missing: TopicPartition[]
      toCommit: boolean
      collectingMs: number
    }
  | ({ type: 'commit.retrying'; commitId: string } & CommitRetry)
  | {
      type: 'round.committed'
      commitId: string
      snapshotId: bigint | undefined
      accepted: number
      rejected: RejectedPartition[]
      lost: LostRecords[]
      attempts: number
      foundAfterUnknownOutcome: boolean
      committingMs: number
    }
  | {
      type: 'round.completed'
      commitId: string
      outcome: RoundOutcome
      phases: PhaseDurations
      totalMs: number
    }
  | {
      type: 'round.failed'
      commitId: string | undefined
      phase: Phase
      error: FailureSummary
      consecutiveFailures: number
    }
  | { type: 'coordinator.stopped'; reason: string; commitId: string | undefined }

export interface RoundTiming {
  startedAt: number
  endedAt: number
  collectedAt: number
  committedAt: number
}

export interface CoordinatorContext {
  dataset: string
  group: string
  commitIntervalMs: number
  commitTimeoutMs: number
  failureBackoffMs: number
  /** The round in flight (from START to ACK). */
  round: RoundTracker | undefined
  /** The table's offsets as START-COMMIT carried them. */
  tableOffsets: Progress
  timing: RoundTiming
  /** The latest time the machine has heard of (events and actor outputs carry it). */
  now: number
  /** The round closed on the timeout with partitions missing. */
  partial: boolean
  commit: CommitRoundActorOutput | undefined
  ack: RoundAck | undefined
  /** A round was asked for: the next `open` ends at once. */
  requested: boolean
  consecutiveFailures: number
  roundsCompleted: number
  lastOutcome: RoundOutcome | undefined
}

export function failureSummary(error: unknown): FailureSummary {
  return isFloeError(error)
    ? { code: error.code, retryable: error.retryable, message: error.message }
    : { code: undefined, retryable: false, message: messageOf(error) }
}

export const zeroTiming: RoundTiming = { startedAt: 0, endedAt: 0, collectedAt: 0, committedAt: 0 }

/** How long each phase of a round took, from its timing and the moment it was ACKed. */
export function phaseDurations(timing: RoundTiming, ackedAt: number): PhaseDurations {
  return {
    openMs: timing.endedAt - timing.startedAt,
    collectingMs: timing.collectedAt - timing.endedAt,
    committingMs: timing.committedAt - timing.collectedAt,
    ackingMs: ackedAt - timing.committedAt,
  }
}
