// The SharedWal on a real WAL folder, with the table, broker and storage as small fakes: the
// orderings of a revocation, a late ACK and a failed log that the record path can meet.
import assert from 'node:assert/strict'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, type TestContext, test } from 'node:test'
import type { CommitAcks, LogStartJump, PartitionWriteStatus } from '../protocol/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'
import { createMetrics, silentLogger } from '../shared/telemetry/index.ts'
import type { FlushInput, SyncReason } from './machine/index.ts'
import type { DecodedBatch } from './partition-ingest.ts'
import { PartitionQueue } from './partition-queue.ts'
import { PartitionSlot, type SlotEnvironment } from './partition-slot.ts'
import { SharedPartitionWork } from './shared-partition-work.ts'
import { SharedWal } from './shared-wal.ts'
import { daysAndCountries, eventSchema, events, temporaryDirectory } from './wal/test-support.ts'

const topic = 'events'

interface Harness {
  wal: SharedWal
  env: SlotEnvironment
  dir: string
  /** The table's offsets per partition, as a sync reads them. */
  table: Map<number, bigint>
  /** Holds every table read until the returned function is called (a frozen catalog or storage). */
  holdTable(): () => void
  assigned: number[]
  /** The broker's log start per partition (0 when absent). */
  logStarts: Map<number, bigint>
}

/** `dir`: a WAL folder an earlier harness wrote (a worker restarted on it); a new one by default. */
async function harness(t: TestContext, existing?: string): Promise<Harness> {
  const dir = existing ?? (await temporaryDirectory(t))
  let gate: Promise<void> | undefined
  const h: Harness = {
    wal: undefined as unknown as SharedWal,
    env: undefined as unknown as SlotEnvironment,
    dir,
    table: new Map(),
    holdTable() {
      let open!: () => void
      gate = new Promise((resolve) => {
        open = resolve
      })
      return () => {
        gate = undefined
        open()
      }
    },
    assigned: [],
    logStarts: new Map(),
  }
  const env = {
    dataset: { name: 'orders', topic },
    table: {
      schema: eventSchema,
      spec: daysAndCountries,
      dataLocation: 'file:///warehouse/orders/data',
      offsets: async () => {
        await gate
        return new Map(h.table)
      },
    },
    wal: {
      dir,
      maxFileSizeBytes: 1 << 30,
      maxFileAgeMinutes: 60,
      maxOpenSegmentsPerPartition: 100,
      compression: 'none',
    },
    bloomFieldIds: [],
    autoOffsetReset: 'earliest',
    broker: {
      logStart: async (partition: number) => h.logStarts.get(partition) ?? 0n,
      logEnd: async () => 0n,
      committed: async () => undefined,
    },
    syncRetryMs: 1000,
    reader: { assigned: () => h.assigned },
    uploads: {
      enqueue: async (segment: { uuid: string; dataFile: DataFile }, location: string) => ({
        ...segment.dataFile,
        filePath: `${location}/${segment.uuid}.parquet`,
      }),
    },
    logger: silentLogger,
    metrics: createMetrics({ defaultMetrics: false }),
    sidecars: new Map(),
    commitGroupOffset() {},
    changed() {},
  } as unknown as SlotEnvironment
  h.env = env
  h.wal = new SharedWal(env, new PartitionQueue())
  env.shared = h.wal
  t.after(() => h.wal.close())
  return h
}

function batch(from: bigint, count: number): DecodedBatch {
  const rows = events(Number(from), count)
  return { from, next: from + BigInt(count), records: count, rows, bad: [], oldestTimestampMs: 1 }
}

function flushInput(partition: number, commitId: string, chainStart: bigint, logStartJump?: LogStartJump): FlushInput {
  return {
    dataset: 'orders',
    topic,
    partition,
    commitId,
    chainStart,
    origin: 'table',
    ...(logStartJump ? { logStartJump } : {}),
  } as FlushInput
}

