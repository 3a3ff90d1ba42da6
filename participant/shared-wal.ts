// The shared-segment layout on the record path (docs/architecture.md, "Shared segments"): one
// SharedLog per dataset on this worker, appended to by every assigned Kafka partition, and what the
// partitions' machines ask of it. A partition's machine still syncs, flushes, acknowledges and
// lets go on its own; here each of those becomes one step on the dataset's queue (every partition
// of the dataset shares one, because every step may move every partition: a cut claims all of
// them, a walk rewinds any of them), and the WAL-wide parts run once: the round's cut and uploads
// (the first flush of a round makes them, the others share them), the ACK's deletes and walk (the
// participant hands the ACK here before its machines see it), the size/age/memory cuts.
//
// A round's snapshot, each partition's summary over it and the round's one WRITE-STATUS are
// SharedRounds' (shared-rounds.ts).
import type { CommitAcks, LogStartJump, PartitionWriteStatus, RotationStatus } from '../protocol/index.ts'
import type { PartitionSpec, Schema } from '../shared/iceberg/index.ts'
import { FloeError, messageOf } from '../shared/index.ts'
import { type ChainPlacement, placeChain } from './chain.ts'
import type { PartitionEarlierFloors } from './earlier-routes.ts'
import { type FlushInput, jumpAhead, type SyncResult } from './machine/index.ts'
import type { DecodedBatch } from './partition-ingest.ts'
import type { PartitionQueue } from './partition-queue.ts'
import type { SlotEnvironment } from './partition-slot.ts'
import { segmentUploadsOf } from './partition-work.ts'
import { Gathered, type StartingPoint, startingPointAfter } from './positioning.ts'
import type { SegmentUploads } from './segment-uploads.ts'
import { SharedRounds } from './shared-rounds.ts'
import { ackPlan, type ChainState } from './shared-status.ts'
import { openSharedLog } from './shared-wal-open.ts'
import { PartitionFloors, type SkipFloors } from './skip-floors.ts'
import {
  partitionKey,
  partitionOfKey,
  type RotationReason,
  recordedJumps,
  type SharedLog,
  type SharedRotation,
  type SharedSegment,
  sharedLogDirectory,
} from './wal/index.ts'

/** A partition's sync, with where its chain starts and how many kept rotations hold its ranges. */
export type SharedSync = SyncResult & {
  chainStart: bigint
  reused: number
  /** The jump the kept rotations recorded: counted by the process that made it (a restart does not count it again). */
  recordedJump?: LogStartJump
}

/** A partition's batch waiting to be appended with the others of its fetch. */
interface WaitingAppend {
  partition: number
  batch: DecodedBatch
  appendable: () => boolean
  resolve(appended: boolean): void
  reject(error: unknown): void
}

/** At most this many rotations in one WRITE-STATUS (the rest wait for the next round). */
const maxRotationsPerStatus = 64

