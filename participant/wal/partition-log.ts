// The write-ahead log of one assigned Kafka partition of one dataset: rows go into one open
// Parquet segment per Iceberg partition; a rotation makes all of them ready together under one
// offset range `[start, end)`, and the next range starts where that one ended.
//
// Operations on open segments (append, rotate, flushRowGroups) run one at a time in call order;
// operations on ready files (markUploaded, deleteUpTo, deleteSegments) have a queue of their own,
// so an upload's bookkeeping never waits behind a row group being written. A failure while rows
// are being written or a rotation is under way leaves the log `failed`: which rows reached which
// file is then unknown, so the only ways on are dropUncommitted (read again from the table's
// offset) or close.
import { basename } from 'node:path'
import type { PartitionSpec, Schema, StructValue } from '../../shared/iceberg/index.ts'
import { FloeError } from '../../shared/index.ts'
import { deleteWalFiles, listWalDirectory } from './durable.ts'
import { configInvalid, type LogOptions, performanceClock, walLimits } from './log-options.ts'
import { LogQueues, type LogState } from './log-queues.ts'
import { makeReady } from './make-ready.ts'
import { activeFileName, parseWalFileName, temporaryFileName } from './names.ts'
import { OpenSegments } from './open-segments.ts'
import { decodeSidecar, encodeSidecar, recordUpload, type SidecarCodec } from './sidecar.ts'
import type { Clock, ReadySegment, Rotation, RotationReason, WalLimits } from './types.ts'

export interface PartitionLogOptions extends LogOptions {
  /** The partition's WAL folder, `<wal.dir>/<dataset>/<topic>-<partition>`; created on first use. */
  dir: string
  partition: number
  /** The offset the consumer is positioned at: where the first range starts. */
  startOffset: bigint
  /** Segments recoverPartition kept: tracked (readyBytes, markUploaded, deletes) like new ones. */
  recovered?: readonly ReadySegment[]
}

export type PartitionLogState = LogState

const sidecarCodec: SidecarCodec<ReadySegment> = {
  encode: encodeSidecar,
  decode: decodeSidecar,
  temporaryName: temporaryFileName,
}

export class PartitionLog {
  readonly dir: string
  readonly topic: string
  readonly partition: number
  readonly limits: Readonly<WalLimits>
  readonly #clock: Clock
  readonly #segments: OpenSegments
  #ready: ReadySegment[]
  #start: bigint
  #end: bigint
  readonly #queues: LogQueues

  constructor(options: PartitionLogOptions) {
    const { topic, partition } = options
    if (!Number.isSafeInteger(partition) || partition < 0) {
      throw configInvalid('partition must be a non-negative integer', { partition })
    }
    if (topic === '') throw configInvalid('topic is empty', {})
    if (options.startOffset < 0n) {
      throw configInvalid('startOffset is negative', { startOffset: String(options.startOffset) })
    }
    this.limits = walLimits(options.limits)
    this.dir = options.dir
    this.topic = topic
    this.partition = partition
    this.#clock = options.clock ?? performanceClock
    this.#queues = new LogQueues(options.dir, { topic, partition })
    const segmentsConfig = {
      dir: options.dir,
      activeName: (uuid: string) => activeFileName(topic, partition, uuid),
      clock: this.#clock,
      writer: options,
    }
    this.#segments = new OpenSegments(segmentsConfig, options.schema, options.spec)
    this.#ready = [...(options.recovered ?? [])]
    this.#start = options.startOffset
    this.#end = options.startOffset
  }

  /** Where the next rotation's range starts. */
  get start(): bigint {
    return this.#start
  }
  /** The offset after the last record appended (or skipped). */
  get end(): bigint {
    return this.#end
  }
  get state(): PartitionLogState {
    return this.#queues.state
  }
  get openSegmentCount(): number {
    return this.#segments.count
  }
  /** Estimated Parquet size of rows buffered in open segments, not yet encoded into a row group. */
  get bufferedBytes(): number {
    return this.#segments.bufferedBytes
  }
  /** Estimated memory the open segments hold: writers, buffered rows, footer metadata. */
  get heldBytes(): number {
    return this.#segments.heldBytes
  }
  /** Estimated memory of the buffered rows alone: what flushRowGroups would free. */
  get bufferedHeldBytes(): number {
    return this.#segments.bufferedHeldBytes
  }
  /** Bytes of ready files not yet uploaded. */
  get readyBytes(): number {
    let bytes = 0
    for (const segment of this.#ready) if (segment.uploadedLocation === undefined) bytes += segment.sizeBytes
    return bytes
  }
  /** Ready segments still on local disk, oldest range first. */
  get readySegments(): readonly ReadySegment[] {
    return [...this.#ready]
  }

  /**
   * Appends one polled batch. `rows` are the batch's decoded records (dead-lettered ones absent);
   * `nextOffset` is the last record's offset plus one and advances the range even with no rows.
   */
  append(rows: readonly StructValue[], nextOffset: bigint): Promise<void> {
    return this.#queues.write(async () => {
      if (nextOffset < this.#end || (rows.length > 0 && nextOffset === this.#end)) {
        throw new FloeError('INVARIANT_BROKEN', 'WAL offsets must advance', {
          details: { topic: this.topic, partition: this.partition, end: String(this.#end), next: String(nextOffset) },
        })
      }
      if (rows.length > 0) await this.#queues.guard(() => this.#segments.append(rows))
      this.#end = nextOffset
    })
  }

  /** The first rotation trigger the open segments meet now, if any. */
  rotationDue(now: number = this.#clock.now()): RotationReason | undefined {
    return this.#queues.state === 'open' ? this.#segments.rotationDue(now, this.limits) : undefined
  }

  /**
   * Makes every open segment ready under the range `[start, end)` and starts the next range at
   * `end`. A range that advanced without rows gives a rotation without segments; undefined when
   * nothing happened since the last rotation.
   */
  rotate(reason: RotationReason): Promise<Rotation | undefined> {
    return this.#queues.write(async () => {
      const segments = this.#segments.list()
      const start = this.#start
      const end = this.#end
      if (segments.length === 0 && start === end) return undefined
      const range = { topic: this.topic, partition: this.partition, start, end }
      const ready =
        segments.length === 0 ? [] : await this.#queues.guard(() => makeReady(this.#segments.context, segments, range))
      this.#start = end
      this.#ready.push(...ready)
      this.#segments.rotated()
      return { start, end, reason, segments: ready }
    })
  }