function committed(offsets: Record<number, bigint>, acceptedRotations: string[]): CommitAcks {
  return {
    committed: Object.entries(offsets).map(([partition, offset]) => ({
      topic,
      partition: Number(partition),
      offset,
      filePaths: [],
    })),
    rejected: [],
    acceptedRotations,
  } as unknown as CommitAcks
}

/** Syncs partitions 0..n-1 from the table at 0 and appends `rows` rows to each. */
async function started(h: Harness, partitions: number, rows: number): Promise<void> {
  h.assigned = Array.from({ length: partitions }, (_, p) => p)
  for (const p of h.assigned) h.table.set(p, 0n)
  await Promise.all(h.assigned.map((p) => h.wal.sync(p)))
  for (const p of h.assigned) assert.equal(await h.wal.append(p, batch(0n, rows), () => true), true)
}

/** One round: every partition flushes, the statuses are composed; returns the rotations reported. */
async function round(h: Harness, commitId: string, chainStart: bigint): Promise<string[]> {
  const statuses = await Promise.all(h.assigned.map((p) => h.wal.flush(p, flushInput(p, commitId, chainStart))))
  assert.ok(statuses.every((status) => status !== 'gap'))
  return h.wal.compose(commitId, statuses as PartitionWriteStatus[]).rotations.map((rotation) => rotation.id)
}

/**
 * Partitions 0..n-1 committed up to 10; then `partition` reads [10, 30) into the WAL only, and
 * retention deletes [30, 500) before it reads on: its fetch comes back out of range and it syncs.
 */
async function jumpedAfterKeptFiles(h: Harness, partitions: number, partition: number) {
  await started(h, partitions, 10)
  const acked = Object.fromEntries(h.assigned.map((p) => [p, 10n]))
  await h.wal.acknowledged('r0', committed(acked, await round(h, 'r0', 0n)))
  for (const p of h.assigned) h.table.set(p, 10n)
  assert.equal(await h.wal.append(partition, batch(10n, 20), () => true), true)
  h.logStarts.set(partition, 500n)
  return h.wal.sync(partition)
}

