// The coordinator of one dataset as a state machine (docs/design.md "The protocol"): idle -> starting
// (START-COMMIT) -> open (the commit interval) -> ending (END-COMMIT) -> collecting (WRITE-STATUS)
// -> committing (one Iceberg append) -> acking (ACK-COMMIT) -> idle; `coordinator.stop` from any
// state ends it. Actions only assign and emit; every effect is an actor the runner provides with
// `coordinatorMachine.provide({ actors })`, and every time comes in through an event or an
// actor's output, so a round replays the same way in a test.
import { and, assign, emit, enqueueActions, fromPromise, setup } from 'xstate'
import { FloeError } from '../shared/index.ts'
import { roundAck } from './commit-content.ts'
import {
  type AckRoundInput,
  type AckRoundOutput,
  type CommitRetry,
  type CommitRoundActorInput,
  type CommitRoundActorOutput,
  type CoordinatorContext,
  type CoordinatorEmitted,
  type CoordinatorEvent,
  type CoordinatorInput,
  type EndRoundInput,
  type EndRoundOutput,
  failureSummary,
  type Phase,
  phaseDurations,
  type RoundOutcome,
  type StartRoundInput,
  type StartRoundOutput,
  zeroTiming,
} from './machine-types.ts'
import {
  answeredPartitions,
  answeredReports,
  answeredStatuses,
  hasDataToCommit,
  isRoundComplete,
  missingPartitions,
  openRound,
  recordWriteStatus,
} from './round-tracker.ts'

function notProvided(name: string): never {
  throw new FloeError('CONFIG_INVALID', `coordinator actor ${name} was not provided: use coordinatorMachine.provide`)
}

