// The record path of one assigned Kafka partition: its WAL, its fetch position, and the rotations
// not yet committed. Plain code, no machine: decode and append run per batch here, while the
// partition's control machine (machine/) only decides when the runner may append. The chain of
// ranges itself (its start, origin, log-start jump) is the machine's context; the rotations here
// are the files that chain holds.
import type { NestedField, StructValue } from '../shared/iceberg/index.ts'
import { FloeError, isFloeError, messageOf } from '../shared/index.ts'
import type { FetchedPartition, IncomingRecord, RecordsBatch } from '../shared/kafka/index.ts'
import {
  BatchCoordinates,
  batchTimestampMs,
  type Decoder,
  type RecordCoordinates,
  SchemaWidening,
} from './decode/index.ts'
import type { PartitionEarlierFloors } from './earlier-routes.ts'
import type { SkipFloors } from './skip-floors.ts'
import type { PartitionLog, ReadySegment, Rotation, RotationReason } from './wal/index.ts'

export interface BadRecord {
  record: IncomingRecord
  error: FloeError
}

/** One fetched partition, decoded: the rows to append, the records refused, where the range ends. */
export interface DecodedBatch {
  /** The position the fetch was made from: the batch is stale if the partition moved since. */
  from: bigint
  /** The last record's offset plus one (markers included): where the range ends after the append. */
  next: bigint
  records: number
  rows: StructValue[]
  /** A routed dataset: the table number (Decoder.routeTables) of each row, parallel to `rows`. */
  tables?: number[]
  /** Records not written because their table already holds them (below its skip floor). */
  skipped?: number
  bad: BadRecord[]
  /** The oldest record timestamp of the batch (ms), for commit-visibility latency. */
  oldestTimestampMs: number | undefined
  /**
   * The batch stopped at a record the table's schema cannot take as it is (a dataset that infers
   * its columns): the fields it suggests. `next` is that record's offset; it is read again once
   * the schema is widened.
   */
  widening?: readonly NestedField[]
}

function recordOf(topic: string, partition: number, batch: RecordsBatch, index: number): IncomingRecord {
  const at = new BatchCoordinates(topic, partition).at(batch, batch.records[index]!)
  const headers = new Map<Buffer, Buffer>()
  for (const [name, value] of at.headers) if (name) headers.set(name, value ?? Buffer.alloc(0))
  return { topic, partition, offset: at.offset, timestamp: at.timestampMs, key: at.key, value: at.value, headers }
}

function internalError(error: unknown, at: IncomingRecord): FloeError {
  return new FloeError(
    'INTERNAL_ERROR',
    `decoding ${at.topic}/${at.partition}@${at.offset} failed inside Floe (a bug, not a bad record): ${messageOf(error)}`,
    { cause: error, details: { topic: at.topic, partition: at.partition, offset: String(at.offset) } },
  )
}

/**
 * Decodes a fetched partition. Records before the asked position in the first batch are skipped
 * (a fetch returns whole batches); bad records are returned for the dead-letter path and still
 * advance the range: contiguity is about positions. A routed decoder's rows come with their table
 * numbers; `floors` drops the rows their table holds already.
 */
export function decodeFetched(
  topic: string,
  partition: number,
  fetched: FetchedPartition,
  decoder: Decoder,
  floors?: SkipFloors,
  earlier?: PartitionEarlierFloors,
): DecodedBatch {
  const rows: StructValue[] = []
  const routes = decoder.routeTables
  const tables: number[] | undefined = routes ? [] : undefined
  const bad: BadRecord[] = []
  let records = 0
  let skipped = 0
  let oldest: bigint | undefined
  let next = fetched.next
  let widening: readonly NestedField[] | undefined
  // one object for every record, and none at all when no column reads a record's coordinates
  const coordinates =
    decoder.readsCoordinates || earlier?.readsCoordinates ? new BatchCoordinates(topic, partition) : undefined
  batches: for (const batch of fetched.batches) {
    // Offsets below the position are whole-batch leftovers: compare deltas, not per-record bigints.
    const skip = batch.firstOffset < fetched.from ? Number(fetched.from - batch.firstOffset) : 0
    const list = batch.records
    if (list.length > 0) {
      const first = batchTimestampMs(batch)
      if (oldest === undefined || first < oldest) oldest = first
    }
    for (let i = 0; i < list.length; i++) {
      const record = list[i]!
      if (record.offsetDelta < skip) continue
      try {
        const at = coordinates?.at(batch, record)
        const row = decoder.decode(record.value ?? undefined, at)
        records++
        if (tables !== undefined) {
          if (floors !== undefined && belowFloor(floors, routes, decoder.table, batch, record.offsetDelta)) {
            skipped++
            continue
          }
          if (earlier !== undefined && heldEarlier(earlier, decoder, batch, record.offsetDelta, at)) {
            skipped++
            continue
          }
          tables.push(decoder.table)
        }
        rows.push(row)
      } catch (error) {
        if (error instanceof SchemaWidening) {
          // rows so far go in under the schema of the moment; this record waits for the wider one
          next = batch.firstOffset + BigInt(record.offsetDelta)
          widening = error.fields
          break batches
        }
        records++
        // Only the decoder's own refusals make a bad record; anything else is a bug of Floe's,
        // and dead-lettering it would hide it behind the data (and lose good records to it).
        const at = recordOf(topic, partition, batch, i)
        if (!isFloeError(error, 'RECORD_MALFORMED')) throw internalError(error, at)
        // a record this route refuses (one it names no table for) that an earlier route's table
        // holds already landed: it is not a bad record twice
        if (
          earlier !== undefined &&
          heldEarlier(earlier, decoder, batch, record.offsetDelta, coordinates?.at(batch, record))
        ) {
          skipped++
          continue
        }
        bad.push({ record: at, error })
      }
    }
  }
  const oldestTimestampMs = oldest === undefined ? undefined : Number(oldest)
  const decoded: DecodedBatch = { from: fetched.from, next, records, rows, bad, oldestTimestampMs }
  if (tables !== undefined) decoded.tables = tables
  if (skipped > 0) decoded.skipped = skipped
  if (widening !== undefined) decoded.widening = widening
  return decoded
}

