// One assigned Kafka partition of a dataset: its control machine (machine/), created on assignment
// and stopped on revocation, and the actors that machine runs, implemented over the partition's
// PartitionIngest, its WAL, the upload queue and the Kafka group. The record loop asks `position`
// before it fetches the partition (none unless the machine is writing) and hands each fetched
// batch to `ingest`; everything else that touches the partition is one of the machine's actors.
import { type Actor, createActor, fromCallback, fromPromise } from 'xstate'
import type { LogStartJump, PartitionWriteStatus } from '../protocol/index.ts'
import type { DatasetConfig } from '../shared/config/index.ts'
import type { PartitionSpec, Schema } from '../shared/iceberg/index.ts'
import { FloeError, messageOf } from '../shared/index.ts'
import type { FetchedPartition, GroupReader, KafkaAdmin } from '../shared/kafka/index.ts'
import type { FloeMetrics, Logger, PhaseClock } from '../shared/telemetry/index.ts'
import { chainedRange, placeChain, uncounted } from './chain.ts'
import type { Decoder } from './decode/index.ts'
import {
  type AcknowledgeInput,
  type FlushInput,
  isWriting,
  type ParticipantEvent,
  participantMachine,
  type RevokeInput,
  type SendStatusInput,
  type SyncInput,
  type SyncResult,
} from './machine/index.ts'
import { logParticipantEvent } from './partition-events.ts'
import { type DecodedBatch, PartitionIngest } from './partition-ingest.ts'
import { startingPoint } from './positioning.ts'
import type { RoundReports } from './round-reports.ts'
import { SegmentUploads } from './segment-uploads.ts'
import type { SerialQueue } from './serial.ts'
import type { UploadQueue } from './upload/index.ts'
import {
  PartitionLog,
  partitionLogDirectory,
  type ReadySegment,
  type Rotation,
  type RotationReason,
  recoverPartition,
} from './wal/index.ts'

/** What the DatasetParticipant shares with each of its partitions. */
export interface SlotEnvironment {
  dataset: DatasetConfig
  table: {
    schema: Schema
    spec: PartitionSpec
    dataLocation: string
    offsets(): Promise<ReadonlyMap<number, bigint>>
  }
  wal: {
    dir: string
    maxFileSizeBytes: number
    maxFileAgeMinutes: number
    maxOpenSegmentsPerPartition: number
    compression: 'zstd' | 'snappy' | 'gzip' | 'lz4' | 'none'
  }
  bloomFieldIds: readonly number[]
  autoOffsetReset: 'earliest' | 'latest'
  syncRetryMs: number
  reader: GroupReader
  admin: KafkaAdmin
  uploads: UploadQueue
  reports: RoundReports
  decoder: Decoder
  logger: Logger
  metrics: FloeMetrics
  phases: PhaseClock
  /** Data file location -> its bloom-filter sidecar, for the WRITE-STATUS. */
  sidecars: Map<string, string>
  /** Commits the group offset (lag monitoring only, invariant 6). */
  commitGroupOffset(partition: number, offset: bigint): void
  /** A machine changed state, an upload settled: the loop and the backpressure may look again. */
  changed(): void
}

/** A fetched batch decoded against the partition's log of the moment (append checks it is still that one). */
export interface DecodedFetch {
  ingest: PartitionIngest
  batch: DecodedBatch
}

/** What one fetched batch did, for the counters. */
export interface IngestCounts {
  records: number
  rows: number
  bad: number
}

export class PartitionSlot {
  readonly partition: number
  readonly topic: string
  readonly actor: Actor<typeof participantMachine>
  readonly #env: SlotEnvironment
  readonly #lock: SerialQueue
  readonly #labels: { dataset: string }
  readonly #uploads: SegmentUploads
  /** Set by the first sync; replaced by every later one. */
  #ingest: PartitionIngest | undefined
  /** The last log-start jump counted and logged: a resync that finds it again does not count it twice. */
  #counted: LogStartJump | undefined