describe('the shared WAL on the record path', () => {
  test('a partition revoked and assigned again while syncs wait for a frozen table is placed after its release, never left unread', async (t) => {
    const h = await harness(t)
    await started(h, 3, 10)
    const thaw = h.holdTable()
    const first = h.wal.sync(1) // holds the queue, waiting on the table
    await new Promise((resolve) => setImmediate(resolve))
    const second = h.wal.sync(2) // the next batch, queued behind it
    const released = h.wal.release(0) // partition 0 revoked: queued behind that batch
    const again = h.wal.sync(0) // and assigned again: its sync must come after the release
    thaw()
    const [synced] = await Promise.all([again, first, second, released])
    assert.equal(synced.position, 0n)
    assert.equal(h.wal.position(0), 0n, 'the partition is read again from the table, not left without a position')
    assert.equal(await h.wal.append(0, batch(0n, 5), () => true), true)
  })

  test('a partition flushed as synced that the WAL no longer reads answers a gap and syncs again, not empty forever', async (t) => {
    const h = await harness(t)
    await started(h, 2, 10)
    // The state a lost ordering of revocation and sync left: the machine still synced, the WAL
    // without the partition (its rows dropped as not assigned, no position, nothing fetched).
    await h.wal.release(0)
    assert.equal(h.wal.position(0), undefined)
    const resyncs: SyncReason[] = []
    const work = new SharedPartitionWork(h.env, 0, h.wal, (reason) => resyncs.push(reason))
    await assert.rejects(work.flush(flushInput(0, 'r1', 0n), new AbortController().signal))
    assert.deepEqual(resyncs, ['wal-gap'])
    const other = await h.wal.flush(1, flushInput(1, 'r1', 0n))
    // its rows shared the dropped rotation: it was rewound to read them again, and is still read
    assert.ok(other !== 'gap' && other.kind === 'empty', 'the partition the WAL reads is no gap')
    assert.equal(h.wal.position(1), 0n)
    const synced = await h.wal.sync(0)
    assert.equal(synced.position, 0n)
    assert.equal(h.wal.position(0), 0n, 'read again from the table')
    const status = await h.wal.flush(0, flushInput(0, 'r2', 0n))
    assert.ok(status !== 'gap' && status.kind === 'empty')
  })

  test('the late ACK of an older round, after a newer round committed further, moves nothing back', async (t) => {
    const h = await harness(t)
    await started(h, 2, 10)
    const older = await round(h, 'r1', 0n) // its commit's outcome is unknown; it lands late
    for (const p of h.assigned) await h.wal.append(p, batch(10n, 10), () => true)
    const newer = await round(h, 'r2', 0n)
    await h.wal.acknowledged('r2', committed({ 0: 20n, 1: 20n }, newer))
    for (const p of h.assigned) await h.wal.append(p, batch(20n, 10), () => true)
    await h.wal.rotateForMemory() // an uncommitted rotation [20, 30)
    await h.wal.acknowledged('r1', committed({ 0: 10n, 1: 10n }, older))
    assert.deepEqual([h.wal.position(0), h.wal.position(1)], [30n, 30n], 'nothing is read again')
    const status = await h.wal.flush(0, flushInput(0, 'r3', 20n))
    assert.ok(status !== 'gap' && status.kind === 'written')
    assert.deepEqual(status.range, { start: 20n, end: 30n })
  })

  test('retention past kept files: the round that took them alone and its ACK leave the partition reading at the log start, the next status declares the jump', async (t) => {
    const h = await harness(t)
    const synced = await jumpedAfterKeptFiles(h, 2, 1)
    const jump = { from: 30n, to: 500n }
    assert.deepEqual([synced.chainStart, synced.logStartJump, h.wal.position(1)], [10n, jump, 500n])
    // The round comes before anything past the log start is read: the kept files go alone.
    assert.equal(synced.reused, 1)
    const status = await h.wal.flush(1, flushInput(1, 'r1', 10n, jump))
    assert.ok(status !== 'gap' && status.kind === 'written')
    assert.deepEqual([status.range, status.logStartJump], [{ start: 10n, end: 30n }, undefined])
    const other = await h.wal.flush(0, flushInput(0, 'r1', 10n))
    const composed = h.wal.compose('r1', [other as PartitionWriteStatus, status])
    await h.wal.acknowledged(
      'r1',
      committed(
        { 1: 30n },
        composed.rotations.map((r) => r.id),
      ),
    )
    assert.equal(h.wal.position(1), 500n, 'the ACK does not send the partition back into the deleted records')
    assert.equal(await h.wal.append(1, batch(500n, 5), () => true), true)
    // Any later ACK keeps it there too, and the next status declares the jump before its range.
    await h.wal.acknowledged('r2', committed({}, []))
    assert.equal(h.wal.position(1), 505n)
    const next = await h.wal.flush(1, flushInput(1, 'r3', 30n, jump))
    assert.ok(next !== 'gap' && next.kind === 'written')
    assert.deepEqual([next.range, next.logStartJump], [{ start: 500n, end: 505n }, jump])
  })

  test('files read past a log-start jump keep it through a resync and a restart while the log start stays within them', async (t) => {
    const h = await harness(t)
    // Partition 1 holds [10, 30), retention takes [30, 500), and it reads [500, 520) past the jump.
    const jump = { from: 30n, to: 500n }
    assert.deepEqual((await jumpedAfterKeptFiles(h, 2, 1)).logStartJump, jump)
    assert.equal(await h.wal.append(1, batch(500n, 20), () => true), true)
    // A round cuts both, and its commit does not land (the catalog is down, say).
    const status = await h.wal.flush(1, flushInput(1, 'r1', 10n, jump))
    assert.ok(status !== 'gap' && status.kind === 'written')
    assert.deepEqual([status.range, status.logStartJump], [{ start: 10n, end: 520n }, jump])
    // Retention moves on into what the WAL holds, and the partition syncs again: the files past
    // the jump stay, and so does the jump; nothing the WAL holds is counted lost.
    h.logStarts.set(1, 510n)
    const resynced = await h.wal.sync(1)
    assert.deepEqual([resynced.chainStart, resynced.logStartJump, h.wal.position(1)], [10n, jump, 520n])
    const again = await h.wal.flush(1, flushInput(1, 'r2', 10n, jump))
    assert.ok(again !== 'gap' && again.kind === 'written')
    assert.deepEqual([again.range, again.logStartJump], [{ start: 10n, end: 520n }, jump])
    // A worker that restarts on the folder finds the same chain: the manifest recorded the jump.
    await h.wal.close()
    const restarted = await harness(t, h.dir)
    restarted.table = h.table
    restarted.assigned = [0, 1]
    restarted.logStarts.set(1, 515n)
    const recovered = await restarted.wal.sync(1)
    assert.deepEqual(
      [recovered.chainStart, recovered.logStartJump, restarted.wal.position(1), recovered.reused],
      [10n, jump, 520n, 2],
    )
    const afterRestart = await restarted.wal.flush(1, flushInput(1, 'r3', 10n, jump))
    assert.ok(afterRestart !== 'gap' && afterRestart.kind === 'written')
    assert.deepEqual([afterRestart.range, afterRestart.logStartJump], [{ start: 10n, end: 520n }, jump])
  })

  test('a log start past the end of the files read after a jump: a chain declares one jump, so they go and it runs to the log start', async (t) => {
    const h = await harness(t)
    assert.deepEqual((await jumpedAfterKeptFiles(h, 1, 0)).logStartJump, { from: 30n, to: 500n })
    assert.equal(await h.wal.append(0, batch(500n, 20), () => true), true)
    assert.ok((await h.wal.flush(0, flushInput(0, 'r1', 10n, { from: 30n, to: 500n }))) !== 'gap')
    h.logStarts.set(0, 600n)
    const resynced = await h.wal.sync(0)
    const jump = { from: 30n, to: 600n }
    assert.deepEqual(
      [resynced.chainStart, resynced.logStartJump, h.wal.position(0), resynced.reused],
      [10n, jump, 600n, 1],
    )
    assert.equal(await h.wal.append(0, batch(600n, 5), () => true), true)
    const status = await h.wal.flush(0, flushInput(0, 'r2', 10n, jump))
    assert.ok(status !== 'gap' && status.kind === 'written')
    assert.deepEqual([status.range, status.logStartJump], [{ start: 10n, end: 605n }, jump])
  })

  test('a WAL that failed in a cut outside an append makes the flush ask for the sync that repairs it', async (t) => {
    const h = await harness(t)
    await started(h, 2, 10)
    await rm(join(h.dir, 'orders', 'shared'), { recursive: true, force: true }) // the disk fails under the WAL
    await assert.rejects(h.wal.rotateForMemory())
    assert.equal(h.wal.failed, true)
    assert.equal(h.wal.position(0), undefined, 'a failed WAL is not read from: no append will ask for a sync')
    const resyncs: SyncReason[] = []
    const work = new SharedPartitionWork(h.env, 0, h.wal, (reason) => resyncs.push(reason))
    await assert.rejects(work.flush(flushInput(0, 'r1', 0n), new AbortController().signal))
    assert.deepEqual(resyncs, ['wal-failed'])
    const synced = await h.wal.sync(0)
    assert.equal(h.wal.failed, false)
    assert.equal(synced.position, 0n)
    assert.equal(h.wal.position(1), 0n, 'the other partition reads its lost rows again too')
  })

  test('a member that takes a partition sets the group offset to the table offset: the last ACK may have gone to its old owner', async (t) => {
    const h = await harness(t)
    const commits: Array<[number, bigint]> = []
    h.env.commitGroupOffset = (partition, offset) => {
      commits.push([partition, offset])
    }
    h.assigned = [2]
    h.table.set(2, 97n)
    const slot = new PartitionSlot(h.env, 2, new PartitionQueue(), false)
    t.after(() => slot.shutdown())
    for (let i = 0; i < 100 && commits.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    assert.deepEqual(commits, [[2, 97n]])
  })
})
