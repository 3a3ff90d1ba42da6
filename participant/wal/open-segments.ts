// The open segments of one Kafka partition (or, in the shared layout, of a dataset), one `active_*.parquet` per Iceberg partition, opened
// on its first row. Routing a batch is the WAL's per-record work, so it computes each row's
// partition key once, passes a single-partition batch through untouched, and otherwise fills
// one reused array per segment: no array, closure or tuple per row (the tuple is made once, when
// a segment opens).
import { randomUUID } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { Schema, StructValue } from '../../shared/iceberg/index.ts'
import type { Partitioner } from '../../shared/iceberg/partitioning/index.ts'
import {
  type DataFileCodec,
  type DataFileWriter,
  type DataFileWriterOptions,
  type MetricsConfig,
  openDataFile,
  type RowGroupEncoders,
} from '../../shared/parquet/index.ts'
import { storageError } from './durable.ts'
import type { Clock, RotationReason, WalLimits } from './types.ts'

export interface OpenSegment {
  readonly uuid: string
  readonly key: string
  readonly partitionValues: StructValue
  readonly activeName: string
  /** Clock time of its first row, for the age trigger. */
  readonly openedAt: number
  readonly writer: DataFileWriter
  /** Rows of the append in progress that belong here; one array reused across appends. */
  readonly batch: StructValue[]
}

export interface OpenSegmentsConfig {
  dir: string
  /** The `active_*` file name of a new segment: the layouts name them differently. */
  activeName(uuid: string): string
  partitioner: Partitioner
  clock: Clock
  writer: DataFileWriterOptions
}

/** The writer settings a log's options give its segments (both layouts take the same ones). */
export interface SegmentWriterSettings {
  codec?: DataFileCodec
  compressionLevel?: number
  rowGroupRows?: number
  rowGroupBytes?: number
  metrics?: MetricsConfig
  /** Field ids of the columns that get a bloom filter. */
  bloomFilterColumns?: readonly number[]
  encoders?: RowGroupEncoders
}

export function segmentWriterOptions(settings: SegmentWriterSettings, schema: Schema): DataFileWriterOptions {
  return {
    schema,
    codec: settings.codec,
    compressionLevel: settings.compressionLevel,
    rowGroupRows: settings.rowGroupRows,
    rowGroupBytes: settings.rowGroupBytes,
    metrics: settings.metrics,
    bloomFilters: (settings.bloomFilterColumns ?? []).map((fieldId) => ({ fieldId })),
    encoders: settings.encoders,
  }
}

export class OpenSegments {
  readonly #config: OpenSegmentsConfig
  readonly #keyOf: (row: StructValue) => string
  readonly #segments = new Map<string, OpenSegment>()
  /** Partition keys of the batch being routed, reused across batches. */
  readonly #keys: string[] = []
  readonly #touched: OpenSegment[] = []
  #directoryMade = false

  constructor(config: OpenSegmentsConfig) {
    this.#config = config
    this.#keyOf = config.partitioner.key
  }

  get count(): number {
    return this.#segments.size
  }

  get bufferedBytes(): number {
    let bytes = 0
    for (const segment of this.#segments.values()) bytes += segment.writer.bufferedBytes
    return bytes
  }

  /** Estimated memory the open segments hold (shared/parquet/memory.ts), writers included. */
  get heldBytes(): number {
    let bytes = 0
    for (const segment of this.#segments.values()) bytes += segment.writer.heldBytes
    return bytes
  }

  /** Of which their buffered rows: what flushing row groups would free. */
  get bufferedHeldBytes(): number {
    let bytes = 0
    for (const segment of this.#segments.values()) bytes += segment.writer.bufferedHeldBytes
    return bytes
  }

  /** Routes a non-empty batch to its segments; resolves when every segment has taken its rows. */
  async append(rows: readonly StructValue[]): Promise<void> {
    const count = rows.length
    const keyOf = this.#keyOf
    const keys = this.#keys
    const firstKey = keyOf(rows[0] as StructValue)
    keys[0] = firstKey
    let mixed = false
    for (let i = 1; i < count; i++) {
      const key = keyOf(rows[i] as StructValue)
      keys[i] = key
      if (key !== firstKey) mixed = true
    }
    if (!mixed) {
      // the usual case (one partition per batch, e.g. day(ts)): the batch goes in as it came
      const segment = this.#segments.get(firstKey) ?? (await this.#open(firstKey, rows[0] as StructValue))
      await segment.writer.append(rows)
      return
    }
    const touched = this.#touched
    touched.length = 0
    let currentKey: string | undefined
    let current: OpenSegment | undefined
    for (let i = 0; i < count; i++) {
      const key = keys[i] as string
      const row = rows[i] as StructValue
      // runs of one partition skip the map lookup
      if (key !== currentKey) {
        current = this.#segments.get(key) ?? (await this.#open(key, row))
        currentKey = key
        if (current.batch.length === 0) touched.push(current)
      }
      ;(current as OpenSegment).batch.push(row)
    }
    // every append settles before the arrays are reused, even when one fails
    const results = await Promise.allSettled(touched.map((segment) => segment.writer.append(segment.batch)))
    for (const segment of touched) segment.batch.length = 0
    touched.length = 0
    for (const result of results) if (result.status === 'rejected') throw result.reason
  }

  /** The first of the log's own triggers that the open segments meet at `now`. */
  rotationDue(now: number, limits: Readonly<WalLimits>): RotationReason | undefined {
    if (this.#segments.size === 0) return undefined
    let oldest = Number.POSITIVE_INFINITY
    for (const segment of this.#segments.values()) {
      if (segment.writer.writtenBytes + segment.writer.bufferedBytes >= limits.maxFileSizeBytes) return 'size'
      if (segment.openedAt < oldest) oldest = segment.openedAt
    }
    if (now - oldest >= limits.maxFileAgeMs) return 'age'
    if (this.#segments.size > limits.maxOpenSegments) return 'segments'
    return undefined
  }

  list(): OpenSegment[] {
    return [...this.#segments.values()]
  }

  /** Forgets every segment (they were made ready). */
  clear(): void {
    this.#segments.clear()
  }

  async flushRowGroups(): Promise<void> {
    await Promise.all(this.list().map((segment) => segment.writer.flushRowGroup()))
  }

  /** Discards every open segment and its active file. */
  async abortAll(): Promise<void> {
    const segments = this.list()
    this.#segments.clear()
    await Promise.all(segments.map((segment) => segment.writer.abort().catch(() => {})))
  }

  async #open(key: string, row: StructValue): Promise<OpenSegment> {
    const { dir, partitioner, clock, writer: writerOptions } = this.#config
    if (!this.#directoryMade) {
      try {
        await mkdir(dir, { recursive: true })
      } catch (error) {
        throw storageError('cannot create WAL directory', dir, error)
      }
      this.#directoryMade = true
    }
    const uuid = randomUUID()
    const activeName = this.#config.activeName(uuid)
    const writer = await openDataFile({ ...writerOptions, path: join(dir, activeName) })
    const segment: OpenSegment = {
      uuid,
      key,
      partitionValues: partitioner.partition(row),
      activeName,
      openedAt: clock.now(),
      writer,
      batch: [],
    }
    this.#segments.set(key, segment)
    return segment
  }
}