  /**
   * The table's schema or default spec changed (another engine evolved it): segments opened from
   * now on follow the new one. Open segments keep the one they were opened with, and become ready
   * under it at the next rotation (all of them rotate together), so every file follows one spec.
   */
  useTable(schema: Schema, spec: PartitionSpec): Promise<void> {
    return this.#queues.write(async () => this.#segments.useTable(schema, spec))
  }

  /** The schema and spec the next opened segment follows. */
  get table(): { schema: Schema; spec: PartitionSpec } {
    return this.#segments.table
  }

  /** Writes every buffered row group out (memory pressure short of a rotation). */
  flushRowGroups(): Promise<void> {
    return this.#queues.write(() => this.#queues.guard(() => this.#segments.flushRowGroups()))
  }

  /**
   * Records where the segment was uploaded, in its sidecar (replaced atomically), and returns the
   * updated segment; undefined if the log no longer holds it (deleted meanwhile).
   */
  markUploaded(segment: Pick<ReadySegment, 'uuid'>, location: string): Promise<ReadySegment | undefined> {
    return this.#queues.ready(async () => {
      const current = this.#ready.find((ready) => ready.uuid === segment.uuid)
      if (!current) return undefined
      const updated = await recordUpload(current, location, sidecarCodec)
      this.#ready[this.#ready.indexOf(current)] = updated
      return updated
    })
  }

  /** Deletes the local ready segments whose range ends at or before `offset`; returns them. */
  deleteUpTo(offset: bigint): Promise<ReadySegment[]> {
    return this.#queues.ready(() => this.#deleteReady((segment) => segment.end <= offset))
  }

  /** Deletes the named local ready segments (after an ACK that names them); returns them. */
  deleteSegments(uuids: Iterable<string>): Promise<ReadySegment[]> {
    const named = new Set(uuids)
    return this.#queues.ready(() => this.#deleteReady((segment) => named.has(segment.uuid)))
  }

  /**
   * After a rejected range or a resync: discards the open segments, deletes every local WAL file
   * of this Kafka partition, and starts the next range at `resetTo`. Also the way out of `failed`.
   */
  dropUncommitted(resetTo: bigint): Promise<void> {
    return this.#queues.reset(async () => {
      // half done, the open segments may be gone while the range still claims their rows
      await this.#segments.abortAll()
      await deleteWalFiles(this.dir, await this.#ownFiles())
      this.#ready = []
      this.#start = resetTo
      this.#end = resetTo
    })
  }

  /**
   * Waits for queued work, then ends the log. Open segments not rotated are discarded (their
   * records are read again after a restart); ready files stay for recovery.
   */
  close(): Promise<void> {
    return this.#queues.close(() => this.#segments.abortAll())
  }

  /** Ends the log now: queued operations fail, open segments are discarded, ready files stay. */
  async abort(): Promise<void> {
    if (await this.#queues.abort()) await this.#segments.abortAll()
  }

  // ---- internals ------------------------------------------------------------------------------

  async #deleteReady(selected: (segment: ReadySegment) => boolean): Promise<ReadySegment[]> {
    const doomed = this.#ready.filter(selected)
    if (doomed.length === 0) return []
    await deleteWalFiles(
      this.dir,
      doomed.flatMap((segment) => [basename(segment.jsonPath), basename(segment.localPath)]),
    )
    this.#ready = this.#ready.filter((segment) => !doomed.includes(segment))
    return doomed
  }

  /** Every WAL file of this Kafka partition in the folder, whether this log knows it or not. */
  async #ownFiles(): Promise<string[]> {
    const names = await listWalDirectory(this.dir)
    return names.filter((name) => {
      const parsed = parseWalFileName(name)
      return parsed !== undefined && parsed.topic === this.topic && parsed.partition === this.partition
    })
  }
}
