// The committing actor's work: one appendFiles (shared/iceberg/commit) whose per-attempt re-check
// is planCommit. Kept apart from the machine so the machine stays data and this can be tested
// against a real catalog.
import { fromPromise } from 'xstate'
import type { PartitionWriteStatus } from '../protocol/index.ts'
import type { Catalog, TableIdentifier } from '../shared/catalog/index.ts'
import { type AppendRequest, appendFiles, type RetryPolicy } from '../shared/iceberg/commit/index.ts'
import type { SnapshotSummary, TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { FloeError, isFloeError } from '../shared/index.ts'
import type { ObjectStorage } from '../shared/storage/index.ts'
import { type CommitPlan, planCommit } from './commit-content.ts'
import type { CommitRoundActorInput, CommitRoundActorOutput } from './machine-types.ts'
import { floeSummaryKeys } from './progress.ts'
import type { RotationReport } from './rotation-check.ts'
import { resolveCommits, type UnresolvedCommit, withoutLanded, withoutLandedRotations } from './unresolved-commits.ts'

export interface CommitTarget {
  catalog: Catalog
  /** Where manifests and manifest lists go (the table's metadata location). */
  storage: ObjectStorage
  table: TableIdentifier
  group: string
  retry?: Partial<RetryPolicy>
  now?: () => number
  /**
   * Earlier rounds that gave up with their outcome unknown: one that landed meanwhile has its
   * ranges taken out of this round's statuses (withoutLanded), at every attempt's re-check.
   */
  unresolved?: () => readonly UnresolvedCommit[]
}

export interface CommitRoundRequest {
  commitId: string
  statuses: readonly PartitionWriteStatus[]
  /** The senders' shared-segment statuses; none in the per-partition layout. */
  reports?: readonly RotationReport[]
  partial: boolean
  signal?: AbortSignal
  onRetry?: AppendRequest['onRetry']
}

export type CommitRoundResult =
  | {
      kind: 'committed'
      snapshotId: bigint
      plan: CommitPlan
      attempts: number
      /** An attempt whose outcome was unknown had landed: found by the commit id, not redone. */
      foundAfterUnknownOutcome: boolean
      /** The committed snapshot's summary: the table's totals after the round. */
      summary?: SnapshotSummary
    }
  /** Every partition with data was rejected: no snapshot, the ACK tells them to resync. */
  | { kind: 'rejected'; plan: CommitPlan; attempts: number }

/**
 * Commits a round. Retries conflicts, unavailability and unknown outcomes as appendFiles does;
 * throws what it gives up on (FloeError COMMIT_CONFLICT, COMMIT_STATE_UNKNOWN, CATALOG_UNAVAILABLE,
 * or anything fatal): the round then fails and its files stay for the next one.
 */
export async function commitRound(target: CommitTarget, request: CommitRoundRequest): Promise<CommitRoundResult> {
  let plan: CommitPlan | undefined
  let attempts = 0
  const round = {
    group: target.group,
    commitId: request.commitId,
    statuses: request.statuses,
    reports: request.reports ?? [],
    partial: request.partial,
  }
  try {
    const result = await appendFiles({
      catalog: target.catalog,
      storage: target.storage,
      table: target.table,
      commitId: request.commitId,
      commitIdKey: floeSummaryKeys.commitId,
      content: (metadata) => {
        attempts++
        plan = planCommit(metadata, { ...round, ...lessLanded(metadata, target, round) })
        // When the round already landed, appendFiles only asks what it committed: never refuse.
        if (plan.check.accepted.length === 0 && !plan.previous.landed) {
          throw new FloeError('COMMIT_REJECTED', `round ${request.commitId}: every partition with data was rejected`, {
            details: { commitId: request.commitId, rejected: plan.check.rejected.length },
          })
        }
        return plan.content
      },
      ...(target.retry ? { retry: target.retry } : {}),
      ...(target.now ? { now: target.now } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
      ...(request.onRetry ? { onRetry: request.onRetry } : {}),
    })
    if (!plan) throw new FloeError('INVARIANT_BROKEN', `round ${request.commitId} committed without a plan`)
    return {
      kind: 'committed',
      snapshotId: result.snapshot['snapshot-id'],
      plan,
      attempts: result.attempts,
      foundAfterUnknownOutcome: result.foundAfterUnknownOutcome,
      summary: result.snapshot.summary,
    }
  } catch (error) {
    if (isFloeError(error, 'COMMIT_REJECTED') && plan && plan.check.accepted.length === 0) {
      return { kind: 'rejected', plan, attempts }
    }
    throw error
  }
}

function lessLanded(
  metadata: TableMetadata,
  target: CommitTarget,
  round: { statuses: readonly PartitionWriteStatus[]; reports: readonly RotationReport[] },
): { statuses: readonly PartitionWriteStatus[]; reports: readonly RotationReport[] } {
  const earlier = target.unresolved?.() ?? []
  if (earlier.length === 0) return round
  const landed = resolveCommits(metadata, target.group, earlier).resolved.filter((r) => r.kind === 'landed')
  if (landed.length === 0) return round
  return { statuses: withoutLanded(round.statuses, landed), reports: withoutLandedRotations(round.reports, landed) }
}

/**
 * The machine's `commitRound` actor on a real table: `coordinatorMachine.provide({ actors: {
 * commitRound: commitRoundLogic(target) } })`. Stopping the machine aborts the commit loop between
 * attempts (a catalog request already sent runs to its end; its outcome is then found by commit id).
 */
export function commitRoundLogic(
  target: CommitTarget,
  now: () => number = Date.now,
  onUnknown?: (commit: UnresolvedCommit) => void,
) {
  return fromPromise<CommitRoundActorOutput, CommitRoundActorInput>(async ({ input, signal }) => {
    try {
      const result = await commitRound(target, {
        commitId: input.commitId,
        statuses: input.statuses,
        reports: input.reports ?? [],
        partial: input.partial,
        signal,
        onRetry: input.reportRetry,
      })
      return { ...result, committedAt: now() }
    } catch (error) {
      // Gave up while a request may still land: whoever runs the machine looks for it later.
      if (onUnknown && isFloeError(error, 'COMMIT_STATE_UNKNOWN')) {
        const asserted = error.details.assertedSnapshotIds
        onUnknown({
          commitId: input.commitId,
          statuses: input.statuses,
          reports: input.reports ?? [],
          partial: input.partial,
          asserted: Array.isArray(asserted) ? asserted.map((id) => (id === null ? null : String(id))) : [],
          since: now(),
        })
      }
      throw error
    }
  })
}
