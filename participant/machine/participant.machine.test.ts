// The participant machine without I/O: every actor is a fake the test completes by hand, and
// xstate's SimulatedClock drives the sync retry.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createActor, fromCallback, fromPromise, SimulatedClock } from 'xstate'
import type { PartitionWriteStatus } from '../../protocol/index.ts'
import { isWriting, participantMachine } from './participant.machine.ts'
import type {
  AcknowledgeInput,
  FlushInput,
  ParticipantEmitted,
  RevokeInput,
  SendStatusInput,
  SyncInput,
  SyncResult,
} from './types.ts'

interface Call<I, O> {
  input: I
  signal: AbortSignal
  resolve: (output: O) => void
  reject: (error: unknown) => void
}

function recorder<I, O>() {
  const calls: Call<I, O>[] = []
  const logic = fromPromise<O, I>(
    ({ input, signal }) =>
      new Promise<O>((resolve, reject) => {
        calls.push({ input, signal, resolve, reject })
      }),
  )
  return { calls, logic }
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve))

const written = (
  start: bigint,
  end: bigint,
  files: string[] = [`s3://b/${start}-${end}.parquet`],
): PartitionWriteStatus => ({
  kind: 'written',
  topic: 'events',
  partition: 3,
  range: { start, end },
  files: files.map((filePath) => ({
    filePath,
    fileFormat: 'PARQUET' as const,
    specId: 0,
    partition: {},
    recordCount: 1n,
    fileSizeInBytes: 1n,
  })),
  origin: 'table',
})

function participant() {
  const clock = new SimulatedClock()
  const sync = recorder<SyncInput, SyncResult>()
  const flush = recorder<FlushInput, PartitionWriteStatus>()
  const send = recorder<SendStatusInput, void>()
  const acknowledge = recorder<AcknowledgeInput, void>()
  const revoke = recorder<RevokeInput, void>()
  const holds = { started: 0, released: 0 }
  const machine = participantMachine.provide({
    actors: {
      syncPartition: sync.logic,
      flushPartition: flush.logic,
      sendStatus: send.logic,
      acknowledge: acknowledge.logic,
      rotateOnRevoke: revoke.logic,
      holdConsumer: fromCallback(() => {
        holds.started++
        return () => {
          holds.released++
        }
      }),
    },
  })
  const actor = createActor(machine, {
    input: { dataset: 'events', topic: 'events', partition: 3, syncRetryMs: 500 },
    clock,
  })
  const emitted: ParticipantEmitted[] = []
  actor.on('*', (event) => emitted.push(event))
  actor.start()
  const value = () => actor.getSnapshot().value
  const context = () => actor.getSnapshot().context
  const done = async <O>(recorded: { calls: Call<unknown, O>[] } | { calls: Call<never, O>[] }, output: O) => {
    const call = (recorded.calls as Call<unknown, O>[]).at(-1)
    assert.ok(call, 'the actor was invoked')
    call.resolve(output)
    await settle()
  }
  return { actor, clock, sync, flush, send, acknowledge, revoke, holds, emitted, value, context, done }
}

/** A participant synced at `position` and writing. */
async function writingAt(position = 100n, result: Partial<SyncResult> = {}) {
  const p = participant()
  await p.done(p.sync, { position, origin: 'table', tableOffset: position, ...result })
  assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'idle' } })
  return p
}

/** A participant that answered END `commitId` with `status` and awaits the ACK. */
async function reported(status = written(100n, 150n), commitId = 'c-1') {
  const p = await writingAt(100n)
  p.actor.send({ type: 'control.start-commit', commitId, tableOffset: 100n })
  p.actor.send({ type: 'control.end-commit', commitId })
  await p.done(p.flush, status)
  await p.done(p.send, undefined)
  assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'reported' } })
  return p
}

