// The control messages as Floe's code sees them (plain TypeScript, bigint offsets and snapshot
// ids), and their encoding as a protobuf Envelope (floe_control.proto). The coordinator and the
// participant build and read these types; only this folder touches the generated code.
import { fromBinary, toBinary } from '@bufbuild/protobuf'
import { FloeError } from '../shared/index.ts'
import type { DataFileEntry } from './data-file.ts'
import { EnvelopeSchema } from './gen/index.ts'
import type { LogStartJump } from './partition-write-status.ts'
import { bodyFromWire, bodyToWire, plainBytes, senderFromWire, undecodable } from './wire.ts'

/** The protocol's major version this code writes and the newest it reads. */
export const PROTOCOL_VERSION = 1

export interface Sender {
  workerId: string
  /** The sender's member id and generation in the dataset's consumer group ('' and -1 if none). */
  memberId: string
  generation: number
}

export interface TopicPartition {
  topic: string
  partition: number
}

export interface TopicPartitionOffset extends TopicPartition {
  /** The next offset to read. */
  offset: bigint
}

/** Command: a round begins, with the table's progress as the coordinator read it. */
export interface StartCommit {
  type: 'StartCommit'
  tableOffsets: TopicPartitionOffset[]
  /** The snapshot of `main` the offsets come from; null when the table has none. */
  snapshotId: bigint | null
}

/** Command: cut here; every participant rotates, uploads and answers with a WriteStatus. */
export interface EndCommit {
  type: 'EndCommit'
  expectedPartitions: TopicPartition[]
}

/** A LogStartJump as it travels: the range starts at the log start, `to`; `lost` is `to - from`. */
export interface DeclaredLogStartJump extends LogStartJump {
  lost: bigint
}

export interface PartitionStatus extends TopicPartition {
  /** data: files covering the range (maybe none); empty: nothing new; error: see `error`. */
  kind: 'data' | 'empty' | 'error'
  /** The contiguous offset range [rangeStart, rangeEnd) the files cover. */
  rangeStart: bigint
  rangeEnd: bigint
  files: DataFileEntry[]
  error?: string
  logStartJump?: DeclaredLogStartJump
  /**
   * Where the participant's chain of ranges started: the table's offset, or — for a partition the
   * table has never seen — the group's committed offset or auto.offset.reset. Absent reads as
   * 'table', the strict reading.
   */
  origin?: RangeOrigin
  /** Kafka timestamp (ms) of the oldest record in the range: commit visibility is measured from it. */
  oldestTimestampMs?: number
}

export type RangeOrigin = 'table' | 'group-offset' | 'offset-reset'

/** Where a large WriteStatus's file list was written instead of the message (see file-list.ts). */
export interface FilesPointer {
  location: string
  fileCount: number
}

/** The positions `[start, end)` of one partition that a rotation covers. */
export interface RotationRangeEntry extends TopicPartition {
  start: bigint
  end: bigint
}

/**
 * One cut of a worker's shared segments as it travels: its files together hold every row of the
 * ranges it claims (a file holds rows of many partitions), so it is accepted or rejected whole.
 */
export interface Rotation {
  /** The rotation's UUID. */
  id: string
  /** Its order in the sender's dataset WAL. */
  sequence: bigint
  ranges: RotationRangeEntry[]
  /**
   * Maybe none (every record dead-lettered); empty here when the status's files are behind a
   * pointer. A routed dataset's files each name their table (DataFileEntry.table).
   */
  files: DataFileEntry[]
  /** A routed dataset: per table and partition with rows of the table, the positions its files claim. */
  tableClaims?: TableClaimEntry[]
}

/** The positions `[start, end)` of one partition that a routed rotation's files for `table` claim. */
export interface TableClaimEntry extends RotationRangeEntry {
  /** `namespace.table`. */
  table: string
}

/** Fact: what one worker's participants wrote for this round. */
export interface WriteStatus {
  type: 'WriteStatus'
  partitions: PartitionStatus[]
  /**
   * The shared-segment layout: the sender's uncommitted rotations, oldest first; absent in the
   * per-partition layout. When present, every partition's `files` is empty and its range is the
   * summary of its chain over the rotations.
   */
  rotations?: Rotation[]
  /** When set, every partition's and rotation's `files` is empty here and the files are behind the pointer. */
  filesPointer?: FilesPointer
  /**
   * The topic the status answers for, from a dataset that reads several topics (one status per
   * topic and member); absent from one that reads a single topic.
   */
  topic?: string
  /** The fingerprint of the sender's route; absent from an unrouted dataset. */
  route?: string
}