export const coordinatorMachine = setup({
  types: {
    context: {} as CoordinatorContext,
    events: {} as CoordinatorEvent,
    input: {} as CoordinatorInput,
    emitted: {} as CoordinatorEmitted,
  },
  actors: {
    startRound: fromPromise<StartRoundOutput, StartRoundInput>(async () => notProvided('startRound')),
    endRound: fromPromise<EndRoundOutput, EndRoundInput>(async () => notProvided('endRound')),
    commitRound: fromPromise<CommitRoundActorOutput, CommitRoundActorInput>(async () => notProvided('commitRound')),
    ackRound: fromPromise<AckRoundOutput, AckRoundInput>(async () => notProvided('ackRound')),
  },
  guards: {
    noFailures: ({ context }) => context.consecutiveFailures === 0,
    roundRequested: ({ context }) => context.requested,
    roundComplete: ({ context }) => context.round !== undefined && isRoundComplete(context.round),
    hasDataToCommit: ({ context }) => context.round !== undefined && hasDataToCommit(context.round),
  },
  delays: {
    commitInterval: ({ context }) => context.commitIntervalMs,
    commitTimeout: ({ context }) => context.commitTimeoutMs,
    failureBackoff: ({ context }) =>
      Math.min(
        context.failureBackoffMs * 2 ** Math.max(0, context.consecutiveFailures - 1),
        Math.max(context.commitIntervalMs, context.failureBackoffMs),
      ),
  },
  actions: {
    noteRequest: assign({ requested: true }),
    fail: enqueueActions(({ context, event, enqueue }, params: { phase: Phase }) => {
      const error = failureSummary((event as { error?: unknown }).error)
      const consecutiveFailures = context.consecutiveFailures + 1
      const commitId = context.round?.commitId
      enqueue.assign({
        consecutiveFailures,
        lastOutcome: { kind: 'failed', commitId, phase: params.phase, error },
      })
      enqueue.emit({ type: 'round.failed', commitId, phase: params.phase, error, consecutiveFailures })
    }),
    recordWriteStatus: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'control.write-status') return
      const { report, receivedAt } = event
      const now = Math.max(context.now, receivedAt)
      if (!context.round) {
        enqueue.emit({
          type: 'round.status-ignored',
          commitId: undefined,
          sender: report.sender,
          ignored: report.statuses.map(({ partition }) => ({ partition, reason: 'other-commit' as const })),
        })
        return
      }
      const result = recordWriteStatus(context.round, report)
      enqueue.assign({ round: result.tracker, now })
      if (result.recorded.length > 0) {
        enqueue.emit({
          type: 'round.status-recorded',
          commitId: context.round.commitId,
          sender: report.sender,
          partitions: result.recorded,
          answered: answeredPartitions(result.tracker).length,
        })
      }
      if (result.ignored.length > 0) {
        enqueue.emit({
          type: 'round.status-ignored',
          commitId: context.round.commitId,
          sender: report.sender,
          ignored: result.ignored,
        })
      }
    }),
    ignoreLateStatus: emit(({ context, event }) => {
      const report = event.type === 'control.write-status' ? event.report : undefined
      const late = report?.commitId === context.round?.commitId
      return {
        type: 'round.status-ignored' as const,
        commitId: context.round?.commitId,
        sender: report?.sender ?? { workerId: '', memberId: '', generation: -1 },
        ignored: (report?.statuses ?? []).map(({ topic, partition }) => ({
          topic,
          partition,
          reason: late ? ('late' as const) : ('other-commit' as const),
        })),
      }
    }),
    closeCollection: enqueueActions(({ context, enqueue }, params: { timedOut: boolean }) => {
      const round = context.round
      if (!round) return
      const collectedAt = params.timedOut ? context.timing.endedAt + context.commitTimeoutMs : context.now
      const missing = missingPartitions(round)
      const partial = params.timedOut && missing.length > 0
      enqueue.assign({
        partial,
        now: Math.max(context.now, collectedAt),
        // A round with nothing to commit "commits" in no time.
        timing: { ...context.timing, collectedAt, committedAt: collectedAt },
      })
      enqueue.emit({
        type: 'round.collected',
        commitId: round.commitId,
        partial,
        answered: answeredPartitions(round).length,
        missing,
        toCommit: hasDataToCommit(round),
        collectingMs: collectedAt - context.timing.endedAt,
      })
    }),
    prepareEmptyAck: assign({
      ack: ({ context }) => roundAck(context.round?.commitId ?? '', undefined),
      commit: undefined,
    }),
    reportRetry: emit(({ context, event }) => {
      const retry = event as Extract<CoordinatorEvent, { type: 'commit.retrying' }>
      return {
        type: 'commit.retrying' as const,
        commitId: context.round?.commitId ?? '',
        attempt: retry.attempt,
        reason: retry.reason,
        waitMs: retry.waitMs,
      }
    }),
  },
}).createMachine({
  id: 'coordinator',
  context: ({ input }) => ({
    dataset: input.dataset,
    group: input.group,
    commitIntervalMs: input.commitIntervalMs,
    commitTimeoutMs: input.commitTimeoutMs,
    failureBackoffMs: input.failureBackoffMs ?? 1000,
    round: undefined,
    tableOffsets: new Map(),
    timing: zeroTiming,
    now: 0,
    partial: false,
    commit: undefined,
    ack: undefined,
    requested: false,
    consecutiveFailures: 0,
    roundsCompleted: 0,
    lastOutcome: undefined,
  }),
  initial: 'idle',
  on: {
    'coordinator.stop': {
      target: '.stopped',
      actions: emit(({ context, event }) => ({
        type: 'coordinator.stopped' as const,
        reason: event.reason,
        commitId: context.round?.commitId,
      })),
    },
    'control.commit-requested': { actions: 'noteRequest' },
    'control.write-status': { actions: 'ignoreLateStatus' },
  },
  states: {
    idle: {
      always: { guard: 'noFailures', target: 'starting' },
      after: { failureBackoff: 'starting' },
      on: { 'control.commit-requested': { target: 'starting', actions: 'noteRequest' } },
    },
    starting: {
      entry: assign({ round: undefined, commit: undefined, ack: undefined, partial: false, timing: zeroTiming }),
      invoke: {
        id: 'startRound',
        src: 'startRound',
        input: ({ context }) => ({ dataset: context.dataset, group: context.group }),
        onDone: {
          target: 'open',
          actions: [
            assign(({ context, event }) => ({
              round: openRound(event.output.commitId, event.output.expected, event.output.route),
              tableOffsets: event.output.tableOffsets,
              timing: { ...zeroTiming, startedAt: event.output.startedAt },
              now: Math.max(context.now, event.output.startedAt),
            })),
            emit(({ event }) => ({
              type: 'round.started' as const,
              commitId: event.output.commitId,
              expected: event.output.expected,
              tableOffsets: event.output.tableOffsets,
              at: event.output.startedAt,
            })),
          ],
        },
        onError: { target: 'idle', actions: { type: 'fail', params: { phase: 'starting' } } },
      },
    },
    open: {
      always: { guard: 'roundRequested', target: 'ending' },
      after: { commitInterval: 'ending' },
      on: {
        'control.commit-requested': { target: 'ending' },
        'control.write-status': { actions: 'recordWriteStatus' },
      },
    },
    ending: {
      entry: assign({ requested: false }),
      invoke: {
        id: 'endRound',
        src: 'endRound',
        input: ({ context }) => ({
          dataset: context.dataset,
          group: context.group,
          commitId: context.round?.commitId ?? '',
        }),
        onDone: {
          target: 'collecting',
          actions: [
            assign(({ context, event }) => ({
              timing: { ...context.timing, endedAt: event.output.endedAt },
              now: Math.max(context.now, event.output.endedAt),
            })),
            emit(({ context }) => ({
              type: 'round.ended' as const,
              commitId: context.round?.commitId ?? '',
              at: context.timing.endedAt,
              openMs: context.timing.endedAt - context.timing.startedAt,
            })),
          ],
        },
        onError: { target: 'idle', actions: { type: 'fail', params: { phase: 'ending' } } },
      },
      // Answers can beat the producer's acknowledgement of END-COMMIT.
      on: { 'control.write-status': { actions: 'recordWriteStatus' } },
    },
    collecting: {
      always: [
        {
          guard: and(['roundComplete', 'hasDataToCommit']),
          target: 'committing',
          actions: { type: 'closeCollection', params: { timedOut: false } },
        },
        {
          guard: 'roundComplete',
          target: 'acking',
          actions: [{ type: 'closeCollection', params: { timedOut: false } }, 'prepareEmptyAck'],
        },
      ],
      after: {
        commitTimeout: [
          {
            guard: 'hasDataToCommit',
            target: 'committing',
            actions: { type: 'closeCollection', params: { timedOut: true } },
          },
          { target: 'acking', actions: [{ type: 'closeCollection', params: { timedOut: true } }, 'prepareEmptyAck'] },
        ],
      },
      on: { 'control.write-status': { actions: 'recordWriteStatus' } },
    },
    committing: {
      invoke: {
        id: 'commitRound',
        src: 'commitRound',
        input: ({ context, self }) => ({
          dataset: context.dataset,
          group: context.group,
          commitId: context.round?.commitId ?? '',
          statuses: context.round ? answeredStatuses(context.round) : [],
          reports: context.round ? answeredReports(context.round) : [],
          partial: context.partial,
          reportRetry: (retry: CommitRetry) => self.send({ type: 'commit.retrying', ...retry }),
        }),
        onDone: {
          target: 'acking',
          actions: [
            assign(({ context, event }) => {
              const output = event.output
              const snapshotId = output.kind === 'committed' ? output.snapshotId : undefined
              return {
                commit: output,
                ack: roundAck(context.round?.commitId ?? '', snapshotId, output.plan.check),
                timing: { ...context.timing, committedAt: output.committedAt },
                now: Math.max(context.now, output.committedAt),
              }
            }),
            emit(({ context, event }) => {
              const output = event.output
              return {
                type: 'round.committed' as const,
                commitId: context.round?.commitId ?? '',
                snapshotId: output.kind === 'committed' ? output.snapshotId : undefined,
                accepted: output.plan.check.accepted.length,
                rejected: output.plan.check.rejected,
                lost: output.kind === 'committed' ? output.plan.check.lost : [],
                attempts: output.attempts,
                foundAfterUnknownOutcome: output.kind === 'committed' && output.foundAfterUnknownOutcome,
                committingMs: output.committedAt - context.timing.collectedAt,
              }
            }),
          ],
        },
        // The files stay with their participants; the next round reports them again.
        onError: { target: 'idle', actions: { type: 'fail', params: { phase: 'committing' } } },
      },
      on: {
        // Targetless: the committing actor keeps running through its retries.
        'commit.retrying': { actions: 'reportRetry' },
      },
    },
    acking: {
      invoke: {
        id: 'ackRound',
        src: 'ackRound',
        input: ({ context }) => ({
          dataset: context.dataset,
          group: context.group,
          ack: context.ack ?? roundAck(context.round?.commitId ?? '', undefined),
        }),
        onDone: {
          target: 'idle',
          actions: enqueueActions(({ context, event, enqueue }) => {
            const commitId = context.round?.commitId ?? ''
            const ackedAt = event.output.ackedAt
            const commit = context.commit
            const outcome: RoundOutcome =
              commit?.kind === 'committed'
                ? { kind: 'committed', commitId, snapshotId: commit.snapshotId }
                : commit?.kind === 'rejected'
                  ? { kind: 'rejected', commitId }
                  : { kind: 'empty', commitId }
            enqueue.assign({
              lastOutcome: outcome,
              consecutiveFailures: 0,
              roundsCompleted: context.roundsCompleted + 1,
              now: Math.max(context.now, ackedAt),
            })
            enqueue.emit({
              type: 'round.completed',
              commitId,
              outcome,
              phases: phaseDurations(context.timing, ackedAt),
              totalMs: ackedAt - context.timing.startedAt,
            })
          }),
        },
        // The commit stands; participants learn the table's offsets from the next START-COMMIT.
        onError: { target: 'idle', actions: { type: 'fail', params: { phase: 'acking' } } },
      },
    },
    stopped: { type: 'final' },
  },
})