export class SharedWal {
  readonly #env: SlotEnvironment
  readonly #queue: PartitionQueue
  readonly #dir: string
  readonly #uploads: SegmentUploads
  readonly #labels: { dataset: string }
  #log: SharedLog | undefined
  /** Per synced partition: where its uncommitted chain starts, as its machine holds it. */
  readonly #chains = new Map<number, ChainState>()
  /** Partitions recovery kept rotations of that have not synced yet, with the table's offset. */
  readonly #recovered = new Map<number, bigint | undefined>()
  readonly #rounds: SharedRounds
  /** Batches asked to be appended in this turn of the event loop (append). */
  #appends: WaitingAppend[] = []
  /** Partitions waiting to sync, answered together in one turn on the queue. */
  readonly #syncs = new Gathered<SharedSync>(
    (partitions) => this.#syncAll(partitions),
    (run) => void this.#queue.run(run),
  )
  /** Per partition waiting to sync: its log start, asked when it asked. */
  readonly #logStarts = new Map<number, Promise<bigint>>()
  /** A routed dataset's partitions read again from the ledger: what their tables hold already. */
  readonly #floors = new PartitionFloors()
  /** Releases queued and not yet done: a sync of the same partition waits for its release. */
  readonly #releasing = new Map<number, Promise<void>>()
  readonly #recorder = {
    markUploaded: (segment: SharedSegment, location: string) =>
      this.#log?.markUploaded(segment.uuid, location) ?? Promise.resolve(undefined),
  }

  constructor(env: SlotEnvironment, queue: PartitionQueue) {
    this.#env = env
    this.#queue = queue
    this.#dir = sharedLogDirectory(
      env.wal.dir,
      env.dataset.name,
      env.dataset.severalTopics ? env.dataset.topic : undefined,
    )
    this.#labels = { dataset: env.dataset.name }
    this.#uploads = segmentUploadsOf(env)
    this.#rounds = new SharedRounds({
      cut: () => this.#queue.run(() => this.#cutForRound()),
      upload: (segment) => this.#uploads.start(this.#recorder, segment),
    })
  }

  /** The tables whose records of the partition below a floor are not written again; undefined: none. */
  skipFloors(partition: number): SkipFloors | undefined {
    return this.#floors.get(partition)
  }

  /** What the ledger's earlier route generations' tables hold of the partition; undefined: nothing. */
  earlierFloors(partition: number): PartitionEarlierFloors | undefined {
    return this.#env.route?.earlier?.of(this.#env.dataset.topic, partition)
  }

  /** Where the partition reads next; undefined while it is not tracked or the WAL is not open. */
  position(partition: number): bigint | undefined {
    return this.#log?.state === 'open' ? this.#log.position(partition) : undefined
  }

  get heldBytes(): number {
    return this.#log?.heldBytes ?? 0
  }
  get bufferedHeldBytes(): number {
    return this.#log?.bufferedHeldBytes ?? 0
  }
  get openSegmentCount(): number {
    return this.#log?.openSegmentCount ?? 0
  }
  get readySegmentCount(): number {
    return this.#log?.readySegmentCount ?? 0
  }
  get readyBytes(): number {
    return this.#log?.readyBytes ?? 0
  }

  /**
   * Positions the partition from the table (invariant 2) and makes the WAL agree: what it read
   * since the last cut is cut first (so it moves with nothing uncut, S1), then the walk keeps the
   * rotations that chain from where the partition's chain starts and drops the rest whole.
   * Partitions that ask while others wait for their turn on the queue are synced together, with
   * one table read and one walk (an assignment of 1,000 partitions made 1,000 of each); the log
   * start is asked at once, before the turn, so theirs are asked together too (BrokerPositions).
   */
  sync(partition: number): Promise<SharedSync> {
    // A partition revoked and assigned again at once: its new sync must not join a batch queued
    // before the old one's release, or the release (run after it) would let go of what it placed.
    const releasing = this.#releasing.get(partition)
    if (releasing) return releasing.then(() => this.sync(partition))
    const logStart = this.#env.broker.logStart(partition)
    logStart.catch(() => {})
    this.#logStarts.set(partition, logStart)
    return this.#syncs.get(partition) as Promise<SharedSync>
  }

  async #syncAll(partitions: number[]): Promise<Map<number, SharedSync>> {
    const log = await this.#open()
    if (log.state === 'failed') await log.discardOpen()
    if (partitions.some((partition) => log.hasUncut(partition))) await this.#cut(log, 'resync')
    const tableOffsets = await this.#env.table.offsets()
    // all at once, so the group offsets the partitions the table never saw need are one request
    const asked = partitions.map(async (partition): Promise<[number, StartingPoint]> => {
      const logStart = this.#logStarts.get(partition) ?? this.#env.broker.logStart(partition)
      this.#logStarts.delete(partition)
      return [partition, await startingPointAfter(this.#env, partition, tableOffsets.get(partition), logStart)]
    })
    const points = new Map(await Promise.all(asked))
    for (const partition of partitions) {
      this.#chains.delete(partition)
      this.#recovered.delete(partition)
    }
    const starts = new Map([...points].map(([partition, point]) => [partition, point.start]))
    // The kept rotations are walked across the jumps they recorded, and the chain keeps that jump;
    // one whose log start has also passed the end of what it kept walks again without its jump.
    const pastJump = new Set<number>()
    const recorded = new Map<number, LogStartJump>()
    let placed = new Map<number, StartingPoint & ChainPlacement>()
    for (;;) {
      const { next, jumps } = await this.#walk(log, 'resync', starts, partitions, undefined, pastJump)
      placed = new Map()
      for (const [partition, point] of points) {
        const kept = next.get(partition)
        const keptUpTo = kept !== undefined && kept !== point.start ? kept : undefined
        const keptJump = jumps.get(partition)
        if (keptJump && !recorded.has(partition)) recorded.set(partition, keptJump)
        placed.set(partition, { ...point, ...placeChain({ ...point, keptUpTo, ...(keptJump ? { keptJump } : {}) }) })
      }
      const again = partitions.filter((partition) => placed.get(partition)?.dropPastJump)
      if (again.length === 0) break
      for (const partition of again) pastJump.add(partition)
    }
    const place = (partition: number) => {
      const { chainStart, position, logStartJump, origin } = placed.get(partition) as StartingPoint & ChainPlacement
      // a floor stays true (the table holds those records), so the sync that follows a rejection
      // reads again with the floors its ACK named; a read from the jump's end records the jump
      const after = logStartJump && position === logStartJump.to ? logStartJump.from : undefined
      log.read(partition, position, this.#floors.get(partition)?.byTable, after)
      this.#chains.set(partition, {
        topic: log.topic,
        partition,
        chainStart,
        origin,
        ...(logStartJump ? { logStartJump } : {}),
      })
    }
    // The others are placed (read, with their chains) before the kept rotations of those that
    // must drop them go: a rotation shared with a placed partition rewinds it, as a later sync would.
    const dropping = partitions.filter((partition) => placed.get(partition)?.dropKept)
    for (const partition of partitions) if (!dropping.includes(partition)) place(partition)
    if (dropping.length > 0) {
      await this.#walk(log, 'resync', new Map(dropping.map((partition) => [partition, undefined])), dropping)
      for (const partition of dropping) place(partition)
    }
    const reused = new Map<number, number>()
    for (const rotation of log.rotations) {
      for (const partition of new Set(rotation.ranges.map((range) => range.partition))) {
        reused.set(partition, (reused.get(partition) ?? 0) + 1)
      }
    }
    const synced = new Map<number, SharedSync>()
    for (const [partition, { origin, tableOffset, chainStart, logStartJump }] of placed) {
      const result = { position: chainStart, origin, tableOffset, chainStart, reused: reused.get(partition) ?? 0 }
      const recordedJump = recorded.get(partition)
      synced.set(partition, {
        ...result,
        ...(logStartJump ? { logStartJump } : {}),
        ...(recordedJump ? { recordedJump } : {}),
      })
    }
    return synced
  }

  /**
   * Appends a batch fetched at its `from` if `appendable` still says yes; false if it was not
   * appended. The batches of every partition that asks in one turn of the event loop (the record
   * loop asks for a whole fetch at once) go in together, in one step (SharedLog.appendFetched).
   */
  append(partition: number, batch: DecodedBatch, appendable: () => boolean): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (this.#appends.length === 0) void this.#queue.run(() => this.#appendGathered())
      this.#appends.push({ partition, batch, appendable, resolve, reject })
    })
  }

  async #appendGathered(): Promise<void> {
    const asked = this.#appends
    this.#appends = []
    try {
      const log = this.#log
      const going = log ? asked.filter((append) => append.appendable()) : []
      const taken =
        log && going.length > 0
          ? await log.appendFetched(
              going.map(({ partition, batch }) => ({
                partition,
                from: batch.from,
                rows: batch.rows,
                next: batch.next,
                tables: batch.tables,
              })),
            )
          : []
      const appended = new Set<WaitingAppend>()
      for (const [index, append] of going.entries()) {
        if (!taken[index]) continue
        this.#rounds.appended(append.partition, append.batch.oldestTimestampMs)
        this.#floors.readTo(append.partition, append.batch.next)
        appended.add(append)
      }
      for (const append of asked) append.resolve(appended.has(append))
    } catch (error) {
      for (const append of asked) append.reject(error)
    }
  }

  /** The WAL failed while writing: its partitions must sync again before they read on. */
  get failed(): boolean {
    return this.#log?.state === 'failed'
  }

  /**
   * END-COMMIT of one partition: its summary over the round's snapshot, or `gap` (SharedRounds.flush).
   * Also `gap` when the open log does not read the partition its machine flushes as synced: it
   * would never be fetched again and would answer `empty` round after round, a silent stall; as a
   * gap it syncs again.
   */
  async flush(partition: number, input: FlushInput): Promise<PartitionWriteStatus | 'gap'> {
    const status = await this.#rounds.flush(partition, input)
    if (status === 'gap' || !this.#unread(partition)) return status
    this.#env.logger.warn(
      { partition, chainStart: String(input.chainStart), commitId: input.commitId },
      'the shared WAL does not read a partition its machine holds as synced: it syncs again',
    )
    return 'gap'
  }

  /** Synced as far as its machine knows, not being let go of, and yet without a position in the open log. */
  #unread(partition: number): boolean {
    const log = this.#log
    if (log?.state !== 'open' || this.#releasing.has(partition)) return false
    return !this.#chains.has(partition) || log.position(partition) === undefined
  }

  /** The round's WRITE-STATUS from the statuses its partitions handed in (SharedRounds.compose). */
  compose(
    commitId: string,
    statuses: readonly PartitionWriteStatus[],
  ): { statuses: PartitionWriteStatus[]; rotations: RotationStatus[] } {
    return this.#rounds.compose(commitId, statuses)
  }

  /**
   * ACK-COMMIT: the accepted rotations go, the chains of committed partitions start at their new
   * offsets, and the walk drops what the ACK rejected (and everything after it that no longer
   * chains), rewinding the partitions that lost a range. Machines of rejected partitions sync again.
   */
  acknowledged(commitId: string, acks: CommitAcks): Promise<void> {
    return this.#queue.run(async () => {
      const log = this.#log
      if (log?.state !== 'open') return
      const reported = this.#rounds.reported(commitId)
      const plan = ackPlan(acks, [...this.#chains.values()], reported)
      const deleted = await log.deleteRotations(plan.accepted)
      for (const rotation of deleted) this.#forget(rotation)
      for (const { topic, partition, offset } of acks.committed) {
        const chain = this.#chains.get(partition)
        // a late ACK of an older round does not move a chain back (ackPlan's `from` neither)
        if (!chain || topic !== log.topic || offset < chain.chainStart) continue
        chain.chainStart = offset
        if (!jumpAhead(chain.logStartJump, offset)) delete chain.logStartJump
      }
      const from = new Map<number, bigint | undefined>()
      for (const [key, offset] of plan.from) {
        const partition = partitionOfKey(key, log.topic)
        if (partition !== undefined) from.set(partition, offset)
      }
      for (const [key, named] of plan.floors) {
        const partition = partitionOfKey(key, log.topic)
        if (partition !== undefined) this.#floors.merge(partition, named)
      }
      await this.#walk(log, 'commit', from, [], plan.rejected)
    })
  }

  /** Revocation: the partition is let go of; rotations holding it go, and the partitions they held read again. */
  release(partition: number): Promise<void> {
    const released = this.#queue.run(async () => {
      // The chain start it had, so its rotations go as not assigned (not as of unknown offset).
      const start = this.#chains.get(partition)?.chainStart ?? this.#recovered.get(partition)
      this.#chains.delete(partition)
      this.#recovered.delete(partition)
      this.#floors.forget(partition)
      const log = this.#log
      if (!log) return
      if (log.state === 'failed') await log.discardOpen()
      if (log.state === 'open') await this.#walk(log, 'revoke', new Map([[partition, start]]))
    })
    const settled = released.catch(() => {})
    this.#releasing.set(partition, settled)
    void settled.then(() => {
      if (this.#releasing.get(partition) === settled) this.#releasing.delete(partition)
    })
    return released
  }

  /** Cuts when a size, age, open-segment or evicted-file trigger says so. */
  async rotateIfDue(): Promise<void> {
    const reason = this.#log?.rotationDue()
    if (!reason) return
    await this.#queue.run(async () => {
      const log = this.#log
      if (log?.state === 'open' && log.rotationDue()) await this.#cut(log, reason)
    })
  }

  /** Cuts now to free the memory the open segments hold. */
  async rotateForMemory(): Promise<void> {
    if (!this.#log || this.#log.openSegmentCount === 0) return
    await this.#queue.run(async () => {
      const log = this.#log
      if (log?.state === 'open') await this.#cut(log, 'memory')
    })
  }

  async flushRowGroups(): Promise<void> {
    if (!this.#log || this.#log.bufferedBytes === 0) return
    await this.#queue.run(async () => {
      if (this.#log?.state === 'open') await this.#log.flushRowGroups()
    })
  }

  useTable(schema: Schema, spec: PartitionSpec): void {
    void this.#queue
      .run(async () => {
        if (this.#log?.state === 'open') await this.#log.useTable(schema, spec)
      })
      .catch(() => {})
  }

  /** Rows appended from now on go into segments of this schema and spec: what is open is cut first. */
  followTable(schema: Schema, spec: PartitionSpec): Promise<void> {
    return this.#queue.run(async () => {
      const log = this.#log
      if (log?.state !== 'open') return
      await log.useTable(schema, spec)
      await this.#cut(log, 'schema')
    })
  }

  /** Shutdown: what is open is cut (a restart reuses it), and the log closes. */
  close(): Promise<void> {
    return this.#queue.run(async () => {
      const log = this.#log
      if (!log) return
      if (log.state === 'open') {
        await this.#cut(log, 'shutdown', false).catch((error: unknown) => {
          this.#env.logger.warn({ err: messageOf(error) }, 'could not cut the shared WAL on shutdown')
        })
      }
      await log.close().catch(() => {})
    })
  }

  // ---- internals ------------------------------------------------------------------------------

  /** The log, recovered from disk on first use against the table and the assignment of the moment. */
  async #open(): Promise<SharedLog> {
    if (this.#log) return this.#log
    const { log, kept } = await openSharedLog(this.#env, this.#dir)
    this.#log = log
    for (const [partition, tableOffset] of kept) this.#recovered.set(partition, tableOffset)
    for (const rotation of log.rotations) this.#startUploads(rotation)
    return log
  }

  /** The round's cut: what every partition read so far becomes a rotation; the oldest ones are reported. */
  async #cutForRound(): Promise<readonly SharedRotation[]> {
    const log = await this.#open()
    if (log.state !== 'open') {
      throw new FloeError('STORAGE_UNAVAILABLE', 'the shared WAL failed; its partitions read again first')
    }
    await this.#cut(log, 'commit')
    return log.rotations.slice(0, maxRotationsPerStatus)
  }

  /**
   * The walk over every partition the WAL holds or recovered for: `from` overrides the chain
   * starts held, `adding` is a partition being synced (assigned, with no chain yet).
   */
  async #walk(
    log: SharedLog,
    reason: RotationReason,
    from: ReadonlyMap<number, bigint | undefined>,
    adding: readonly number[] = [],
    rejected?: ReadonlySet<string>,
    withoutRecordedJump?: ReadonlySet<number>,
  ): Promise<{ next: Map<number, bigint | undefined>; jumps: Map<number, LogStartJump> }> {
    const { topic } = log
    // whatever moves a partition, the WAL claims from the floors the decoder skips below
    const floors = this.#floors.byKey((partition) => partitionKey(topic, partition))
    const starts = new Map<string, bigint | undefined>()
    const assigned = new Set<number>([...this.#chains.keys(), ...this.#recovered.keys()])
    for (const partition of adding) assigned.add(partition)
    for (const [partition, chain] of this.#chains) starts.set(partitionKey(topic, partition), chain.chainStart)
    for (const [partition, offset] of this.#recovered) starts.set(partitionKey(topic, partition), offset)
    for (const [partition, offset] of from) starts.set(partitionKey(topic, partition), offset)
    // A jump a rotation recorded holds while the partition starts at or before it: the records
    // past it are in the WAL, the ones inside it gone from Kafka (a restart or a resync included).
    const jumps = new Map<number, LogStartJump>()
    for (const [key, jump] of recordedJumps(log.rotations)) {
      const partition = partitionOfKey(key, topic)
      const start = starts.get(key)
      if (partition === undefined || withoutRecordedJump?.has(partition) || start === undefined) continue
      if (jumpAhead(jump, start)) jumps.set(partition, jump)
    }
    // A chain's jump holds while the walk starts the partition where the chain does (an ACK that
    // committed up to it included); a walk that moves the partition elsewhere drops it.
    for (const [partition, chain] of this.#chains) {
      const start = from.has(partition) ? from.get(partition) : chain.chainStart
      if (chain.logStartJump && start === chain.chainStart) jumps.set(partition, chain.logStartJump)
    }
    const result = await log.walk({
      from: starts,
      assigned: [...assigned],
      jumps: new Map([...jumps].map(([partition, jump]) => [partitionKey(topic, partition), jump])),
      ...(rejected ? { rejected } : {}),
      ...(floors.size > 0 ? { floors } : {}),
      reason,
    })
    if (result.cut) this.#cutDone(result.cut)
    for (const { rotation, reason: why } of result.dropped) {
      this.#forget(rotation)
      this.#env.logger.info(
        { rotation: rotation.id, sequence: String(rotation.sequence), reason: why, files: rotation.segments.length },
        'shared WAL rotation dropped',
      )
    }
    if (result.rewound.length > 0) {
      this.#env.logger.info({ partitions: result.rewound, reason }, 'partitions read again from their kept chain')
    }
    this.#env.changed()
    return { next: result.next, jumps }
  }

  async #cut(log: SharedLog, reason: RotationReason, upload = true): Promise<void> {
    const rotation = await log.cut(reason)
    if (rotation) this.#cutDone(rotation, upload)
  }

  #cutDone(rotation: SharedRotation, upload = true): void {
    this.#env.metrics.rotations.inc({ ...this.#labels, reason: rotation.reason })
    this.#rounds.cut(rotation)
    if (upload) this.#startUploads(rotation)
  }

  #startUploads(rotation: SharedRotation): void {
    for (const segment of rotation.segments) void this.#uploads.start(this.#recorder, segment).catch(() => {})
  }

  #forget(rotation: SharedRotation): void {
    for (const segment of rotation.segments) this.#uploads.forget(segment.uuid)
    this.#rounds.forget(rotation)
  }
}
