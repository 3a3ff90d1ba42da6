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
// The chart decides which actor runs when, for the protocol's sake: a flush reports only a synced
// chain, a resync waits for the commit region to be idle or reported, acknowledging is left to a
// sync that runs. It does not keep the WAL work of its actors apart: the runner's partition queue
// does (participant/partition-queue.ts), revocation included, which aborts whatever runs.
//
// This file is the chart; its vocabulary (the actors the runner provides, guards, delay, actions)
// is participant.setup.ts, and its types are types.ts.
import type { SnapshotFrom } from 'xstate'
import { and, assign, emit, not } from 'xstate'
import type { PartitionWriteStatus } from '../../protocol/index.ts'
import { messageOf } from '../../shared/index.ts'
import { commitQuiet, committedParams, ingestReady, participantSetup, ref, syncingNow } from './participant.setup.ts'

export const participantMachine = participantSetup.createMachine({
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
    committedWhileSyncing: undefined,
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
                    // A sync is running: it cleans the WAL from the table's offset itself, and its
                    // chain starts no earlier than this commit (it may have read the table before).
                    guard: 'ackCommittedOurs',
                    target: 'idle',
                    actions: [
                      { type: 'adoptCommit', params: ({ event }) => committedParams(event) },
                      assign({ committedWhileSyncing: ({ event }) => committedParams(event).offset }),
                      'endRound',
                    ],
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
