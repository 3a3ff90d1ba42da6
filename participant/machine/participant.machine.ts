// One assigned Kafka partition's control state (docs/design.md "The protocol"), two parallel regions:
//
//   ingest: syncing -> writing <-> paused        (syncing again on a resync request)
//   commit: idle -> flushing -> sending -> reported -> acknowledging -> idle
//
// Records never pass through the machine (xstate costs ~4.5 µs an event); the runner appends
// while `isWriting(snapshot)`. The machine sees control events only: START/END/ACK, pause and
// resume, resync requests, revocation. END-COMMIT is a cut, not a stop: ingest keeps writing
// while the commit region flushes and waits for the ACK.
//
// One machine per partition, not one per worker and dataset. Measured with fake actors that
// answer at once (node 22, 1,000 partitions): 4.8 KB an actor, and ~105 ms of CPU for a whole
// round of all of them (START, END, flush, send, ACK, acknowledge: three promise actors each),
// i.e. 0.5 % of a 20 s commit interval. For that, each partition's resync, rejection and pause
// stay its own, and a revoked partition is a stopped actor, not an entry in a shared context.
//
// The WAL is touched by the sync, flush, acknowledge and revoke actors; the chart never runs two
// of them at once (flushing waits for the ingest region to be synced, a resync waits for the
// commit region to be idle or reported, acknowledging is skipped while syncing), except on
// revocation, which aborts whatever runs and then rotates.

import type { SnapshotFrom } from 'xstate'
import { and, assign, emit, enqueueActions, fromCallback, fromPromise, not, or, setup, stateIn } from 'xstate'
import { FloeError, messageOf } from '../../shared/index.ts'
import { committedOurs, isOutOfLine } from './line.ts'
import type {
  AcknowledgeInput,
  FlushInput,
  HoldInput,
  ParticipantContext,
  ParticipantEmitted,
  ParticipantEvent,
  ParticipantInput,
  PartitionRef,
  PartitionWriteStatus,
  RevokeInput,
  SendStatusInput,
  SyncInput,
  SyncRequest,
  SyncResult,
} from './types.ts'

function notProvided(name: string): never {
  throw new FloeError('CONFIG_INVALID', `participant actor ${name} was not provided: use participantMachine.provide`)
}

const ref = (context: ParticipantContext): PartitionRef => ({
  dataset: context.dataset,
  topic: context.topic,
  partition: context.partition,
})

function committedParams(event: ParticipantEvent): { commitId: string; offset: bigint; filePaths: readonly string[] } {
  return event.type === 'control.commit-acked' && event.outcome.kind === 'committed'
    ? { commitId: event.commitId, offset: event.outcome.offset, filePaths: event.outcome.filePaths }
    : { commitId: '', offset: 0n, filePaths: [] }
}

const ingestReady = or([stateIn('#participant.active.ingest.writing'), stateIn('#participant.active.ingest.paused')])
const commitQuiet = or([stateIn('#participant.active.commit.idle'), stateIn('#participant.active.commit.reported')])
const syncingNow = or([
  stateIn('#participant.active.ingest.syncing'),
  stateIn('#participant.active.ingest.waitingToSync'),
])