function belowFloor(
  floors: SkipFloors,
  routes: Decoder['routeTables'],
  table: number,
  batch: RecordsBatch,
  offsetDelta: number,
): boolean {
  const offset = batch.firstOffset + BigInt(offsetDelta)
  if (offset >= floors.below) return false
  const floor = floors.byTable.get(routes?.names[table] ?? '')
  return floor !== undefined && offset < floor
}

function heldEarlier(
  earlier: PartitionEarlierFloors,
  decoder: Decoder,
  batch: RecordsBatch,
  offsetDelta: number,
  record: RecordCoordinates | undefined,
): boolean {
  const offset = batch.firstOffset + BigInt(offsetDelta)
  return offset < earlier.below && earlier.holds(decoder, offset, record)
}

export class PartitionIngest {
  readonly topic: string
  readonly partition: number
  readonly log: PartitionLog
  /** Where the next fetch starts. */
  position: bigint
  /** Rotations not yet committed, oldest first; they chain from the machine's chain start. */
  readonly uncommitted: Rotation[]
  /** The oldest record timestamp (ms) of each uncommitted rotation, where known (not for recovered ones). */
  readonly #oldest = new Map<Rotation, number>()
  /** The oldest record timestamp appended since the last rotation. */
  #oldestOpen: number | undefined
  /** The fetch said the position is outside the log: not fetched again until a sync moves it. */
  outOfRange = false

  constructor(options: { log: PartitionLog; position: bigint; recovered?: readonly Rotation[] }) {
    this.log = options.log
    this.topic = options.log.topic
    this.partition = options.log.partition
    this.position = options.position
    this.uncommitted = [...(options.recovered ?? [])]
  }

  /** Decodes a fetched partition (decodeFetched). */
  decode(fetched: FetchedPartition, decoder: Decoder): DecodedBatch {
    return decodeFetched(this.topic, this.partition, fetched, decoder)
  }

  /** The log takes appends. */
  get open(): boolean {
    return this.log.state === 'open'
  }

  /** Appends a decoded batch made at the current position; the next fetch starts where it ended. */
  async append(batch: DecodedBatch): Promise<void> {
    await this.log.append(batch.rows, batch.next)
    this.position = batch.next
    const oldest = batch.oldestTimestampMs
    if (oldest !== undefined && (this.#oldestOpen === undefined || oldest < this.#oldestOpen)) this.#oldestOpen = oldest
  }

  async rotate(reason: RotationReason): Promise<Rotation | undefined> {
    const rotation = await this.log.rotate(reason)
    if (!rotation) return undefined
    this.uncommitted.push(rotation)
    if (this.#oldestOpen !== undefined) this.#oldest.set(rotation, this.#oldestOpen)
    this.#oldestOpen = undefined
    return rotation
  }

  /** The oldest record timestamp (ms) of these rotations, for commit-visibility latency; undefined if unknown. */
  oldestTimestampMs(rotations: readonly Rotation[]): number | undefined {
    let oldest: number | undefined
    for (const rotation of rotations) {
      const ms = this.#oldest.get(rotation)
      if (ms !== undefined && (oldest === undefined || ms < oldest)) oldest = ms
    }
    return oldest
  }

  /** Every ready segment of the uncommitted rotations. */
  pendingSegments(): ReadySegment[] {
    return this.uncommitted.flatMap((r) => r.segments)
  }

  /**
   * The table holds everything before `offset`: forget the rotations that end there and delete
   * their files (invariant 5). Returns the deleted segments.
   */
  async committed(offset: bigint): Promise<ReadySegment[]> {
    while (this.uncommitted[0] && this.uncommitted[0].end <= offset) {
      const rotation = this.uncommitted.shift() as Rotation
      this.#oldest.delete(rotation)
    }
    return this.log.deleteUpTo(offset)
  }
}
