// The coordinator machine without I/O: fake actors that resolve when a test says so, and xstate's
// SimulatedClock for the commit interval, the commit timeout and the failure backoff.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createActor, fromPromise, initialTransition, SimulatedClock, transition } from 'xstate'
import type { PartitionWriteStatus } from '../protocol/index.ts'
import { type Deferred, deferred, FloeError } from '../shared/index.ts'
import { planCommit } from './commit-content.ts'
import { coordinatorMachine } from './coordinator.machine.ts'
import type {
  AckRoundInput,
  CommitRoundActorInput,
  CommitRoundActorOutput,
  CoordinatorEmitted,
  CoordinatorInput,
  StartRoundInput,
  StartRoundOutput,
} from './machine-types.ts'
import { encodeProgress, offsetsKey } from './progress.ts'
import { empty, failed, group, sender, tableWith, topic, written } from './test-fixtures.ts'

const input: CoordinatorInput = {
  dataset: 'events',
  group,
  commitIntervalMs: 20_000,
  commitTimeoutMs: 30_000,
  failureBackoffMs: 1_000,
}

/** Lets promise callbacks and the machine's reactions to them run; no wall-clock time passes. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve))

const table = tableWith([
  {
    id: 1n,
    summary: {
      [offsetsKey(group)]: encodeProgress(
        new Map([
          [
            topic,
            new Map([
              [0, 100n],
              [1, 200n],
            ]),
          ],
        ]),
      ),
    },
  },
])

/**
 * A coordinator with working fakes: startRound hands out commit ids c-1, c-2, ...; commitRound runs
 * the real planCommit against `table` unless a test takes over; every actor's call is recorded.
 */
function coordinator(
  options: {
    partitionCount?: number
    commit?: (input: CommitRoundActorInput, signal: AbortSignal) => Promise<CommitRoundActorOutput>
  } = {},
) {
  const clock = new SimulatedClock()
  clock.set(1_000_000)
  const calls = { start: 0, end: [] as string[], commit: [] as CommitRoundActorInput[], ack: [] as AckRoundInput[] }
  const gates = { start: [] as Deferred<void>[] }
  let snapshotId = 5000n
  const machine = coordinatorMachine.provide({
    actors: {
      startRound: fromPromise<StartRoundOutput, StartRoundInput>(async () => {
        calls.start++
        const gate = deferred<void>()
        gates.start.push(gate)
        // The first round starts at once; later ones wait for the test (so a test ends in `starting`).
        if (calls.start > 1) await gate.promise
        return {
          commitId: `c-${calls.start}`,
          expected: new Map([[topic, options.partitionCount ?? 2]]),
          tableOffsets: new Map(),
          startedAt: clock.now(),
        }
      }),
      endRound: fromPromise(async ({ input: end }) => {
        calls.end.push(end.commitId)
        return { endedAt: clock.now() }
      }),
      commitRound: fromPromise(async ({ input: commit, signal }) => {
        calls.commit.push(commit)
        if (options.commit) return options.commit(commit, signal)
        const plan = planCommit(table, {
          group,
          commitId: commit.commitId,
          statuses: commit.statuses,
          partial: commit.partial,
        })
        clock.increment(250)
        return plan.check.accepted.length > 0
          ? {
              kind: 'committed',
              snapshotId: ++snapshotId,
              plan,
              attempts: 1,
              foundAfterUnknownOutcome: false,
              committedAt: clock.now(),
            }
          : { kind: 'rejected', plan, attempts: 1, committedAt: clock.now() }
      }),
      ackRound: fromPromise(async ({ input: ack }) => {
        calls.ack.push(ack)
        clock.increment(5)
        return { ackedAt: clock.now() }
      }),
    },
  })
  const actor = createActor(machine, { input, clock })
  const emitted: CoordinatorEmitted[] = []
  actor.on('*', (event) => emitted.push(event))
  const state = () => actor.getSnapshot().value
  const types = () => emitted.map((e) => e.type)
  const answer = (commitId: string, statuses: PartitionWriteStatus[], generation = 1) =>
    actor.send({
      type: 'control.write-status',
      report: { commitId, sender: sender(generation), statuses },
      receivedAt: clock.now(),
    })
  return { actor, clock, calls, gates, emitted, state, types, answer }
}

async function openRound(c: ReturnType<typeof coordinator>) {
  c.actor.start()
  await settle()
  assert.equal(c.state(), 'open')
  c.clock.increment(input.commitIntervalMs)
  await settle()
  assert.equal(c.state(), 'collecting')
}

