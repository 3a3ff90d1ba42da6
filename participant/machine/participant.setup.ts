// The participant machine's vocabulary (participant.machine.ts holds the chart): its types, the
// actors the runner provides (stubs here), the guards, the delay and the actions. Actions only
// assign and emit; every effect is an actor.
import { assign, enqueueActions, fromCallback, fromPromise, or, setup, stateIn } from 'xstate'
import type { PartitionWriteStatus } from '../../protocol/index.ts'
import { FloeError } from '../../shared/index.ts'
import { committedOurs, isOutOfLine, jumpAhead } from './line.ts'
import type {
  AcknowledgeInput,
  FlushInput,
  HoldInput,
  ParticipantContext,
  ParticipantEmitted,
  ParticipantEvent,
  ParticipantInput,
  PartitionRef,
  RevokeInput,
  SendStatusInput,
  SyncInput,
  SyncRequest,
  SyncResult,
} from './types.ts'

function notProvided(name: string): never {
  throw new FloeError('CONFIG_INVALID', `participant actor ${name} was not provided: use participantMachine.provide`)
}

export const ref = (context: ParticipantContext): PartitionRef => ({
  dataset: context.dataset,
  topic: context.topic,
  partition: context.partition,
})

export function committedParams(event: ParticipantEvent): {
  commitId: string
  offset: bigint
  filePaths: readonly string[]
} {
  return event.type === 'control.commit-acked' && event.outcome.kind === 'committed'
    ? { commitId: event.commitId, offset: event.outcome.offset, filePaths: event.outcome.filePaths }
    : { commitId: '', offset: 0n, filePaths: [] }
}

/** Ingest is synced: a flush may start. */
export const ingestReady = or([
  stateIn('#participant.active.ingest.writing'),
  stateIn('#participant.active.ingest.paused'),
])
/** No round is being flushed or sent: a resync may start. */
export const commitQuiet = or([
  stateIn('#participant.active.commit.idle'),
  stateIn('#participant.active.commit.reported'),
])
/** A sync runs or waits to retry. */
export const syncingNow = or([
  stateIn('#participant.active.ingest.syncing'),
  stateIn('#participant.active.ingest.waitingToSync'),
])

export const participantSetup = setup({
  types: {
    context: {} as ParticipantContext,
    events: {} as ParticipantEvent,
    input: {} as ParticipantInput,
    emitted: {} as ParticipantEmitted,
  },
  actors: {
    syncPartition: fromPromise<SyncResult, SyncInput>(async () => notProvided('syncPartition')),
    holdConsumer: fromCallback<{ type: string }, HoldInput>(() => notProvided('holdConsumer')),
    flushPartition: fromPromise<PartitionWriteStatus, FlushInput>(async () => notProvided('flushPartition')),
    sendStatus: fromPromise<void, SendStatusInput>(async () => notProvided('sendStatus')),
    acknowledge: fromPromise<void, AcknowledgeInput>(async () => notProvided('acknowledge')),
    rotateOnRevoke: fromPromise<void, RevokeInput>(async () => notProvided('rotateOnRevoke')),
  },
  guards: {
    resyncPending: ({ context }) => context.resync !== undefined,
    endPending: ({ context }) => context.pendingEnd !== undefined,
    backpressured: ({ context }) => context.backpressured,
    roundSuperseded: ({ context }) =>
      context.roundClosed || (context.pendingEnd !== undefined && context.pendingEnd !== context.round),
    outOfLine: ({ context, event }) =>
      event.type === 'control.start-commit' &&
      isOutOfLine(
        { start: context.chainStart, origin: context.origin, logStartJump: context.logStartJump },
        event.tableOffset,
      ),
    ackOfOtherRound: ({ context, event }) => event.type === 'control.commit-acked' && event.commitId !== context.round,
    ackCommittedOurs: ({ context, event }) =>
      event.type === 'control.commit-acked' && committedOurs(event.outcome, context.status),
    ackCommittedElsewhere: ({ event }) => event.type === 'control.commit-acked' && event.outcome.kind === 'committed',
    ackRejected: ({ event }) => event.type === 'control.commit-acked' && event.outcome.kind === 'rejected',
  },
  delays: {
    syncRetry: ({ context }) => context.syncRetryMs,
  },
  actions: {
    beginSync: assign(({ context }) => ({
      sync: context.resync ?? context.sync,
      resync: undefined,
      committedWhileSyncing: undefined,
    })),
    requestResync: assign((_, params: SyncRequest) => ({ resync: params })),
    notePause: assign({ backpressured: true }),
    noteResume: assign({ backpressured: false }),
    noteStart: assign(({ context, event }) => {
      if (event.type !== 'control.start-commit') return {}
      // A newer round began: the one still being flushed or awaiting its ACK is over, and an END
      // not yet answered belongs to it.
      const other = (id: string | undefined) => id !== undefined && id !== event.commitId
      return {
        roundClosed: context.roundClosed || other(context.round),
        pendingEnd: other(context.pendingEnd) ? undefined : context.pendingEnd,
      }
    }),
    noteEnd: assign(({ context, event }) =>
      event.type === 'control.end-commit' && event.commitId !== context.round ? { pendingEnd: event.commitId } : {},
    ),
    noteAck: assign(({ context, event }) => {
      if (event.type !== 'control.commit-acked') return {}
      return {
        roundClosed: context.roundClosed || event.commitId === context.round,
        pendingEnd: context.pendingEnd === event.commitId ? undefined : context.pendingEnd,
      }
    }),
    beginFlush: assign(({ context }) => ({ round: context.pendingEnd, pendingEnd: undefined, roundClosed: false })),
    endRound: assign({ round: undefined, roundClosed: false, status: undefined }),
    adoptSync: enqueueActions(({ context, enqueue }, params: SyncResult) => {
      // A sync that read the table before an ACK of ours landed: the chain starts where that
      // commit ended (as the WAL's has since the ACK), as adoptCommit would have placed it.
      const committed = context.committedWhileSyncing
      const overtaken = committed !== undefined && params.position < committed
      enqueue.assign({
        chainStart: overtaken ? committed : params.position,
        origin: overtaken ? 'table' : params.origin,
        logStartJump: overtaken ? jumpAhead(params.logStartJump, committed) : params.logStartJump,
      })
      enqueue.emit({
        type: 'participant.synced',
        reason: context.sync.reason,
        position: params.position,
        origin: params.origin,
        ...(params.logStartJump ? { logStartJump: params.logStartJump } : {}),
      })
    }),
    adoptCommit: enqueueActions(
      ({ context, enqueue }, params: { commitId: string; offset: bigint; filePaths: readonly string[] }) => {
        // The table holds the chain up to `offset` now: the next range starts there, from the table.
        // A log-start jump still ahead of it (a sync found it after this round's cut) stays declared.
        const logStartJump = jumpAhead(context.logStartJump, params.offset)
        enqueue.assign({ chainStart: params.offset, origin: 'table', logStartJump, acknowledged: params })
        enqueue.emit({ type: 'participant.committed', ...params })
      },
    ),
  },
})