export const participantMachine = setup({
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
    beginSync: assign(({ context }) => ({ sync: context.resync ?? context.sync, resync: undefined })),
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
      enqueue.assign({ chainStart: params.position, origin: params.origin, logStartJump: params.logStartJump })
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
        const jump = context.logStartJump
        const logStartJump = jump && jump.from >= params.offset ? jump : undefined
        enqueue.assign({ chainStart: params.offset, origin: 'table', logStartJump, acknowledged: params })
        enqueue.emit({ type: 'participant.committed', ...params })
      },
    ),
  },
}).createMachine({
  id: 'participant',
  context: ({ input }) => ({
    dataset: input.dataset,
    topic: input.topic,
    partition: input.partition,
    syncRetryMs: input.syncRetryMs ?? 1000,
    chainStart: undefined,
    origin: 'table',
    logStartJump: undefined,
    backpressured: false,
    sync: { reason: 'assigned', tableOffset: undefined },
    resync: undefined,
    pendingEnd: undefined,
    round: undefined,
    roundClosed: false,
    status: undefined,
    acknowledged: undefined,
  }),
  initial: 'active',
  states: {
    active: {
      type: 'parallel',
      on: {
        'partition.revoked': { target: 'revoking' },
        'control.start-commit': [
          {
            guard: and([not(syncingNow), 'outOfLine']),
            actions: [
              'noteStart',
              {
                type: 'requestResync',
                params: ({ event }) => ({ reason: 'out-of-line', tableOffset: event.tableOffset }),
              },
              emit(({ context, event }) => ({
                type: 'participant.out-of-line' as const,
                commitId: event.commitId,
                tableOffset: event.tableOffset,
                chainStart: context.chainStart,
              })),
            ],
          },
          { actions: 'noteStart' },
        ],
        'control.end-commit': { actions: 'noteEnd' },
        'control.commit-acked': { actions: 'noteAck' },
        'ingest.resync': {
          actions: {
            type: 'requestResync',
            params: ({ event }) => ({ reason: event.reason, tableOffset: event.tableOffset }),
          },
        },
        'backpressure.pause': { actions: 'notePause' },
        'backpressure.resume': { actions: 'noteResume' },
      },
      states: {
        ingest: {
          initial: 'syncing',
          states: {
            syncing: {
              invoke: {
                id: 'syncPartition',
                src: 'syncPartition',
                input: ({ context }) => ({ ...ref(context), ...context.sync }),
                onDone: [
                  {
                    guard: 'backpressured',
                    target: 'paused',
                    actions: { type: 'adoptSync', params: ({ event }) => event.output },
                  },
                  { target: 'writing', actions: { type: 'adoptSync', params: ({ event }) => event.output } },
                ],
                onError: {
                  target: 'waitingToSync',
                  actions: emit(({ context, event }) => ({
                    type: 'participant.sync-failed' as const,
                    reason: context.sync.reason,
                    message: messageOf(event.error),
                  })),
                },
              },
            },
            waitingToSync: {
              after: { syncRetry: { target: 'syncing', actions: 'beginSync' } },
            },
            writing: {
              always: { guard: and(['resyncPending', commitQuiet]), target: 'syncing', actions: 'beginSync' },
              on: {
                'backpressure.pause': {
                  target: 'paused',
                  actions: ['notePause', emit({ type: 'participant.paused' as const })],
                },
              },
            },
            paused: {
              invoke: { id: 'holdConsumer', src: 'holdConsumer', input: ({ context }) => ref(context) },
              always: { guard: and(['resyncPending', commitQuiet]), target: 'syncing', actions: 'beginSync' },
              on: {
                'backpressure.resume': {
                  target: 'writing',
                  actions: ['noteResume', emit({ type: 'participant.resumed' as const })],
                },
              },
            },
          },
        },
        commit: {
          initial: 'idle',
          states: {
            idle: {
              always: { guard: and(['endPending', ingestReady]), target: 'flushing', actions: 'beginFlush' },
            },
            flushing: {
              invoke: {
                id: 'flushPartition',
                src: 'flushPartition',
                input: ({ context }) => ({
                  ...ref(context),
                  commitId: context.round ?? '',
                  chainStart: context.chainStart ?? 0n,
                  origin: context.origin,
                  logStartJump: context.logStartJump,
                }),
                onDone: [
                  { guard: 'roundSuperseded', target: 'idle', actions: 'endRound' },
                  { target: 'sending', actions: assign({ status: ({ event }) => event.output }) },
                ],
                onError: [
                  { guard: 'roundSuperseded', target: 'idle', actions: 'endRound' },
                  {
                    // Answer anyway: an ERROR status lets the round close without waiting for the
                    // timeout; the files stay for the next round.
                    target: 'sending',
                    actions: [
                      assign({
                        status: ({ context, event }) => ({
                          kind: 'error' as const,
                          topic: context.topic,
                          partition: context.partition,
                          message: messageOf(event.error),
                        }),
                      }),
                      emit(({ context, event }) => ({
                        type: 'participant.status-failed' as const,
                        commitId: context.round ?? '',
                        stage: 'flush' as const,
                        message: messageOf(event.error),
                      })),
                    ],
                  },
                ],
              },
            },
            sending: {
              invoke: {
                id: 'sendStatus',
                src: 'sendStatus',
                input: ({ context }) => ({
                  ...ref(context),
                  commitId: context.round ?? '',
                  status: context.status as PartitionWriteStatus,
                }),
                onDone: [
                  { guard: 'roundSuperseded', target: 'idle', actions: 'endRound' },
                  {
                    target: 'reported',
                    actions: emit(({ context }) => ({
                      type: 'participant.status-sent' as const,
                      commitId: context.round ?? '',
                      status: context.status as PartitionWriteStatus,
                    })),
                  },
                ],
                onError: {
                  target: 'idle',
                  actions: [
                    emit(({ context, event }) => ({
                      type: 'participant.status-failed' as const,
                      commitId: context.round ?? '',
                      stage: 'send' as const,
                      message: messageOf(event.error),
                    })),
                    'endRound',
                  ],
                },
              },
            },
            reported: {
              always: { guard: 'roundSuperseded', target: 'idle', actions: 'endRound' },
              on: {
                'control.commit-acked': [
                  { guard: 'ackOfOtherRound', actions: 'noteAck' },
                  {
                    guard: and(['ackCommittedOurs', not(syncingNow)]),
                    target: 'acknowledging',
                    actions: { type: 'adoptCommit', params: ({ event }) => committedParams(event) },
                  },
                  {
                    // A sync is running: it cleans the WAL from the table's offset itself.
                    guard: 'ackCommittedOurs',
                    target: 'idle',
                    actions: [{ type: 'adoptCommit', params: ({ event }) => committedParams(event) }, 'endRound'],
                  },
                  {
                    guard: 'ackCommittedElsewhere',
                    target: 'idle',
                    actions: [
                      {
                        type: 'requestResync',
                        params: ({ event }) => ({
                          reason: 'committed-elsewhere',
                          tableOffset: event.outcome.kind === 'committed' ? event.outcome.offset : undefined,
                        }),
                      },
                      emit(({ event }) => ({
                        type: 'participant.committed-elsewhere' as const,
                        commitId: event.commitId,
                        offset: event.outcome.kind === 'committed' ? event.outcome.offset : -1n,
                      })),
                      'endRound',
                    ],
                  },
                  {
                    guard: 'ackRejected',
                    target: 'idle',
                    actions: [
                      {
                        type: 'requestResync',
                        params: ({ event }) => ({
                          reason: 'rejected',
                          tableOffset: event.outcome.kind === 'rejected' ? event.outcome.tableOffset : undefined,
                        }),
                      },
                      emit(({ event }) => ({
                        type: 'participant.rejected' as const,
                        commitId: event.commitId,
                        reason: event.outcome.kind === 'rejected' ? event.outcome.reason : '',
                        tableOffset: event.outcome.kind === 'rejected' ? event.outcome.tableOffset : undefined,
                      })),
                      'endRound',
                    ],
                  },
                  {
                    // Not in the round (timed out): the files stay, the chain is unchanged.
                    target: 'idle',
                    actions: [
                      emit(({ context, event }) => ({
                        type: 'participant.round-missed' as const,
                        commitId: event.commitId,
                        reported: context.status?.kind ?? 'empty',
                      })),
                      'endRound',
                    ],
                  },
                ],
              },
            },
            acknowledging: {
              invoke: {
                id: 'acknowledge',
                src: 'acknowledge',
                input: ({ context }) => ({
                  ...ref(context),
                  commitId: context.acknowledged?.commitId ?? '',
                  offset: context.acknowledged?.offset ?? 0n,
                  filePaths: context.acknowledged?.filePaths ?? [],
                }),
                onDone: { target: 'idle', actions: 'endRound' },
                onError: {
                  target: 'idle',
                  actions: [
                    emit(({ context, event }) => ({
                      type: 'participant.acknowledge-failed' as const,
                      commitId: context.acknowledged?.commitId ?? '',
                      message: messageOf(event.error),
                    })),
                    'endRound',
                  ],
                },
              },
            },
          },
        },
      },
    },
    revoking: {
      invoke: {
        id: 'rotateOnRevoke',
        src: 'rotateOnRevoke',
        input: ({ context }) => ref(context),
        onDone: { target: 'revoked', actions: emit({ type: 'participant.revoked' as const, rotated: true }) },
        onError: { target: 'revoked', actions: emit({ type: 'participant.revoked' as const, rotated: false }) },
      },
    },
    revoked: { type: 'final' },
  },
})

export type ParticipantSnapshot = SnapshotFrom<typeof participantMachine>

/** The runner appends records only while this holds (not while syncing or paused). */
export function isWriting(snapshot: ParticipantSnapshot): boolean {
  return snapshot.matches({ active: { ingest: 'writing' } })
}
