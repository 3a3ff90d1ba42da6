// The work that changes one assigned partition's WAL: the machine's actors (sync, flush,
// acknowledge, let go) and the record loop's append, rotation and row-group flush, over the
// partition's PartitionIngest, its uploads and its WAL folder. Every one of them is a step on the
// partition's queue (partition-queue.ts), so no two overlap; PartitionSlot decides when each may run.
import type { LogStartJump, PartitionWriteStatus } from '../protocol/index.ts'
import type { PartitionSpec, Schema } from '../shared/iceberg/index.ts'
import { FloeError, messageOf } from '../shared/index.ts'
import { chainedRange, placeChain, uncounted } from './chain.ts'
import type { FlushInput, SyncInput, SyncReason, SyncResult } from './machine/index.ts'
import { type DecodedBatch, PartitionIngest } from './partition-ingest.ts'
import type { PartitionQueue } from './partition-queue.ts'
import type { SlotEnvironment, SlotWork } from './partition-slot.ts'
import { startingPoint } from './positioning.ts'
import { SegmentUploads } from './segment-uploads.ts'
import {
  type LogOptions,
  PartitionLog,
  partitionLogDirectory,
  type ReadySegment,
  type RecoveredPartition,
  type Rotation,
  type RotationReason,
  recordJump,
  recoverPartition,
} from './wal/index.ts'

export class PartitionWork implements SlotWork {
  readonly partition: number
  readonly topic: string
  readonly #env: SlotEnvironment
  readonly #queue: PartitionQueue
  readonly #labels: { dataset: string }
  readonly #uploads: SegmentUploads
  /** Asks the partition's machine to read again from the table. */
  readonly #resync: (reason: SyncReason) => void
  /** Set by the first sync; replaced by every later one. */
  #ingest: PartitionIngest | undefined
  /** The last log-start jump counted and logged: a resync that finds it again does not count it twice. */
  #counted: LogStartJump | undefined

  constructor(env: SlotEnvironment, partition: number, queue: PartitionQueue, resync: (reason: SyncReason) => void) {
    this.#env = env
    this.partition = partition
    this.topic = env.dataset.topic
    this.#queue = queue
    this.#resync = resync
    this.#labels = { dataset: env.dataset.name }
    this.#uploads = segmentUploadsOf(env, partition)
  }

  /** The partition's record path since the last sync (none before the first, nor after letting go). */
  get ingest(): PartitionIngest | undefined {
    return this.#ingest
  }

  get heldBytes(): number {
    return this.#ingest?.log.heldBytes ?? 0
  }
  get bufferedHeldBytes(): number {
    return this.#ingest?.log.bufferedHeldBytes ?? 0
  }
  get openSegmentCount(): number {
    return this.#ingest?.log.openSegmentCount ?? 0
  }
  get readySegmentCount(): number {
    return this.#ingest?.log.readySegments.length ?? 0
  }
  get readyBytes(): number {
    return this.#ingest?.log.readyBytes ?? 0
  }

