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
import { readFile } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import type { PartitionSpec, PrimitiveType, Schema, StructValue } from '../../shared/iceberg/index.ts'
import { compilePartitioner } from '../../shared/iceberg/partitioning/index.ts'
import { FloeError } from '../../shared/index.ts'
import {
  type DataFileCodec,
  type MetricsConfig,
  primitiveFieldTypes,
  type RowGroupEncoders,
} from '../../shared/parquet/index.ts'
import { deleteWalFiles, listWalDirectory, replaceFileDurably, storageError } from './durable.ts'
import { LogQueues, type LogState } from './log-queues.ts'
import { makeReady, type RotationContext } from './make-ready.ts'
import { activeFileName, parseWalFileName, temporaryFileName } from './names.ts'
import { OpenSegments, segmentWriterOptions } from './open-segments.ts'
import { decodeSidecar, encodeSidecar } from './sidecar.ts'
import {
  type Clock,
  defaultWalLimits,
  type ReadySegment,
  type Rotation,
  type RotationReason,
  type WalLimits,
} from './types.ts'

export interface PartitionLogOptions {
  /** The partition's WAL folder, `<wal.dir>/<dataset>/<topic>-<partition>`; created on first use. */
  dir: string
  topic: string
  partition: number
  /** The table's schema, with field ids. */
  schema: Schema
  spec: PartitionSpec
  /** Default zstd. */
  codec?: DataFileCodec
  compressionLevel?: number
  /** Field ids of the columns that get a bloom filter. */
  bloomFilterColumns?: readonly number[]
  /** Iceberg metrics modes; default truncate(16). */
  metrics?: MetricsConfig
  /** Encoder threads for the segments' row groups; none: encoded on the calling thread. */
  encoders?: RowGroupEncoders
  limits?: Partial<WalLimits>
  rowGroupRows?: number
  rowGroupBytes?: number
  /** The offset the consumer is positioned at: where the first range starts. */
  startOffset: bigint
  /** Default performance.now. */
  clock?: Clock
  /** Segments recoverPartition kept: tracked (readyBytes, markUploaded, deletes) like new ones. */
  recovered?: readonly ReadySegment[]
}

export type PartitionLogState = LogState

const performanceClock: Clock = { now: () => performance.now() }

export class PartitionLog {
  readonly dir: string
  readonly topic: string
  readonly partition: number
  readonly limits: Readonly<WalLimits>
  readonly #options: PartitionLogOptions
  readonly #clock: Clock
  // Replaced together when the table's schema or spec changes (useTable), between rotations.
  #context: RotationContext
  #segments: OpenSegments
  #nextTable: { schema: Schema; spec: PartitionSpec } | undefined
  #ready: ReadySegment[]
  #start: bigint
  #end: bigint
  readonly #queues: LogQueues

  constructor(options: PartitionLogOptions) {
    if (!Number.isSafeInteger(options.partition) || options.partition < 0) {
      throw invalid('partition must be a non-negative integer', { partition: options.partition })
    }
    if (options.topic === '') throw invalid('topic is empty', {})
    if (options.startOffset < 0n) throw invalid('startOffset is negative', { startOffset: String(options.startOffset) })
    const limits = { ...defaultWalLimits, ...options.limits }
    for (const [name, value] of Object.entries(limits)) {
      if (!(value > 0)) throw invalid(`limits.${name} must be positive`, { [name]: value })
    }
    this.dir = options.dir
    this.topic = options.topic
    this.partition = options.partition
    this.limits = limits
    this.#clock = options.clock ?? performanceClock
    this.#options = options
    this.#queues = new LogQueues(options.dir, () => this.#closedError())
    ;({ segments: this.#segments, context: this.#context } = this.#build(options.schema, options.spec))
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
      const ready =
        segments.length === 0 ? [] : await this.#queues.guard(() => makeReady(this.#context, segments, start, end))
      this.#segments.clear()
      this.#start = end
      this.#ready.push(...ready)
      if (this.#nextTable) this.#applyNextTable()
      return { start, end, reason, segments: ready }
    })
  }

  /**
   * The table's schema or default spec changed (another engine evolved it): segments opened from
   * now on follow the new one. Open segments keep the one they were opened with, and become ready
   * under it at the next rotation (all of them rotate together), so every file follows one spec.
   */
  useTable(schema: Schema, spec: PartitionSpec): Promise<void> {
    return this.#queues.write(async () => {
      if (schema === this.#context.schema && spec === this.#context.spec) return
      this.#nextTable = { schema, spec }
      if (this.#segments.count === 0) this.#applyNextTable()
    })
  }

  /** The schema and spec the next opened segment follows. */
  get table(): { schema: Schema; spec: PartitionSpec } {
    return this.#nextTable ?? { schema: this.#context.schema, spec: this.#context.spec }
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
      // read back rather than re-encoded from memory: a recovered segment may carry another
      // spec's partition type, which only its sidecar knows
      let text: string
      try {
        text = await readFile(current.jsonPath, 'utf8')
      } catch (error) {
        throw storageError('cannot read WAL sidecar', current.jsonPath, error)
      }
      const { partitionType } = decodeSidecar(text)
      const updated: ReadySegment = { ...current, uploadedLocation: location }
      const name = basename(current.jsonPath)
      await replaceFileDurably(
        dirname(current.jsonPath),
        name,
        temporaryFileName(name),
        encodeSidecar(updated, partitionType),
      )
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

  #build(schema: Schema, spec: PartitionSpec): { segments: OpenSegments; context: RotationContext } {
    const options = this.#options
    const partitioner = compilePartitioner(spec, schema)
    const segments = new OpenSegments({
      dir: options.dir,
      activeName: (uuid) => activeFileName(options.topic, options.partition, uuid),
      partitioner,
      clock: this.#clock,
      writer: segmentWriterOptions(options, schema),
    })
    const fieldTypes: ReadonlyMap<number, PrimitiveType> = primitiveFieldTypes(schema)
    const context: RotationContext = {
      dir: options.dir,
      topic: options.topic,
      partition: options.partition,
      schema,
      spec,
      partitioner,
      partitionType: partitioner.partitionType,
      fieldTypes,
    }
    return { segments, context }
  }

  /** Only with no open segment: they were all made ready under the old table. */
  #applyNextTable(): void {
    const next = this.#nextTable
    if (!next) return
    ;({ segments: this.#segments, context: this.#context } = this.#build(next.schema, next.spec))
    this.#nextTable = undefined
  }

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

  #closedError(): FloeError {
    return new FloeError('INVARIANT_BROKEN', 'WAL used after it was closed', {
      details: { topic: this.topic, partition: this.partition },
    })
  }
}

function invalid(message: string, details: Record<string, unknown>): FloeError {
  return new FloeError('CONFIG_INVALID', `WAL: ${message}`, { details })
}