  constructor(env: SlotEnvironment, partition: number, lock: SerialQueue, paused: boolean) {
    this.#env = env
    this.partition = partition
    this.topic = env.dataset.topic
    this.#lock = lock
    this.#labels = { dataset: env.dataset.name }
    this.#uploads = new SegmentUploads({
      partition,
      dataset: env.dataset.name,
      uploads: env.uploads,
      dataLocation: env.table.dataLocation,
      metrics: env.metrics,
      logger: env.logger,
      sidecars: env.sidecars,
      settled: () => env.changed(),
    })
    const machine = participantMachine.provide({
      actors: {
        syncPartition: fromPromise<SyncResult, SyncInput>(({ input, signal }) =>
          this.#lock.run(() => this.#sync(input, signal)),
        ),
        // Fetching is the record loop's, and it leaves out every partition that is not writing:
        // holding is implicit. Letting go wakes the loop, which may be waiting with nothing to read.
        holdConsumer: fromCallback(() => () => env.changed()),
        flushPartition: fromPromise<PartitionWriteStatus, FlushInput>(({ input, signal }) =>
          this.#flush(input, signal),
        ),
        sendStatus: fromPromise<void, SendStatusInput>(({ input }) => env.reports.submit(input.commitId, input.status)),
        acknowledge: fromPromise<void, AcknowledgeInput>(({ input }) => this.#acknowledge(input)),
        rotateOnRevoke: fromPromise<void, RevokeInput>(() => this.#lock.run(() => this.#letGo(this.#ingest, 'revoke'))),
      },
    })
    this.actor = createActor(machine, {
      input: { dataset: env.dataset.name, topic: this.topic, partition, syncRetryMs: env.syncRetryMs },
    })
    this.actor.on('*', (event) => logParticipantEvent(env.logger, partition, event))
    this.actor.subscribe({ next: () => env.changed(), error: () => env.changed() })
    this.actor.start()
    if (paused) this.actor.send({ type: 'backpressure.pause' })
  }

  send(event: ParticipantEvent): void {
    this.actor.send(event)
  }

  /** The record loop may fetch this partition now, from `position`. */
  get position(): bigint | undefined {
    const ingest = this.#ingest
    if (!ingest || ingest.outOfRange || ingest.log.state !== 'open') return undefined
    return isWriting(this.actor.getSnapshot()) ? ingest.position : undefined
  }

  get paused(): boolean {
    return this.actor.getSnapshot().matches({ active: { ingest: 'paused' } })
  }

  /** The machine is flushing round `commitId` (the round's WRITE-STATUS waits for it). */
  flushing(commitId: string): boolean {
    const snapshot = this.actor.getSnapshot()
    return snapshot.context.round === commitId && snapshot.matches({ active: { commit: 'flushing' } })
  }

  /** Where the uncommitted chain starts, for the lag gauge. */
  get chainStart(): bigint | undefined {
    return this.actor.getSnapshot().context.chainStart
  }

  /** Bytes of open segments in memory, and of ready segments not yet uploaded. */
  get bufferedBytes(): number {
    return this.#ingest?.log.bufferedBytes ?? 0
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

  /**
   * One fetched batch, decoded, or undefined when there is nothing to append: a batch made from a
   * position the partition no longer has (a sync moved it meanwhile) is dropped. The caller
   * dead-letters `bad` (one send for every partition of a fetch) before it calls `append`, so no
   * commit can pass a record the dead-letter topic does not have.
   */
  decode(fetched: FetchedPartition): DecodedFetch | undefined {
    const ingest = this.#ingest
    if (!ingest || !this.#appendable(ingest, fetched.from) || ingest.outOfRange) return undefined
    if (fetched.outOfRange) {
      ingest.outOfRange = true
      this.actor.send({ type: 'ingest.resync', reason: 'out-of-range' })
      return undefined
    }
    if (fetched.next === fetched.from) return undefined
    this.#env.phases.switchTo('decode')
    return { ingest, batch: ingest.decode(fetched, this.#env.decoder) }
  }

  /** Appends a decoded batch whose bad records are dealt with; undefined if the partition moved meanwhile. */
  async append({ ingest, batch }: DecodedFetch): Promise<IngestCounts | undefined> {
    this.#env.phases.switchTo('encode')
    const appended = await this.#lock.run(async () => {
      if (!this.#appendable(ingest, batch.from)) return false
      try {
        await ingest.append(batch)
      } catch (error) {
        // A failed WAL cannot say which rows reached which file: read again from the table.
        if (ingest.log.state === 'failed') this.actor.send({ type: 'ingest.resync', reason: 'wal-failed' })
        throw error
      }
      return true
    })
    return appended ? { records: batch.records, rows: batch.rows.length, bad: batch.bad.length } : undefined
  }

  /**
   * Rows go in only while the machine is writing, into the log of the last sync, at its position.
   * A batch fetched before a pause or a resync is dropped and read again later.
   */
  #appendable(ingest: PartitionIngest, from: bigint): boolean {
    return this.#ingest === ingest && ingest.position === from && isWriting(this.actor.getSnapshot())
  }

  /** Rotates when a size, age or open-segment trigger says so. */
  async rotateIfDue(): Promise<void> {
    const ingest = this.#ingest
    const reason = ingest?.log.rotationDue()
    if (!ingest || !reason) return
    await this.#lock.run(async () => {
      if (this.#ingest === ingest && ingest.log.state === 'open') await this.#rotate(ingest, reason)
    })
  }

  /** Writes the open segments' buffered rows out as row groups (memory pressure). */
  async flushRowGroups(): Promise<void> {
    const ingest = this.#ingest
    if (!ingest || ingest.log.bufferedBytes === 0) return
    await this.#lock.run(async () => {
      if (this.#ingest === ingest && ingest.log.state === 'open') await ingest.log.flushRowGroups()
    })
  }

  /** The table's schema or spec changed: segments this partition opens from now on follow them. */
  useTable(schema: Schema, spec: PartitionSpec): void {
    // A log that failed or closed meanwhile is replaced by a sync, which reads the table anew.
    void this.#ingest?.log.useTable(schema, spec).catch(() => {})
  }

  /** Worker shutdown: stop the machine, rotate what is open (kept for recovery), close the WAL. */
  async shutdown(): Promise<void> {
    this.actor.stop()
    await this.#lock.run(() => this.#letGo(this.#ingest, 'shutdown'))
  }

  // ---- the machine's actors ------------------------------------------------------------------

  /**
   * Positions the partition from the table (invariant 2) and makes the WAL agree with it: the old
   * log (after a resync) lets go of its open segments, recovery keeps the ready files that chain
   * from the table's offset and deletes the rest, and the consumer resumes after the kept ones.
   */
  async #sync(input: SyncInput, signal: AbortSignal): Promise<SyncResult> {
    const { table, dataset, wal } = this.#env
    const { topic, partition } = this
    const { start, origin, tableOffset, logStart } = await startingPoint(this.#env, topic, partition)
    signal.throwIfAborted()

    // What the old log read is kept when it can be: its open segments become ready files, and
    // recovery keeps those that start at the table's offset (after a lost ACK, everything read
    // since the cut). A failed log cannot say what it holds; its open segments go.
    const previous = this.#ingest
    this.#ingest = undefined
    if (previous) await this.#letGo(previous, 'resync')
    const dir = partitionLogDirectory(wal.dir, dataset.name, topic, partition)
    const recovered = await recoverPartition(dir, tableOffset, { topic, partition, specId: table.spec['spec-id'] })
    // Retention deleted records nobody committed: read on from the log start. Kept files are
    // committed with the jump that follows them (chain.ts), never dropped.
    const placed = placeChain({
      start,
      tableOffset,
      keptUpTo: recovered.rotations.length > 0 ? recovered.resumeFrom : undefined,
      logStart,
    })
    const { chainStart, position, logStartJump } = placed
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
    if (logStartJump) this.#skipped(logStartJump, input.reason)
    return { position: chainStart, origin, tableOffset, ...(logStartJump ? { logStartJump } : {}) }
  }

  /** END-COMMIT: rotate, upload every uncommitted file, and describe the whole chain. */
  async #flush(input: FlushInput, signal: AbortSignal): Promise<PartitionWriteStatus> {
    const ingest = this.#ingest
    const { topic, partition } = this
    if (!ingest) throw new FloeError('INVARIANT_BROKEN', `partition ${partition} flushed before its first sync`)
    const rotations = await this.#lock.run(async () => {
      await this.#rotate(ingest, 'commit')
      // Rotations before the chain's start are committed already: their ACK's deletes failed.
      if ((ingest.uncommitted[0]?.start ?? input.chainStart) < input.chainStart)
        await ingest.committed(input.chainStart)
      return [...ingest.uncommitted]
    })
    const jump = input.logStartJump
    if (rotations.length === 0 && !jump) return { kind: 'empty', topic, partition }
    const chained = chainedRange(input.chainStart, jump, rotations)
    if (chained.kind === 'gap') {
      // A gap between the chain and the WAL: nothing to report that could pass; read again.
      this.actor.send({ type: 'ingest.resync', reason: 'wal-gap' })
      throw new FloeError(
        'INVARIANT_BROKEN',
        `partition ${partition}: WAL continues at ${chained.found}, chain at ${chained.expected}`,
        {
          details: { topic, partition, walStart: String(chained.found), chainAt: String(chained.expected) },
        },
      )
    }
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
      ...(jump ? { logStartJump: jump } : {}),
      ...(oldestTimestampMs === undefined ? {} : { oldestTimestampMs }),
    }
  }

  /**
   * ACK-COMMIT named our range: the table holds the partition up to `offset`. Every ready file
   * ending there goes (the ACK's files are exactly those: their range ended at `offset`).
   */
  async #acknowledge(input: AcknowledgeInput): Promise<void> {
    const ingest = this.#ingest
    if (!ingest) return
    const deleted = await this.#lock.run(() => ingest.committed(input.offset))
    for (const segment of deleted) this.#uploads.forget(segment.uuid)
    this.#env.commitGroupOffset(this.partition, input.offset)
    this.#env.changed()
  }

  /** Revocation, shutdown or a resync: open segments become ready files (kept for recovery), the log closes. */
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

  // ---- internals -----------------------------------------------------------------------------

  /**
   * Retention deleted records the table never got: counted (floe_records_skipped_total, reason
   * retention) and logged with their range once, when the reader jumps over them. The coordinator
   * counts them again when the commit that declares the jump lands (floe_records_lost_to_retention_total).
   */
  #skipped(jump: LogStartJump, reason: string): void {
    const count = uncounted(jump, this.#counted)
    this.#counted = jump
    if (count <= 0n) return
    this.#env.metrics.recordsSkipped.inc({ ...this.#labels, reason: 'retention' }, Number(count))
    this.#env.logger.warn(
      {
        partition: this.partition,
        reason,
        skippedFrom: String(jump.from),
        skippedTo: String(jump.to),
        skipped: String(count),
      },
      'records lost to retention skipped: the partition resumes at the log start',
    )
  }

  #openLog(dir: string, startOffset: bigint, recovered: readonly ReadySegment[]): PartitionLog {
    const { wal, table, bloomFieldIds } = this.#env
    return new PartitionLog({
      dir,
      topic: this.topic,
      partition: this.partition,
      schema: table.schema,
      spec: table.spec,
      startOffset,
      codec: wal.compression === 'none' ? 'uncompressed' : wal.compression,
      bloomFilterColumns: bloomFieldIds,
      limits: {
        maxFileSizeBytes: wal.maxFileSizeBytes,
        maxFileAgeMs: wal.maxFileAgeMinutes * 60_000,
        maxOpenSegments: wal.maxOpenSegmentsPerPartition,
      },
      recovered,
    })
  }

  /** Rotates (the caller holds the lock) and starts the uploads of what became ready. */
  async #rotate(ingest: PartitionIngest, reason: RotationReason, upload = true): Promise<void> {
    const rotation = await ingest.rotate(reason)
    if (!rotation) return
    this.#env.metrics.rotations.inc({ ...this.#labels, reason })
    if (upload) for (const segment of rotation.segments) void this.#uploads.start(ingest.log, segment).catch(() => {})
  }
}

/** The promise, or the signal's reason once it aborts (the promise then runs on, unobserved). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
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