  /** Appends a decoded batch unless `appendable` says no once the step runs; false if it did not. */
  append(ingest: PartitionIngest, batch: DecodedBatch, appendable: () => boolean): Promise<boolean> {
    return this.#queue.run(async () => {
      if (!appendable()) return false
      try {
        await ingest.append(batch)
      } catch (error) {
        // A failed WAL cannot say which rows reached which file: read again from the table.
        if (ingest.log.state === 'failed') this.#resync('wal-failed')
        throw error
      }
      return true
    })
  }

  /** Rotates when a size, age or open-segment trigger says so. */
  async rotateIfDue(): Promise<void> {
    const ingest = this.#ingest
    const reason = ingest?.log.rotationDue()
    if (!ingest || !reason) return
    await this.#queue.run(async () => {
      if (this.#ingest === ingest && ingest.log.state === 'open') await this.#rotate(ingest, reason)
    })
  }

  /** Rotates the open segments to free the memory they hold (memory relief); none open, nothing done. */
  async rotateForMemory(): Promise<void> {
    const ingest = this.#ingest
    if (!ingest || ingest.log.openSegmentCount === 0) return
    await this.#queue.run(async () => {
      if (this.#ingest === ingest && ingest.log.state === 'open') await this.#rotate(ingest, 'memory')
    })
  }

  /** Writes the open segments' buffered rows out as row groups (memory pressure). */
  async flushRowGroups(): Promise<void> {
    const ingest = this.#ingest
    if (!ingest || ingest.log.bufferedBytes === 0) return
    await this.#queue.run(async () => {
      if (this.#ingest === ingest && ingest.log.state === 'open') await ingest.log.flushRowGroups()
    })
  }

  /** The table's schema or spec changed: segments opened from now on follow them. */
  useTable(schema: Schema, spec: PartitionSpec): void {
    // A log that failed or closed meanwhile is replaced by a sync, which reads the table anew.
    void this.#queue
      .run(async () => {
        const ingest = this.#ingest
        if (ingest?.log.state === 'open') await ingest.log.useTable(schema, spec)
      })
      .catch(() => {})
  }

  /** Rows appended from now on go into segments of this schema and spec: the open ones rotate first. */
  followTable(schema: Schema, spec: PartitionSpec): Promise<void> {
    return this.#queue.run(async () => {
      const ingest = this.#ingest
      if (ingest?.log.state !== 'open') return
      await ingest.log.useTable(schema, spec)
      await this.#rotate(ingest, 'schema')
    })
  }

  /**
   * Positions the partition from the table (invariant 2) and makes the WAL agree with it: the old
   * log (after a resync) lets go of its open segments, recovery keeps the ready files that chain
   * from the table's offset and deletes the rest, and the consumer resumes after the kept ones.
   */
  sync(input: SyncInput, signal: AbortSignal): Promise<SyncResult> {
    return this.#queue.run(() => this.#sync(input, signal))
  }

  /** END-COMMIT: rotate, upload every uncommitted file, and describe the whole chain. */
  async flush(input: FlushInput, signal: AbortSignal): Promise<PartitionWriteStatus> {
    const ingest = this.#ingest
    const { topic, partition } = this
    if (!ingest) throw new FloeError('INVARIANT_BROKEN', `partition ${partition} flushed before its first sync`)
    const rotations = await this.#queue
      .run(async () => {
        await this.#rotate(ingest, 'commit')
        // Rotations before the chain's start are committed already: their ACK's deletes failed.
        if ((ingest.uncommitted[0]?.start ?? input.chainStart) < input.chainStart)
          await ingest.committed(input.chainStart)
        return [...ingest.uncommitted]
      })
      .catch((error: unknown) => {
        // A log that failed outside an append (a memory or age rotation) is no longer fetched
        // from, so no append would ever ask for the sync that replaces it.
        if (ingest.log.state === 'failed') this.#resync('wal-failed')
        throw error
      })
    const jump = input.logStartJump
    if (rotations.length === 0 && !jump) return { kind: 'empty', topic, partition }
    const chained = chainedRange(input.chainStart, jump, rotations)
    if (chained.kind === 'gap') {
      // A gap between the chain and the WAL: nothing to report that could pass; read again.
      this.#resync('wal-gap')
      throw new FloeError(
        'INVARIANT_BROKEN',
        `partition ${partition}: WAL continues at ${chained.found}, chain at ${chained.expected}`,
        {
          details: { topic, partition, walStart: String(chained.found), chainAt: String(chained.expected) },
        },
      )
    }
    // The uploads run outside the queue: the record loop keeps appending meanwhile (a cut, not a stop).
    const uploads = Promise.all(rotations.flatMap((r) => r.segments).map((s) => this.#uploads.start(ingest.log, s)))
    const files = await abortable(uploads, signal)
    const oldestTimestampMs = ingest.oldestTimestampMs(rotations)
    return {
      kind: 'written',
      topic,
      partition,
      range: chained.range,
      files,
      origin: input.origin,
      ...(chained.jump ? { logStartJump: chained.jump } : {}),
      ...(oldestTimestampMs === undefined ? {} : { oldestTimestampMs }),
    }
  }

  /**
   * ACK-COMMIT named our range: the table holds the partition up to `offset`. Every ready file
   * ending there goes (the ACK's files are exactly those: their range ended at `offset`).
   */
  async acknowledge(offset: bigint): Promise<void> {
    const ingest = this.#ingest
    if (!ingest) return
    const deleted = await this.#queue.run(() => ingest.committed(offset))
    for (const segment of deleted) this.#uploads.forget(segment.uuid)
    this.#env.commitGroupOffset(this.partition, offset)
    this.#env.changed()
  }

  /** Revocation or shutdown: open segments become ready files (kept for recovery), the log closes. */
  letGo(reason: RotationReason): Promise<void> {
    return this.#queue.run(() => this.#letGo(this.#ingest, reason))
  }

  // ---- the steps, run on the queue -----------------------------------------------------------

  async #sync(input: SyncInput, signal: AbortSignal): Promise<SyncResult> {
    const { table, dataset, wal } = this.#env
    const { topic, partition } = this
    const { start, origin, tableOffset, logStart } = await startingPoint(this.#env, partition)
    signal.throwIfAborted()

    // What the old log read is kept when it can be: its open segments become ready files, and
    // recovery keeps those that start at the table's offset (after a lost ACK, everything read
    // since the cut). A failed log cannot say what it holds; its open segments go.
    const previous = this.#ingest
    this.#ingest = undefined
    if (previous) await this.#letGo(previous, 'resync')
    const dir = partitionLogDirectory(wal.dir, dataset.name, topic, partition)
    const scope = { topic, partition, specId: table.spec['spec-id'] }
    // Retention deleted records nobody committed: read on from the log start. Kept files are
    // committed with the jump that follows them (chain.ts), never dropped; files read past a
    // recorded jump keep it.
    const place = (recovered: RecoveredPartition) =>
      placeChain({
        start,
        tableOffset,
        keptUpTo: recovered.rotations.length > 0 ? recovered.resumeFrom : undefined,
        logStart,
        ...(recovered.jump ? { keptJump: recovered.jump } : {}),
      })
    let recovered = await recoverPartition(dir, tableOffset, scope)
    // a jump the WAL recorded was counted by the process that read past it, this one or an earlier
    this.#counted ??= recovered.jump
    let placed = place(recovered)
    if (placed.dropPastJump) {
      // the log start passed the files past the jump too: they go, and one jump runs from its start
      const deleted = recovered.deleted
      recovered = await recoverPartition(dir, tableOffset, { ...scope, crossJumps: false })
      recovered.deleted.unshift(...deleted)
      placed = place(recovered)
    }
    const { chainStart, position, logStartJump } = placed
    // written before anything is read past it, so a restart or resync keeps what was
    if (logStartJump) await recordJump(dir, topic, partition, logStartJump)
    let rotations: readonly Rotation[] = recovered.rotations
    const log = this.#openLog(dir, position, placed.dropKept ? [] : recovered.segments)
    if (placed.dropKept && rotations.length > 0) {
      await log.dropUncommitted(position)
      rotations = []
    }
    const ingest = new PartitionIngest({ log, position, recovered: rotations })
    this.#ingest = ingest
    const kept = new Set(rotations.flatMap((r) => r.segments.map((s) => s.uuid)))
    this.#uploads.keepOnly(kept)
    for (const segment of ingest.pendingSegments()) void this.#uploads.start(ingest.log, segment).catch(() => {})
    this.#env.logger.info(
      {
        partition,
        reason: input.reason,
        origin,
        chainStart: String(chainStart),
        position: String(position),
        reusedFiles: recovered.segments.length,
        deletedFiles: recovered.deleted.length,
      },
      'partition synced',
    )
    if (logStartJump) this.#counted = countSkipped(this.#env, partition, logStartJump, this.#counted, input.reason)
    return { position: chainStart, origin, tableOffset, ...(logStartJump ? { logStartJump } : {}) }
  }

  async #letGo(ingest: PartitionIngest | undefined, reason: RotationReason): Promise<void> {
    if (this.#ingest === ingest) this.#ingest = undefined
    if (!ingest) return
    if (ingest.log.state === 'open') {
      await this.#rotate(ingest, reason, false).catch((error: unknown) => {
        this.#env.logger.warn({ partition: this.partition, err: messageOf(error) }, 'could not rotate on letting go')
      })
    }
    await ingest.log.close().catch(() => {})
  }

  /** Rotates and starts the uploads of what became ready. */
  async #rotate(ingest: PartitionIngest, reason: RotationReason, upload = true): Promise<void> {
    const rotation = await ingest.rotate(reason)
    if (!rotation) return
    this.#env.metrics.rotations.inc({ ...this.#labels, reason })
    if (upload) for (const segment of rotation.segments) void this.#uploads.start(ingest.log, segment).catch(() => {})
  }

  #openLog(dir: string, startOffset: bigint, recovered: readonly ReadySegment[]): PartitionLog {
    return new PartitionLog({ ...walOptionsOf(this.#env), dir, partition: this.partition, startOffset, recovered })
  }
}

/** The uploads of either WAL layout's segments: of one partition's, or (without one) the dataset's shared ones. */
export function segmentUploadsOf(env: SlotEnvironment, partition?: number): SegmentUploads {
  const route = env.route
  return new SegmentUploads({
    ...(partition === undefined ? {} : { partition }),
    dataset: env.dataset.name,
    uploads: env.uploads,
    dataLocation: env.table.dataLocation,
    ...(route ? { routedLocation: (table: string) => route.dataLocation(table) } : {}),
    metrics: env.metrics,
    logger: env.logger,
    sidecars: env.sidecars,
    settled: () => env.changed(),
  })
}

/** The options either WAL layout takes from the dataset's settings. */
export function walOptionsOf(env: SlotEnvironment): LogOptions {
  const { wal, table, bloomFieldIds } = env
  return {
    topic: env.dataset.topic,
    schema: table.schema,
    spec: table.spec,
    codec: wal.compression === 'none' ? 'uncompressed' : wal.compression,
    bloomFilterColumns: bloomFieldIds,
    rowGroupBytes: wal.rowGroupBytes,
    encoders: wal.encoders,
    limits: {
      maxFileSizeBytes: wal.maxFileSizeBytes,
      maxFileAgeMs: wal.maxFileAgeMinutes * 60_000,
      maxOpenSegments: wal.maxOpenSegmentsPerPartition,
    },
  }
}

/**
 * Retention deleted records the table never got: counted (floe_records_skipped_total, reason
 * retention) and logged with their range once, when the reader jumps over them. The coordinator
 * counts them again when the commit that declares the jump lands (floe_records_lost_to_retention_total).
 * Returns the jump to remember, so a resync that finds it again does not count it twice.
 */
export function countSkipped(
  env: SlotEnvironment,
  partition: number,
  jump: LogStartJump,
  counted: LogStartJump | undefined,
  reason: string,
): LogStartJump {
  const count = uncounted(jump, counted)
  if (count <= 0n) return jump
  env.metrics.recordsSkipped.inc({ dataset: env.dataset.name, reason: 'retention' }, Number(count))
  env.logger.warn(
    {
      partition,
      reason,
      skippedFrom: String(jump.from),
      skippedTo: String(jump.to),
      skipped: String(count),
    },
    'records lost to retention skipped: the partition resumes at the log start',
  )
  return jump
}

/** The promise, or the signal's reason once it aborts (the promise then runs on, unobserved). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
