// The coordinator's view of a round: what participants report and what the table says. These are
// domain types, not wire types: the control channel decodes protocol messages into them (the
// mapping lives with whoever wires the coordinator to protocol/).
import type { RangeOrigin } from '../protocol/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'

/** Next offset to read, per topic and partition: Floe's progress marker in memory (invariant 1). */
export type { Progress } from '../shared/progress/index.ts'

/** Kafka offsets `[start, end)`: end is the offset of the last record read plus one. */
export interface OffsetRange {
  start: bigint
  end: bigint
}

/**
 * Retention deleted records the table never got: the broker's log start `to` was past the table's
 * next offset `from` when the participant positioned itself (invariant 3's one allowed gap).
 */
export interface LogStartJump {
  from: bigint
  to: bigint
}

/** Where the start of a participant's uncommitted chain came from (invariant 2); carried on the wire. */
export type { RangeOrigin }

/** Who sent a WRITE-STATUS: the consumer-group generation orders senders of one partition. */
export interface Sender {
  workerId: string
  memberId: string
  generation: number
}

/**
 * One partition's answer to END-COMMIT. `written` covers every uncommitted file of the partition
 * as one contiguous range (it may hold no files when every record was dead-lettered, and the range
 * still advances); `empty`: nothing read since the table's offset; `error`: the participant could
 * not report (its files stay for the next round).
 */
export type PartitionWriteStatus =
  | {
      kind: 'written'
      topic: string
      partition: number
      range: OffsetRange
      files: readonly DataFile[]
      origin: RangeOrigin
      logStartJump?: LogStartJump
      /** Kafka timestamp (ms) of the range's oldest record, when the participant knows it. */
      oldestTimestampMs?: number
    }
  | { kind: 'empty'; topic: string; partition: number }
  | { kind: 'error'; topic: string; partition: number; message: string }

/** A WRITE-STATUS message: one sender's answers for one commit id. */
export interface WriteStatusReport {
  commitId: string
  sender: Sender
  statuses: readonly PartitionWriteStatus[]
}
