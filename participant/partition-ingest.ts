// One assigned Kafka partition of a dataset: its WAL, its fetch position, and the rotations not yet
// committed. The per-record path (decode, append) runs here as plain code; the control events
// (END-COMMIT, ACK, rejection, revoke) only call the methods below.

import type { LogStartJump, RangeOrigin } from '../protocol/index.ts'
import type { StructValue } from '../shared/iceberg/index.ts'
import type { FloeError } from '../shared/index.ts'
import type { FetchedPartition, IncomingRecord, RecordsBatch } from '../shared/kafka/index.ts'
import type { Decoder } from './decode/index.ts'
import type { PartitionLog, ReadySegment, Rotation, RotationReason } from './wal/index.ts'

export interface BadRecord {
  record: IncomingRecord
  error: FloeError
}

/** What one fetch of the partition produced. */
export interface IngestedBatch {
  records: number
  rows: number
  bad: BadRecord[]
  /** The oldest record timestamp of the batch (ms), for commit-visibility latency. */
  oldestTimestampMs: number | undefined
}

function recordOf(topic: string, partition: number, batch: RecordsBatch, index: number): IncomingRecord {
  const record = batch.records[index]!
  const headers = new Map<Buffer, Buffer>()
  for (const [name, value] of record.headers) if (name) headers.set(name, value ?? Buffer.alloc(0))
  return {
    topic,
    partition,
    offset: batch.firstOffset + BigInt(record.offsetDelta),
    timestamp: batch.firstTimestamp + record.timestampDelta,
    key: record.key ?? undefined,
    value: record.value ?? undefined,
    headers,
  }
}

export class PartitionIngest {
  readonly topic: string
  readonly partition: number
  readonly log: PartitionLog
  /** Where the next fetch starts. */
  position: bigint
  /** The start of the oldest uncommitted range: the table's next offset as far as we know. */
  committedOffset: bigint
  /** Rotations not yet acknowledged, oldest first; their ranges chain from committedOffset. */
  readonly uncommitted: Rotation[] = []
  /** Set when retention moved the log start past our position (the one allowed gap). */
  jump: LogStartJump | undefined
  /** Oldest record timestamp (ms) not yet committed, for commit-visibility latency. */
  oldestUncommittedMs: number | undefined
  /** Where the chain of ranges started; 'table' once the table holds any of it. */
  origin: RangeOrigin

  constructor(options: {
    log: PartitionLog
    position: bigint
    committedOffset: bigint
    origin: RangeOrigin
    recovered?: readonly Rotation[]
  }) {
    this.origin = options.origin
    this.log = options.log
    this.topic = options.log.topic
    this.partition = options.log.partition
    this.position = options.position
    this.committedOffset = options.committedOffset
    this.uncommitted.push(...(options.recovered ?? []))
  }

  /**
   * Decodes a fetched partition into the WAL. Records before the asked position in the first
   * batch are skipped (a fetch returns whole batches); bad records are returned for the
   * dead-letter path and still advance the range: contiguity is about positions.
   */
  async ingest(
    fetched: FetchedPartition,
    decoder: Decoder,
    phase?: (name: 'decode' | 'encode') => void,
  ): Promise<IngestedBatch> {
    const rows: StructValue[] = []
    const bad: BadRecord[] = []
    let records = 0
    let oldest: bigint | undefined
    phase?.('decode')
    for (const batch of fetched.batches) {
      // Offsets below the position are whole-batch leftovers: compare deltas, not per-record bigints.
      const skip = batch.firstOffset < fetched.from ? Number(fetched.from - batch.firstOffset) : 0
      const list = batch.records
      if (list.length > 0 && (oldest === undefined || batch.firstTimestamp < oldest)) oldest = batch.firstTimestamp
      for (let i = 0; i < list.length; i++) {
        const record = list[i]!
        if (record.offsetDelta < skip) continue
        records++
        try {
          rows.push(decoder.decode(record.value ?? undefined))
        } catch (error) {
          bad.push({ record: recordOf(this.topic, this.partition, batch, i), error: error as FloeError })
        }
      }
    }
    phase?.('encode')
    await this.log.append(rows, fetched.next)
    this.position = fetched.next
    const oldestMs = oldest === undefined ? undefined : Number(oldest)
    if (oldestMs !== undefined && (this.oldestUncommittedMs === undefined || oldestMs < this.oldestUncommittedMs)) {
      this.oldestUncommittedMs = oldestMs
    }
    return { records, rows: rows.length, bad, oldestTimestampMs: oldestMs }
  }

  /**
   * The position fell out of the log (retention deleted records never committed): jump to the
   * log start. Only allowed while nothing of ours is uncommitted; the next WRITE-STATUS declares
   * the jump and the coordinator counts the lost records.
   */
  async jumpToLogStart(logStartOffset: bigint): Promise<LogStartJump | undefined> {
    if (logStartOffset <= this.position) return undefined
    await this.log.dropUncommitted(logStartOffset)
    this.uncommitted.length = 0
    const jump = { from: this.committedOffset, to: logStartOffset, lost: logStartOffset - this.committedOffset }
    this.jump = jump
    this.position = logStartOffset
    return jump
  }

  async rotate(reason: RotationReason): Promise<Rotation | undefined> {
    const rotation = await this.log.rotate(reason)
    if (rotation) this.uncommitted.push(rotation)
    return rotation
  }

  /** Every ready segment of the uncommitted ranges. */
  pendingSegments(): ReadySegment[] {
    return this.uncommitted.flatMap((r) => r.segments)
  }

  /** The contiguous range the uncommitted rotations cover, or undefined when there is none. */
  pendingRange(): { start: bigint; end: bigint } | undefined {
    const first = this.uncommitted[0]
    const last = this.uncommitted.at(-1)
    return first && last ? { start: first.start, end: last.end } : undefined
  }

  /** The table now holds everything before `offset`: forget those rotations and their files. */
  async committed(offset: bigint): Promise<ReadySegment[]> {
    if (offset <= this.committedOffset) return []
    this.committedOffset = offset
    this.origin = 'table'
    while (this.uncommitted[0] && this.uncommitted[0].end <= offset) this.uncommitted.shift()
    if (this.jump && this.jump.to <= offset) this.jump = undefined
    if (this.uncommitted.length === 0) this.oldestUncommittedMs = undefined
    return this.log.deleteUpTo(offset)
  }

  /** The coordinator refused our range (or we are out of line): drop it all and read again. */
  async resync(tableOffset: bigint): Promise<void> {
    await this.log.dropUncommitted(tableOffset)
    this.uncommitted.length = 0
    this.jump = undefined
    this.oldestUncommittedMs = undefined
    this.committedOffset = tableOffset
    this.position = tableOffset
    this.origin = 'table'
  }
}