export interface PartitionFilePaths extends TopicPartition {
  filePaths: string[]
}

export interface Rejection extends TopicPartition {
  reason: string
  /** The table's next offset for the partition: where its participant seeks back to; absent when the table never saw it. */
  tableOffset?: bigint
  /**
   * A routed dataset (tableOffset is then the ledger's): the tables that hold records of the
   * partition past tableOffset, each with its next offset. Their records below it are skipped.
   */
  skipFloors?: TableOffset[]
}

/** A routed table's next offset for one partition. */
export interface TableOffset {
  /** `namespace.table`. */
  table: string
  offset: bigint
}

/** Fact: the catalog confirmed the round's commit. */
export interface CommitAcked {
  type: 'CommitAcked'
  /** The snapshot the commit created; null when nothing needed appending. */
  snapshotId: bigint | null
  committedOffsets: TopicPartitionOffset[]
  committedFiles: PartitionFilePaths[]
  rejections: Rejection[]
  /** The ids of the rotations the commit accepted (shared-segment layout); absent when none. */
  acceptedRotations?: string[]
}

/** Fact: a worker asks for a round now (at shutdown). */
export interface CommitRequested {
  type: 'CommitRequested'
  reason: string
  partitions: TopicPartition[]
}

export type ControlBody = StartCommit | EndCommit | WriteStatus | CommitAcked | CommitRequested

/** One message on the control topic. Every decoded message is of PROTOCOL_VERSION. */
export interface ControlMessage<Body extends ControlBody = ControlBody> {
  dataset: string
  group: string
  /** The round's UUID; '' on a CommitRequested, which asks for a round that has none yet. */
  commitId: string
  sender: Sender
  /** Wall-clock time at the sender, ms since the epoch. */
  timeMs: number
  body: Body
}

/** The message as the protobuf Envelope of PROTOCOL_VERSION. */
export function encodeEnvelope(message: ControlMessage): Uint8Array {
  return toBinary(EnvelopeSchema, {
    $typeName: 'floe.control.v1.Envelope',
    version: PROTOCOL_VERSION,
    dataset: message.dataset,
    group: message.group,
    commitId: message.commitId,
    sender: {
      $typeName: 'floe.control.v1.Sender',
      workerId: message.sender.workerId,
      memberId: message.sender.memberId,
      generation: message.sender.generation,
    },
    timeMs: BigInt(Math.trunc(message.timeMs)),
    body: bodyToWire(message.body),
  })
}

/**
 * Reads an Envelope. Fields this version does not know are ignored. Throws FloeError:
 * PROTOCOL_VERSION_UNSUPPORTED for a newer major version; PROTOCOL_UNDECODABLE for bytes that are
 * not a Floe envelope, or one whose body this version does not know (details.reason says which).
 */
export function decodeEnvelope(bytes: Uint8Array): ControlMessage {
  let envelope: ReturnType<typeof fromBinary<typeof EnvelopeSchema>>
  try {
    // Unknown fields are dropped at once: nothing re-encodes a received envelope.
    envelope = fromBinary(EnvelopeSchema, plainBytes(bytes), { readUnknownFields: false })
  } catch (error) {
    throw undecodable('not a protobuf Envelope', 'malformed', error)
  }
  if (envelope.version === 0) throw undecodable('no protocol version', 'no-version')
  if (envelope.version > PROTOCOL_VERSION) {
    throw new FloeError(
      'PROTOCOL_VERSION_UNSUPPORTED',
      `control message of protocol version ${envelope.version}; this worker reads up to ${PROTOCOL_VERSION}`,
      { details: { version: envelope.version, supported: PROTOCOL_VERSION, dataset: envelope.dataset } },
    )
  }
  const body = bodyFromWire(envelope.body)
  if (body === undefined) throw undecodable('a body this version does not know', 'unknown-body')
  return {
    dataset: envelope.dataset,
    group: envelope.group,
    commitId: envelope.commitId,
    sender: senderFromWire(envelope.sender),
    timeMs: Number(envelope.timeMs),
    body,
  }
}
