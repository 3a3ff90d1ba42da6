// The participant's view of the commit protocol for one partition: the machine's context, events
// and actors' inputs. The status it reports and the ACK it reads are protocol/'s domain types
// (PartitionWriteStatus, PartitionAcks), shared with the coordinator.
import type { LogStartJump, PartitionWriteStatus, RangeOrigin } from '../../protocol/index.ts'

/** What an ACK-COMMIT says about one partition. */
export type PartitionAckOutcome =
  /** The table now holds the partition up to `offset`; `filePaths` are the files it committed. */
  | { kind: 'committed'; offset: bigint; filePaths: readonly string[] }
  /** The partition was out of line: drop uncommitted files, seek to `tableOffset` (undefined: the table never saw it). */
  | { kind: 'rejected'; reason: string; tableOffset: bigint | undefined }
  /** The round closed without this partition: its files stay for the next round. */
  | { kind: 'not-included' }

/** Where a sync positioned the consumer. */
export interface SyncResult {
  /** The next offset the consumer reads: the start of the new uncommitted chain. */
  position: bigint
  origin: RangeOrigin
  /** The table's next offset for the partition, undefined when it never saw it. */
  tableOffset: bigint | undefined
  /** Set when the broker's log start was past the table's offset (records lost to retention). */
  logStartJump?: LogStartJump
}

// ---- the machine's input, actors, events and emitted events (participant.machine.ts) ----------

export interface ParticipantInput {
  dataset: string
  topic: string
  partition: number
  /** Wait before syncing again after a failed sync (default 1000 ms). */
  syncRetryMs?: number
}

export type SyncReason = 'assigned' | 'out-of-line' | 'rejected' | 'committed-elsewhere' | (string & {})

export interface SyncRequest {
  reason: SyncReason
  /** The table's offset as the event that asked for the sync knew it (a hint; the table decides). */
  tableOffset: bigint | undefined
}

export interface PartitionRef {
  dataset: string
  topic: string
  partition: number
}

// ---- what the runner's actors take and give ------------------------------------------------

/**
 * syncPartition: position the consumer from the table (invariant 2) and make the WAL agree with
 * it (docs/design.md "Recovery"): rotate or drop open segments, delete ready files not starting at
 * the table's offset, keep those that do. Output: where the consumer now is.
 */
export type SyncInput = PartitionRef & SyncRequest
/** holdConsumer (a callback actor): pause the partition's fetching on start, resume on cleanup. */
export type HoldInput = PartitionRef
/** flushPartition: rotate, upload what is not uploaded, and build the status of the whole chain. */
export interface FlushInput extends PartitionRef {
  commitId: string
  chainStart: bigint
  origin: RangeOrigin
  logStartJump: LogStartJump | undefined
}
/** sendStatus: send the WRITE-STATUS. */
export interface SendStatusInput extends PartitionRef {
  commitId: string
  status: PartitionWriteStatus
}
/**
 * acknowledge: delete the local files the ACK named and any ready file wholly behind `offset`
 * (invariant 5), then commit the group offset `offset` (invariant 6: for lag monitoring only).
 */
export interface AcknowledgeInput extends PartitionRef {
  commitId: string
  offset: bigint
  filePaths: readonly string[]
}
/** rotateOnRevoke: rotate open segments so the WAL holds only whole files, then let go. */
export type RevokeInput = PartitionRef

// ---- events --------------------------------------------------------------------------------

export type ParticipantEvent =
  /** START-COMMIT, with the table's offset for this partition (undefined: the table never saw it). */
  | { type: 'control.start-commit'; commitId: string; tableOffset: bigint | undefined }
  | { type: 'control.end-commit'; commitId: string }
  /** ACK-COMMIT, with what it says about this partition (see partitionOutcome). */
  | { type: 'control.commit-acked'; commitId: string; outcome: PartitionAckOutcome }
  | { type: 'backpressure.pause' }
  | { type: 'backpressure.resume' }
  /** Reposition from the table (e.g. the consumer's offset fell out of range). */
  | { type: 'ingest.resync'; reason: SyncReason; tableOffset?: bigint }
  | { type: 'partition.revoked' }

export type ParticipantEmitted =
  | {
      type: 'participant.synced'
      reason: SyncReason
      position: bigint
      origin: RangeOrigin
      logStartJump?: LogStartJump
    }
  | { type: 'participant.sync-failed'; reason: SyncReason; message: string }
  | {
      type: 'participant.out-of-line'
      commitId: string
      tableOffset: bigint | undefined
      chainStart: bigint | undefined
    }
  | { type: 'participant.status-sent'; commitId: string; status: PartitionWriteStatus }
  | { type: 'participant.status-failed'; commitId: string; stage: 'flush' | 'send'; message: string }
  | { type: 'participant.committed'; commitId: string; offset: bigint; filePaths: readonly string[] }
  | { type: 'participant.rejected'; commitId: string; reason: string; tableOffset: bigint | undefined }
  | { type: 'participant.committed-elsewhere'; commitId: string; offset: bigint }
  /** The round closed without this partition; `reported` is what it had answered ('empty': nothing to miss). */
  | { type: 'participant.round-missed'; commitId: string; reported: PartitionWriteStatus['kind'] }
  | { type: 'participant.acknowledge-failed'; commitId: string; message: string }
  | { type: 'participant.paused' }
  | { type: 'participant.resumed' }
  | { type: 'participant.revoked'; rotated: boolean }

export interface ParticipantContext extends PartitionRef {
  syncRetryMs: number
  /** Start of the uncommitted chain: where the last sync positioned, or the last ACK's offset. */
  chainStart: bigint | undefined
  origin: RangeOrigin
  logStartJump: LogStartJump | undefined
  backpressured: boolean
  /** The sync running (or the last one). */
  sync: SyncRequest
  /** A sync asked for and not yet started. */
  resync: SyncRequest | undefined
  /** An END-COMMIT not yet answered. */
  pendingEnd: string | undefined
  /** The round being flushed, sent or awaiting its ACK. */
  round: string | undefined
  /** The coordinator moved on from `round` (a newer START, or its ACK came first). */
  roundClosed: boolean
  status: PartitionWriteStatus | undefined
  acknowledged: { commitId: string; offset: bigint; filePaths: readonly string[] } | undefined
  /**
   * The table's offset an ACK of ours gave while a sync ran: the sync may have read the table
   * before that commit, and must not place the chain behind it.
   */
  committedWhileSyncing: bigint | undefined
}