describe('the coordinator machine', () => {
  test('runs a round: START, the interval, END, every answer, one commit, the ACK, then the next START', async () => {
    const c = coordinator()
    await openRound(c)
    assert.deepEqual(c.calls.end, ['c-1'])
    c.clock.increment(1_500)
    c.answer('c-1', [written(0, 100n, 150n)])
    assert.equal(c.state(), 'collecting')
    c.answer('c-1', [empty(1)])
    await settle()
    assert.equal(c.state(), 'starting', 'the next round starts right after the ACK')
    assert.deepEqual(
      c.calls.commit.map((call) => [call.commitId, call.partial, call.statuses.map((s) => s.partition)]),
      [['c-1', false, [0, 1]]],
    )
    const [ack] = c.calls.ack
    assert.equal(ack?.ack.snapshotId, 5001n)
    assert.deepEqual(
      ack?.ack.committed.map((p) => [p.partition, p.offset]),
      [[0, 150n]],
    )
    assert.deepEqual(c.types(), [
      'round.started',
      'round.ended',
      'round.status-recorded',
      'round.status-recorded',
      'round.collected',
      'round.committed',
      'round.completed',
    ])
    const completed = c.emitted.at(-1)
    assert.deepEqual(completed, {
      type: 'round.completed',
      commitId: 'c-1',
      outcome: { kind: 'committed', commitId: 'c-1', snapshotId: 5001n },
      phases: { openMs: 20_000, collectingMs: 1_500, committingMs: 250, ackingMs: 5 },
      totalMs: 21_755,
    })
    assert.equal(c.actor.getSnapshot().context.roundsCompleted, 1)
    c.actor.stop()
  })

  test('on the timeout commits the partitions that answered; the others wait for the next round', async () => {
    const c = coordinator({ partitionCount: 3 })
    await openRound(c)
    c.answer('c-1', [written(0, 100n, 150n)])
    c.answer('c-1', [failed(1)])
    c.clock.increment(input.commitTimeoutMs - 1)
    await settle()
    assert.equal(c.state(), 'collecting')
    c.clock.increment(1)
    await settle()
    assert.deepEqual(
      c.calls.commit.map((call) => [call.partial, call.statuses.map((s) => s.partition)]),
      [[true, [0, 1]]],
    )
    const collected = c.emitted.find((e) => e.type === 'round.collected')
    assert.deepEqual(collected, {
      type: 'round.collected',
      commitId: 'c-1',
      partial: true,
      answered: 2,
      missing: [{ topic, partition: 2 }],
      toCommit: true,
      collectingMs: 30_000,
    })
    assert.deepEqual(
      c.calls.ack[0]?.ack.committed.map((p) => p.partition),
      [0],
    )
    c.actor.stop()
  })

  test('acknowledges a round with nothing to commit without an Iceberg commit', async () => {
    const c = coordinator()
    await openRound(c)
    c.answer('c-1', [empty(0), empty(1)])
    await settle()
    assert.equal(c.calls.commit.length, 0)
    assert.deepEqual(c.calls.ack[0]?.ack, {
      commitId: 'c-1',
      snapshotId: undefined,
      committed: [],
      rejected: [],
      lost: [],
      acceptedRotations: [],
    })
    const completed = c.emitted.find((e) => e.type === 'round.completed')
    assert.deepEqual(completed?.type === 'round.completed' && completed.outcome, { kind: 'empty', commitId: 'c-1' })
    assert.deepEqual(completed?.type === 'round.completed' && completed.phases.committingMs, 0)
    c.actor.stop()
  })

  test('closes a round nobody answered on the timeout, without a commit', async () => {
    const c = coordinator()
    await openRound(c)
    c.clock.increment(input.commitTimeoutMs)
    await settle()
    assert.equal(c.calls.commit.length, 0)
    assert.equal(c.calls.ack.length, 1)
    const collected = c.emitted.find((e) => e.type === 'round.collected')
    assert.equal(collected?.type === 'round.collected' && collected.partial, true)
    c.actor.stop()
  })

  test('acknowledges a round whose every range was rejected, so the participants resync', async () => {
    const c = coordinator()
    await openRound(c)
    c.answer('c-1', [written(0, 90n, 150n), written(1, 250n, 260n)])
    await settle()
    const ack = c.calls.ack[0]?.ack
    assert.equal(ack?.snapshotId, undefined)
    assert.deepEqual(
      ack?.rejected.map((r) => [r.partition, r.reason, r.tableOffset]),
      [
        [0, 'behind-table', 100n],
        [1, 'ahead-of-table', 200n],
      ],
    )
    const completed = c.emitted.find((e) => e.type === 'round.completed')
    assert.deepEqual(completed?.type === 'round.completed' && completed.outcome, { kind: 'rejected', commitId: 'c-1' })
    c.actor.stop()
  })

  test('reports conflict retries while committing, without restarting the commit', async () => {
    const release = deferred<void>()
    const c = coordinator({
      commit: async (commit) => {
        commit.reportRetry({ attempt: 1, reason: 'conflict', waitMs: 100 })
        commit.reportRetry({ attempt: 2, reason: 'unknown', waitMs: 200 })
        await release.promise
        const plan = planCommit(table, { group, commitId: commit.commitId, statuses: commit.statuses, partial: false })
        return { kind: 'committed', snapshotId: 9n, plan, attempts: 3, foundAfterUnknownOutcome: false, committedAt: 0 }
      },
    })
    await openRound(c)
    c.answer('c-1', [written(0, 100n, 150n), empty(1)])
    await settle()
    assert.equal(c.state(), 'committing')
    assert.deepEqual(
      c.emitted.filter((e) => e.type === 'commit.retrying'),
      [
        { type: 'commit.retrying', commitId: 'c-1', attempt: 1, reason: 'conflict', waitMs: 100 },
        { type: 'commit.retrying', commitId: 'c-1', attempt: 2, reason: 'unknown', waitMs: 200 },
      ],
    )
    release.resolve()
    await settle()
    assert.equal(c.calls.commit.length, 1, 'the committing actor ran once')
    const committedEvent = c.emitted.find((e) => e.type === 'round.committed')
    assert.equal(committedEvent?.type === 'round.committed' && committedEvent.attempts, 3)
    c.actor.stop()
  })

  test('a failed commit ends the round with a failed outcome and retries after a growing backoff', async () => {
    const c = coordinator({
      commit: async () => {
        throw new FloeError('COMMIT_CONFLICT', 'gave up after 5 attempts')
      },
    })
    await openRound(c)
    c.answer('c-1', [written(0, 100n, 150n), empty(1)])
    await settle()
    assert.equal(c.state(), 'idle')
    assert.equal(c.calls.ack.length, 0, 'no ACK: the files stay with their participants')
    assert.deepEqual(c.emitted.at(-1), {
      type: 'round.failed',
      commitId: 'c-1',
      phase: 'committing',
      error: { code: 'COMMIT_CONFLICT', retryable: true, message: 'gave up after 5 attempts' },
      consecutiveFailures: 1,
    })
    assert.deepEqual(c.actor.getSnapshot().context.lastOutcome, {
      kind: 'failed',
      commitId: 'c-1',
      phase: 'committing',
      error: { code: 'COMMIT_CONFLICT', retryable: true, message: 'gave up after 5 attempts' },
    })
    c.clock.increment(999)
    await settle()
    assert.equal(c.state(), 'idle')
    c.clock.increment(1)
    await settle()
    assert.equal(c.state(), 'starting')
    c.gates.start[1]?.resolve()
    await settle()
    c.clock.increment(input.commitIntervalMs)
    await settle()
    c.answer('c-2', [written(0, 100n, 150n), empty(1)])
    await settle()
    c.clock.increment(1_999)
    await settle()
    assert.equal(c.state(), 'idle', 'the second failure in a row waits twice as long')
    c.clock.increment(1)
    await settle()
    assert.equal(c.state(), 'starting')
    c.actor.stop()
  })

  test('a failed START is retried after the backoff', async () => {
    const c = coordinator()
    const machine = coordinatorMachine.provide({
      actors: {
        startRound: fromPromise<StartRoundOutput, StartRoundInput>(async () => {
          throw new FloeError('CATALOG_UNAVAILABLE', 'connection refused')
        }),
      },
    })
    const actor = createActor(machine, { input, clock: c.clock })
    const failures: CoordinatorEmitted[] = []
    actor.on('round.failed', (e) => failures.push(e))
    actor.start()
    await settle()
    assert.equal(actor.getSnapshot().value, 'idle')
    assert.deepEqual(failures, [
      {
        type: 'round.failed',
        commitId: undefined,
        phase: 'starting',
        error: { code: 'CATALOG_UNAVAILABLE', retryable: true, message: 'connection refused' },
        consecutiveFailures: 1,
      },
    ])
    actor.stop()
  })

  test('stop in the middle of a commit aborts the committing actor and ends the machine', async () => {
    const aborted = deferred<boolean>()
    const c = coordinator({
      commit: (_commit, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => {
            aborted.resolve(signal.aborted)
            reject(signal.reason)
          })
        }),
    })
    await openRound(c)
    c.answer('c-1', [written(0, 100n, 150n), empty(1)])
    await settle()
    assert.equal(c.state(), 'committing')
    c.actor.send({ type: 'coordinator.stop', reason: 'partition 0 revoked' })
    assert.equal(await aborted.promise, true)
    assert.equal(c.state(), 'stopped')
    assert.equal(c.actor.getSnapshot().status, 'done')
    assert.deepEqual(c.emitted.at(-1), { type: 'coordinator.stopped', reason: 'partition 0 revoked', commitId: 'c-1' })
    await settle()
    assert.equal(c.calls.ack.length, 0)
  })

  test('an early round request skips the rest of the commit interval', async () => {
    const c = coordinator()
    c.actor.start()
    await settle()
    assert.equal(c.state(), 'open')
    c.actor.send({ type: 'control.commit-requested', requestedBy: 'w2 draining', receivedAt: c.clock.now() })
    await settle()
    assert.equal(c.state(), 'collecting')
    assert.deepEqual(c.calls.end, ['c-1'])
    c.actor.stop()
  })

  test('a round request during a round makes the next round end at once', async () => {
    const c = coordinator()
    await openRound(c)
    c.actor.send({ type: 'control.commit-requested', requestedBy: 'w2 draining', receivedAt: c.clock.now() })
    c.answer('c-1', [written(0, 100n, 150n), empty(1)])
    await settle()
    assert.equal(c.state(), 'starting')
    c.gates.start[1]?.resolve()
    await settle()
    assert.deepEqual(c.calls.end, ['c-1', 'c-2'], 'round c-2 was cut without waiting for the interval')
    assert.equal(c.state(), 'collecting')
    c.actor.stop()
  })

  test('keeps answers that beat the acknowledgement of END-COMMIT', async () => {
    const c = coordinator()
    const endSent = deferred<void>()
    const machine = coordinatorMachine.provide({
      actors: {
        startRound: fromPromise<StartRoundOutput, StartRoundInput>(async () => ({
          commitId: 'c-1',
          expected: new Map([[topic, 1]]),
          tableOffsets: new Map(),
          startedAt: 0,
        })),
        endRound: fromPromise(async () => {
          await endSent.promise
          return { endedAt: 10 }
        }),
        ackRound: fromPromise(async () => ({ ackedAt: 20 })),
      },
    })
    const actor = createActor(machine, { input: { ...input, commitIntervalMs: 0 }, clock: c.clock })
    actor.start()
    await settle()
    c.clock.increment(0)
    assert.equal(actor.getSnapshot().value, 'ending')
    actor.send({
      type: 'control.write-status',
      report: { commitId: 'c-1', sender: sender(), statuses: [empty(0)] },
      receivedAt: 5,
    })
    endSent.resolve()
    await settle()
    assert.equal(actor.getSnapshot().context.roundsCompleted, 1)
    actor.stop()
  })

  test('ignores answers of another round, and answers that arrive after the round stopped collecting', async () => {
    const release = deferred<void>()
    const c = coordinator({
      commit: async (commit) => {
        await release.promise
        const plan = planCommit(table, { group, commitId: commit.commitId, statuses: commit.statuses, partial: false })
        return { kind: 'committed', snapshotId: 9n, plan, attempts: 1, foundAfterUnknownOutcome: false, committedAt: 0 }
      },
    })
    await openRound(c)
    c.answer('c-0', [written(0, 100n, 150n)])
    assert.deepEqual(c.emitted.at(-1), {
      type: 'round.status-ignored',
      commitId: 'c-1',
      sender: sender(),
      ignored: [{ topic, partition: 0, reason: 'other-commit' }],
    })
    c.answer('c-1', [written(0, 100n, 150n), empty(1)])
    await settle()
    assert.equal(c.state(), 'committing')
    c.answer('c-1', [written(1, 200n, 210n)], 2)
    assert.deepEqual(c.emitted.at(-1), {
      type: 'round.status-ignored',
      commitId: 'c-1',
      sender: sender(2),
      ignored: [{ topic, partition: 1, reason: 'late' }],
    })
    release.resolve()
    await settle()
    assert.deepEqual(
      c.calls.commit[0]?.statuses.map((s) => s.kind),
      ['written', 'empty'],
    )
    c.actor.stop()
  })
})

describe('the coordinator chart, as pure transitions', () => {
  test('starts in starting and moves from open to ending on a round request, running nothing', () => {
    const [initial, actions] = initialTransition(coordinatorMachine, input)
    assert.equal(initial.value, 'starting')
    assert.ok(actions.some((action) => action.type === 'xstate.spawnChild'))
    const [open] = transition(coordinatorMachine, initial, {
      type: 'xstate.done.actor.startRound',
      output: { commitId: 'c-1', expected: new Map([[topic, 2]]), tableOffsets: new Map(), startedAt: 0 },
    } as never)
    assert.equal(open.value, 'open')
    assert.equal(open.context.round?.commitId, 'c-1')
    const [ending] = transition(coordinatorMachine, open, {
      type: 'control.commit-requested',
      requestedBy: 'operator',
      receivedAt: 1,
    })
    assert.equal(ending.value, 'ending')
  })
})