describe('the participant machine', () => {
  test('syncs from the table on assignment, then writes', async () => {
    const p = participant()
    assert.deepEqual(p.value(), { active: { ingest: 'syncing', commit: 'idle' } })
    assert.equal(isWriting(p.actor.getSnapshot()), false)
    assert.deepEqual(p.sync.calls[0]?.input, {
      dataset: 'events',
      topic: 'events',
      partition: 3,
      reason: 'assigned',
      tableOffset: undefined,
    })
    await p.done(p.sync, { position: 42n, origin: 'group-offset', tableOffset: undefined })
    assert.equal(isWriting(p.actor.getSnapshot()), true)
    assert.equal(p.context().chainStart, 42n)
    assert.deepEqual(p.emitted, [
      { type: 'participant.synced', reason: 'assigned', position: 42n, origin: 'group-offset' },
    ])
  })

  test('answers END with the whole chain, keeps writing, and on its ACK deletes the files and moves the chain', async () => {
    const p = await writingAt(100n)
    p.actor.send({ type: 'control.start-commit', commitId: 'c-1', tableOffset: 100n })
    p.actor.send({ type: 'control.end-commit', commitId: 'c-1' })
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'flushing' } })
    assert.deepEqual(p.flush.calls[0]?.input, {
      dataset: 'events',
      topic: 'events',
      partition: 3,
      commitId: 'c-1',
      chainStart: 100n,
      origin: 'table',
      logStartJump: undefined,
    })
    await p.done(p.flush, written(100n, 150n))
    assert.deepEqual(p.send.calls[0]?.input.status, written(100n, 150n))
    await p.done(p.send, undefined)
    assert.equal(isWriting(p.actor.getSnapshot()), true, 'END is a cut, not a stop')
    p.actor.send({
      type: 'control.commit-acked',
      commitId: 'c-1',
      outcome: { kind: 'committed', offset: 150n, filePaths: ['s3://b/100-150.parquet'] },
    })
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'acknowledging' } })
    assert.deepEqual(p.acknowledge.calls[0]?.input, {
      dataset: 'events',
      topic: 'events',
      partition: 3,
      commitId: 'c-1',
      offset: 150n,
      filePaths: ['s3://b/100-150.parquet'],
    })
    assert.equal(p.context().chainStart, 150n)
    await p.done(p.acknowledge, undefined)
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'idle' } })
    assert.deepEqual(
      p.emitted.map((e) => e.type),
      ['participant.synced', 'participant.status-sent', 'participant.committed'],
    )
  })

  test('a first commit moves the chain origin to the table', async () => {
    const p = participant()
    await p.done(p.sync, { position: 0n, origin: 'offset-reset', tableOffset: undefined })
    p.actor.send({ type: 'control.start-commit', commitId: 'c-1', tableOffset: undefined })
    p.actor.send({ type: 'control.end-commit', commitId: 'c-1' })
    await p.done(p.flush, {
      ...(written(0n, 10n) as Extract<PartitionWriteStatus, { kind: 'written' }>),
      origin: 'offset-reset',
    })
    await p.done(p.send, undefined)
    p.actor.send({
      type: 'control.commit-acked',
      commitId: 'c-1',
      outcome: { kind: 'committed', offset: 10n, filePaths: [] },
    })
    assert.equal(p.context().origin, 'table')
    assert.equal(p.context().chainStart, 10n)
  })

  test('answers END while paused by backpressure, and stays paused', async () => {
    const p = await writingAt(100n)
    p.actor.send({ type: 'backpressure.pause' })
    assert.deepEqual(p.value(), { active: { ingest: 'paused', commit: 'idle' } })
    assert.equal(p.holds.started, 1)
    p.actor.send({ type: 'control.end-commit', commitId: 'c-1' })
    assert.deepEqual(p.value(), { active: { ingest: 'paused', commit: 'flushing' } })
    await p.done(p.flush, written(100n, 150n))
    await p.done(p.send, undefined)
    assert.deepEqual(p.value(), { active: { ingest: 'paused', commit: 'reported' } })
    p.actor.send({ type: 'backpressure.resume' })
    assert.equal(p.holds.released, 1, 'leaving paused resumes the consumer')
    assert.equal(isWriting(p.actor.getSnapshot()), true)
  })

  test('a pause during a sync takes effect when the sync ends', async () => {
    const p = participant()
    p.actor.send({ type: 'backpressure.pause' })
    await p.done(p.sync, { position: 5n, origin: 'table', tableOffset: 5n })
    assert.deepEqual(p.value(), { active: { ingest: 'paused', commit: 'idle' } })
  })

  test('on REJECTED drops back through syncing to the table offset the ACK names', async () => {
    const p = await reported(written(100n, 150n))
    p.actor.send({
      type: 'control.commit-acked',
      commitId: 'c-1',
      outcome: { kind: 'rejected', reason: 'behind-table', tableOffset: 120n },
    })
    assert.deepEqual(p.value(), { active: { ingest: 'syncing', commit: 'idle' } })
    assert.deepEqual(p.sync.calls[1]?.input, {
      dataset: 'events',
      topic: 'events',
      partition: 3,
      reason: 'rejected',
      tableOffset: 120n,
    })
    assert.equal(isWriting(p.actor.getSnapshot()), false)
    await p.done(p.sync, { position: 120n, origin: 'table', tableOffset: 120n })
    assert.equal(p.context().chainStart, 120n)
    assert.ok(p.emitted.some((e) => e.type === 'participant.rejected' && e.tableOffset === 120n))
  })

  test('an ACK of its commit during a sync leaves the cleanup to the sync', async () => {
    const p = await reported(written(100n, 150n))
    p.actor.send({ type: 'ingest.resync', reason: 'offset-out-of-range' })
    assert.deepEqual(p.value(), { active: { ingest: 'syncing', commit: 'reported' } })
    p.actor.send({
      type: 'control.commit-acked',
      commitId: 'c-1',
      outcome: { kind: 'committed', offset: 150n, filePaths: [] },
    })
    assert.deepEqual(p.value(), { active: { ingest: 'syncing', commit: 'idle' } })
    assert.equal(p.acknowledge.calls.length, 0)
    await p.done(p.sync, { position: 150n, origin: 'table', tableOffset: 150n })
    assert.equal(p.context().chainStart, 150n)
  })

  test('an ACK of its commit during a sync that read the table before it: the chain starts where the commit ended', async () => {
    const p = await reported(written(100n, 150n))
    p.actor.send({ type: 'ingest.resync', reason: 'out-of-range' })
    p.actor.send({
      type: 'control.commit-acked',
      commitId: 'c-1',
      outcome: { kind: 'committed', offset: 150n, filePaths: [] },
    })
    // kept files up to 300 from the table's offset of before the commit, and the log start at 500
    await p.done(p.sync, { position: 100n, origin: 'table', tableOffset: 100n, logStartJump: { from: 300n, to: 500n } })
    assert.equal(p.context().chainStart, 150n)
    assert.deepEqual(p.context().logStartJump, { from: 300n, to: 500n })
    p.actor.send({ type: 'control.start-commit', commitId: 'c-2', tableOffset: 150n })
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'idle' } }, 'in line')
    // the next sync is its own again
    p.actor.send({ type: 'ingest.resync', reason: 'out-of-range' })
    await p.done(p.sync, { position: 120n, origin: 'table', tableOffset: 120n })
    assert.equal(p.context().chainStart, 120n)
  })

  test('an ACK that committed someone else for this partition resyncs', async () => {
    const p = await reported(written(100n, 150n))
    p.actor.send({
      type: 'control.commit-acked',
      commitId: 'c-1',
      outcome: { kind: 'committed', offset: 170n, filePaths: [] },
    })
    assert.deepEqual(p.value(), { active: { ingest: 'syncing', commit: 'idle' } })
    assert.equal(p.sync.calls[1]?.input.reason, 'committed-elsewhere')
    assert.equal(p.acknowledge.calls.length, 0, 'nothing of ours was committed: nothing to delete')
  })

  test('an ACK without this partition keeps its files and its chain for the next round', async () => {
    const p = await reported(written(100n, 150n))
    p.actor.send({ type: 'control.commit-acked', commitId: 'c-1', outcome: { kind: 'not-included' } })
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'idle' } })
    assert.equal(p.context().chainStart, 100n)
    assert.deepEqual(p.emitted.at(-1), { type: 'participant.round-missed', commitId: 'c-1', reported: 'written' })
  })

  test('an ACK of another round is ignored while awaiting its own', async () => {
    const p = await reported(written(100n, 150n))
    p.actor.send({ type: 'control.commit-acked', commitId: 'c-0', outcome: { kind: 'not-included' } })
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'reported' } })
  })

  test('a START that is out of line with the table resyncs to its offset', async () => {
    const p = await writingAt(100n)
    p.actor.send({ type: 'control.start-commit', commitId: 'c-2', tableOffset: 150n })
    assert.deepEqual(p.value(), { active: { ingest: 'syncing', commit: 'idle' } })
    assert.deepEqual(p.sync.calls[1]?.input.tableOffset, 150n)
    assert.equal(p.sync.calls[1]?.input.reason, 'out-of-line')
    assert.deepEqual(p.emitted.at(-1), {
      type: 'participant.out-of-line',
      commitId: 'c-2',
      tableOffset: 150n,
      chainStart: 100n,
    })
  })

  test('a START in line across a log-start jump changes nothing', async () => {
    const p = await writingAt(500n, { tableOffset: 100n, logStartJump: { from: 100n, to: 500n } })
    p.actor.send({ type: 'control.start-commit', commitId: 'c-2', tableOffset: 100n })
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'idle' } })
    p.actor.send({ type: 'control.end-commit', commitId: 'c-2' })
    assert.deepEqual(p.flush.calls[0]?.input.logStartJump, { from: 100n, to: 500n })
  })

  test('an ACK of a round cut before a sync found a log-start jump keeps the jump declared for the next round', async () => {
    const p = await reported(written(100n, 150n))
    p.actor.send({ type: 'ingest.resync', reason: 'out-of-range' })
    assert.deepEqual(p.value(), { active: { ingest: 'syncing', commit: 'reported' } })
    // The sync kept the files up to 300 (150..300 read since the cut) and found the log start at 500.
    await p.done(p.sync, { position: 100n, origin: 'table', tableOffset: 100n, logStartJump: { from: 300n, to: 500n } })
    p.actor.send({
      type: 'control.commit-acked',
      commitId: 'c-1',
      outcome: { kind: 'committed', offset: 150n, filePaths: ['s3://b/100-150.parquet'] },
    })
    await p.done(p.acknowledge, undefined)
    assert.equal(p.context().chainStart, 150n)
    assert.deepEqual(p.context().logStartJump, { from: 300n, to: 500n })
    p.actor.send({ type: 'control.start-commit', commitId: 'c-2', tableOffset: 150n })
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'idle' } }, 'in line')
    p.actor.send({ type: 'control.end-commit', commitId: 'c-2' })
    assert.deepEqual(p.flush.calls[1]?.input.logStartJump, { from: 300n, to: 500n })
    assert.equal(p.flush.calls[1]?.input.chainStart, 150n)
  })

  test('an ACK that commits past a declared jump clears it', async () => {
    const jumped = await writingAt(500n, { tableOffset: 100n, logStartJump: { from: 100n, to: 500n } })
    jumped.actor.send({ type: 'control.start-commit', commitId: 'c-1', tableOffset: 100n })
    jumped.actor.send({ type: 'control.end-commit', commitId: 'c-1' })
    await jumped.done(jumped.flush, written(500n, 600n))
    await jumped.done(jumped.send, undefined)
    jumped.actor.send({
      type: 'control.commit-acked',
      commitId: 'c-1',
      outcome: { kind: 'committed', offset: 600n, filePaths: ['s3://b/500-600.parquet'] },
    })
    assert.equal(jumped.context().chainStart, 600n)
    assert.equal(jumped.context().logStartJump, undefined)
  })

  test('a resync asked for during a flush waits until the status is sent', async () => {
    const p = await writingAt(100n)
    p.actor.send({ type: 'control.end-commit', commitId: 'c-1' })
    p.actor.send({ type: 'ingest.resync', reason: 'offset-out-of-range' })
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'flushing' } })
    await p.done(p.flush, written(100n, 150n))
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'sending' } })
    await p.done(p.send, undefined)
    assert.deepEqual(p.value(), { active: { ingest: 'syncing', commit: 'reported' } })
    assert.equal(p.sync.calls[1]?.input.reason, 'offset-out-of-range')
  })

  test('an END that arrives during a sync is answered once the sync is done', async () => {
    const p = participant()
    p.actor.send({ type: 'control.end-commit', commitId: 'c-1' })
    assert.deepEqual(p.value(), { active: { ingest: 'syncing', commit: 'idle' } })
    await p.done(p.sync, { position: 7n, origin: 'table', tableOffset: 7n })
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'flushing' } })
    assert.equal(p.flush.calls[0]?.input.chainStart, 7n)
  })

  test('a newer START while awaiting an ACK closes the old round; its END is answered afresh', async () => {
    const p = await reported(written(100n, 150n), 'c-1')
    p.actor.send({ type: 'control.start-commit', commitId: 'c-2', tableOffset: 100n })
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'idle' } })
    p.actor.send({ type: 'control.end-commit', commitId: 'c-2' })
    assert.equal(p.flush.calls[1]?.input.commitId, 'c-2')
    assert.equal(p.flush.calls[1]?.input.chainStart, 100n)
  })

  test('a round that closes while its status is being built is not answered', async () => {
    const p = await writingAt(100n)
    p.actor.send({ type: 'control.end-commit', commitId: 'c-1' })
    p.actor.send({ type: 'control.commit-acked', commitId: 'c-1', outcome: { kind: 'not-included' } })
    await p.done(p.flush, written(100n, 150n))
    assert.deepEqual(p.value(), { active: { ingest: 'writing', commit: 'idle' } })
    assert.equal(p.send.calls.length, 0)
  })

  test('a flush that fails still answers, with an ERROR status', async () => {
    const p = await writingAt(100n)
    p.actor.send({ type: 'control.end-commit', commitId: 'c-1' })
    p.flush.calls[0]?.reject(new Error('storage unreachable'))
    await settle()
    assert.deepEqual(p.send.calls[0]?.input.status, {
      kind: 'error',
      topic: 'events',
      partition: 3,
      message: 'storage unreachable',
    })
  })

  test('a failed sync is retried after the sync retry delay', async () => {
    const p = participant()
    p.sync.calls[0]?.reject(new Error('catalog down'))
    await settle()
    assert.deepEqual(p.value(), { active: { ingest: 'waitingToSync', commit: 'idle' } })
    p.clock.increment(499)
    assert.equal(p.sync.calls.length, 1)
    p.clock.increment(1)
    assert.equal(p.sync.calls.length, 2)
    assert.equal(p.sync.calls[1]?.input.reason, 'assigned')
  })

  test('REVOKED aborts the flush in flight, rotates, and ends', async () => {
    const p = await writingAt(100n)
    p.actor.send({ type: 'control.end-commit', commitId: 'c-1' })
    const flushSignal = p.flush.calls[0]?.signal
    p.actor.send({ type: 'partition.revoked' })
    assert.equal(flushSignal?.aborted, true)
    assert.equal(p.value(), 'revoking')
    await p.done(p.revoke, undefined)
    assert.equal(p.value(), 'revoked')
    assert.equal(p.actor.getSnapshot().status, 'done')
    assert.deepEqual(p.emitted.at(-1), { type: 'participant.revoked', rotated: true })
  })
})
