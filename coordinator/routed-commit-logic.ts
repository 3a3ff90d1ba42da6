// The machine's `commitRound` actor for a dataset that routes into many tables: commitRoutedRound
// (one commit per table, the ledger after them) with its outcome in the shape the machine, the
// round log and the ACK take from a one-table round. The ledger's commit is the round's snapshot;
// the tables' files are the accepted rotations' (counted as committed only when the ledger moved
// past them, as the ACK names only those).
import { fromPromise } from 'xstate'
import type { ControlLogger, RotationRange } from '../protocol/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'
import { FloeError } from '../shared/index.ts'
import type { CommitPlan } from './commit-content.ts'
import type { AcceptedRotation, ContiguityCheck } from './contiguity.ts'
import type { CommitRoundActorInput, CommitRoundActorOutput } from './machine-types.ts'
import { commitRoutedRound, type RoutedCommitResult, type RoutedCommitTarget, routedRoundAck } from './routed-commit.ts'

/** A routed round's tables that could not be read or did not confirm their commit: the operator's to see. */
export function logRoutedTrouble(logger: ControlLogger, dataset: string, trouble: RoutedRoundTrouble): void {
  logger.warn(
    {
      dataset,
      commitId: trouble.commitId,
      unreadable: trouble.unreadable.slice(0, 10),
      unconfirmed: trouble.unconfirmed.slice(0, 10),
      unreadableTables: trouble.unreadable.length,
      unconfirmedTables: trouble.unconfirmed.length,
    },
    'routed tables not committed this round; their rows are committed by a later one',
  )
}

/** What the round did, for the log: tables that could not be read, or whose commit is not confirmed. */
export interface RoutedRoundTrouble {
  commitId: string
  unreadable: ReadonlyArray<{ table: string; error: string }>
  unconfirmed: ReadonlyArray<{ table: string; error?: string }>
}

export function routedCommitRoundLogic(
  target: RoutedCommitTarget,
  now: () => number = Date.now,
  onTrouble?: (trouble: RoutedRoundTrouble) => void,
) {
  return fromPromise<CommitRoundActorOutput, CommitRoundActorInput>(async ({ input, signal }) => {
    const result = await commitRoutedRound(target, {
      commitId: input.commitId,
      reports: input.reports ?? [],
      signal,
      onRetry: input.reportRetry,
    })
    const unconfirmed = [...result.tables]
      .filter(([, table]) => table.fate.commit === 'unconfirmed')
      .map(([table, { error }]) => ({ table, ...(error === undefined ? {} : { error }) }))
    if (result.unreadable.length > 0 || unconfirmed.length > 0) {
      onTrouble?.({ commitId: input.commitId, unreadable: result.unreadable, unconfirmed })
    }
    const plan = routedPlan(input.commitId, result)
    if (result.ledger.landed && result.ledger.snapshotId !== undefined) {
      return {
        kind: 'committed',
        snapshotId: result.ledger.snapshotId,
        plan,
        attempts: Math.max(1, ...[...result.tables.values()].map((table) => table.attempts)),
        foundAfterUnknownOutcome: false,
        committedAt: now(),
      }
    }
    const pending = result.check.rotations.accepted.length > 0
    if (!pending) return { kind: 'rejected', plan, attempts: 1, committedAt: now() }
    // Tables hold rows the ledger does not vouch for yet: no ACK, so the senders keep their
    // rotations; the next round's tables refuse what they hold and name their floors.
    const failed = unconfirmed.map(({ table, error }) => `${table}${error ? ` (${error})` : ''}`)
    throw new FloeError(
      'CATALOG_UNAVAILABLE',
      `round ${input.commitId}: the ledger did not move${failed.length > 0 ? `; tables not confirmed: ${failed.slice(0, 5).join(', ')}${failed.length > 5 ? `, and ${failed.length - 5} more` : ''}` : ''}`,
      { details: { commitId: input.commitId, unconfirmed: unconfirmed.length } },
    )
  })
}

/**
 * The routed round as a one-table round's plan: accepted are the partitions the ledger moved,
 * rejected carry the ledger's offset and the tables' skip floors, and the accepted rotations are
 * those the ACK names, each with its tables' files.
 */
function routedPlan(commitId: string, result: RoutedCommitResult): CommitPlan {
  const ack = routedRoundAck(commitId, result)
  const named = new Set(ack.acceptedRotations)
  const rotations: AcceptedRotation[] = result.check.rotations.accepted
    .filter((rotation) => named.has(rotation.id))
    .map((rotation) => ({
      id: rotation.id,
      sender: rotation.sender,
      ranges: rotation.ranges.map(({ topic, partition, range }): RotationRange => ({ topic, partition, range })),
      files: rotation.tables.flatMap((part): DataFile[] => [...part.files]),
    }))
  const check: ContiguityCheck = {
    accepted: ack.committed.map(({ topic, partition, range }) => ({
      topic,
      partition,
      range,
      files: [],
      tableOffset: result.ledger.before.get(topic)?.get(partition),
    })),
    rejected: ack.rejected,
    lost: result.check.lost,
    errored: result.check.errored,
    unchanged: result.check.unchanged,
    rotations: {
      accepted: rotations,
      rejected: result.check.rotations.rejected.map(({ id, sender, reason, stoppedBy }) => ({
        id,
        sender,
        reason,
        stoppedBy,
      })),
    },
  }
  return {
    check,
    previous: { progress: result.ledger.before, source: { kind: 'none' }, landed: false },
    offsets: result.ledger.after,
    content: { files: rotations.flatMap((rotation) => [...rotation.files]) },
  }
}
