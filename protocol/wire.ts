// Internal to protocol/: the mapping between the domain messages (messages.ts) and the generated
// protobuf types. Written out field by field rather than with the library's `create()`, so that
// the compiler checks every field of every message is mapped (a missed field fails tsc).

import { FloeError } from '../shared/index.ts'
import type { DataFileEntry } from './data-file.ts'
import type * as pb from './gen/index.ts'
import { PartitionStatus_Kind, PartitionStatus_Origin } from './gen/index.ts'
import type {
  ControlBody,
  PartitionStatus,
  RangeOrigin,
  Rotation,
  Sender,
  TopicPartition,
  TopicPartitionOffset,
} from './messages.ts'

type WireBody = pb.Envelope['body']

/**
 * The bytes as a plain Uint8Array view. The protobuf reader hands out `bytes` fields as subarrays
 * of its input: from a Node Buffer (a Kafka record value, a file) they would be Buffers, which
 * compare unequal to the Uint8Array that was encoded.
 */
export function plainBytes(bytes: Uint8Array): Uint8Array {
  return Object.getPrototypeOf(bytes) === Uint8Array.prototype
    ? bytes
    : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** PROTOCOL_UNDECODABLE; `reason` (in details) is a short code for logs and metrics. */
export function undecodable(why: string, reason: string, cause?: unknown): FloeError {
  return new FloeError('PROTOCOL_UNDECODABLE', `undecodable control message: ${why}`, {
    cause,
    details: { reason },
  })
}

export function bodyToWire(body: ControlBody): WireBody {
  switch (body.type) {
    case 'StartCommit':
      return {
        case: 'startCommit',
        value: {
          $typeName: 'floe.control.v1.StartCommit',
          tableOffsets: body.tableOffsets.map(offsetToWire),
          ...(body.snapshotId === null ? {} : { snapshotId: body.snapshotId }),
        },
      }
    case 'EndCommit':
      return {
        case: 'endCommit',
        value: { $typeName: 'floe.control.v1.EndCommit', expectedPartitions: body.expectedPartitions.map(tpToWire) },
      }
    case 'WriteStatus':
      return {
        case: 'writeStatus',
        value: {
          $typeName: 'floe.control.v1.WriteStatus',
          partitions: body.partitions.map(partitionStatusToWire),
          filesPointer: body.filesPointer?.location ?? '',
          fileCount: body.filesPointer?.fileCount ?? filesIn(body),
          rotations: (body.rotations ?? []).map(rotationToWire),
          sharedSegments: body.rotations !== undefined,
          topic: body.topic ?? '',
          route: body.route ?? '',
        },
      }
    case 'CommitAcked':
      return {
        case: 'commitAcked',
        value: {
          $typeName: 'floe.control.v1.CommitAcked',
          ...(body.snapshotId === null ? {} : { snapshotId: body.snapshotId }),
          committedOffsets: body.committedOffsets.map(offsetToWire),
          committedFiles: body.committedFiles.map((p) => ({
            $typeName: 'floe.control.v1.PartitionFilePaths',
            topic: p.topic,
            partition: p.partition,
            filePaths: p.filePaths,
          })),
          rejections: body.rejections.map((r) => ({
            $typeName: 'floe.control.v1.Rejection',
            topic: r.topic,
            partition: r.partition,
            reason: r.reason,
            ...(r.tableOffset === undefined ? {} : { tableOffset: r.tableOffset }),
            skipFloors: (r.skipFloors ?? []).map(({ table, offset }) => ({
              $typeName: 'floe.control.v1.TableOffset',
              table,
              offset,
            })),
          })),
          acceptedRotations: body.acceptedRotations ?? [],
        },
      }
    case 'CommitRequested':
      return {
        case: 'commitRequested',
        value: {
          $typeName: 'floe.control.v1.CommitRequested',
          reason: body.reason,
          partitions: body.partitions.map(tpToWire),
        },
      }
  }
}

/** The domain body; undefined for a body this version does not know (or none). */
export function bodyFromWire(body: WireBody): ControlBody | undefined {
  switch (body.case) {
    case 'startCommit':
      return {
        type: 'StartCommit',
        tableOffsets: body.value.tableOffsets.map(offsetFromWire),
        snapshotId: body.value.snapshotId ?? null,
      }
    case 'endCommit':
      return { type: 'EndCommit', expectedPartitions: body.value.expectedPartitions.map(tpFromWire) }
    case 'writeStatus': {
      const { partitions, filesPointer, fileCount, rotations, sharedSegments, topic, route } = body.value
      return {
        type: 'WriteStatus',
        partitions: partitions.map(partitionStatusFromWire),
        // Neither the flag nor a rotation is the per-partition layout: the body it always was. A
        // shared sender with no rotation keeps `rotations: []`, so its summaries are never taken
        // for per-partition ranges (a range without files moves the table past rows no file holds).
        ...(rotations.length === 0 && !sharedSegments ? {} : { rotations: rotations.map(rotationFromWire) }),
        ...(filesPointer === '' ? {} : { filesPointer: { location: filesPointer, fileCount } }),
        ...(topic === '' ? {} : { topic }),
        ...(route === '' ? {} : { route }),
      }
    }
    case 'commitAcked':
      return {
        type: 'CommitAcked',
        snapshotId: body.value.snapshotId ?? null,
        committedOffsets: body.value.committedOffsets.map(offsetFromWire),
        committedFiles: body.value.committedFiles.map((p) => ({
          topic: p.topic,
          partition: p.partition,
          filePaths: p.filePaths,
        })),
        rejections: body.value.rejections.map((r) => ({
          topic: r.topic,
          partition: r.partition,
          reason: r.reason,
          ...(r.tableOffset === undefined ? {} : { tableOffset: r.tableOffset }),
          ...(r.skipFloors.length === 0
            ? {}
            : { skipFloors: r.skipFloors.map(({ table, offset }) => ({ table, offset })) }),
        })),
        // None on the wire (the per-partition layout) decodes as the body always did.
        ...(body.value.acceptedRotations.length === 0 ? {} : { acceptedRotations: body.value.acceptedRotations }),
      }
    case 'commitRequested':
      return { type: 'CommitRequested', reason: body.value.reason, partitions: body.value.partitions.map(tpFromWire) }
    case undefined:
      return undefined
  }
}

/** How many files a status names in place, in its partitions and its rotations. */
export function filesIn(status: { partitions: PartitionStatus[]; rotations?: Rotation[] }): number {
  const inPartitions = status.partitions.reduce((n, p) => n + p.files.length, 0)
  return (status.rotations ?? []).reduce((n, r) => n + r.files.length, inPartitions)
}

export function rotationToWire(rotation: Rotation): pb.Rotation {
  return {
    $typeName: 'floe.control.v1.Rotation',
    id: rotation.id,
    sequence: rotation.sequence,
    ranges: rotation.ranges.map((r) => ({
      $typeName: 'floe.control.v1.RotationRange',
      topic: r.topic,
      partition: r.partition,
      start: r.start,
      end: r.end,
    })),
    files: rotation.files.map(dataFileToWire),
    tableClaims: (rotation.tableClaims ?? []).map((c) => ({
      $typeName: 'floe.control.v1.TableClaim',
      table: c.table,
      topic: c.topic,
      partition: c.partition,
      start: c.start,
      end: c.end,
    })),
  }
}

export function rotationFromWire(rotation: pb.Rotation): Rotation {
  return {
    id: rotation.id,
    sequence: rotation.sequence,
    ranges: rotation.ranges.map((r) => ({ topic: r.topic, partition: r.partition, start: r.start, end: r.end })),
    files: rotation.files.map(dataFileFromWire),
    ...(rotation.tableClaims.length === 0
      ? {}
      : {
          tableClaims: rotation.tableClaims.map(({ table, topic, partition, start, end }) => ({
            table,
            topic,
            partition,
            start,
            end,
          })),
        }),
  }
}

export function senderFromWire(sender: pb.Sender | undefined): Sender {
  return { workerId: sender?.workerId ?? '', memberId: sender?.memberId ?? '', generation: sender?.generation ?? 0 }
}

function tpToWire(tp: TopicPartition): pb.TopicPartition {
  return { $typeName: 'floe.control.v1.TopicPartition', topic: tp.topic, partition: tp.partition }
}

function tpFromWire(tp: pb.TopicPartition): TopicPartition {
  return { topic: tp.topic, partition: tp.partition }
}

function offsetToWire(o: TopicPartitionOffset): pb.TopicPartitionOffset {
  return { $typeName: 'floe.control.v1.TopicPartitionOffset', topic: o.topic, partition: o.partition, offset: o.offset }
}

function offsetFromWire(o: pb.TopicPartitionOffset): TopicPartitionOffset {
  return { topic: o.topic, partition: o.partition, offset: o.offset }
}

const kindToWire = {
  data: PartitionStatus_Kind.DATA,
  empty: PartitionStatus_Kind.EMPTY,
  error: PartitionStatus_Kind.ERROR,
} as const

function kindFromWire(kind: pb.PartitionStatus_Kind): PartitionStatus['kind'] {
  switch (kind) {
    case PartitionStatus_Kind.DATA:
      return 'data'
    case PartitionStatus_Kind.EMPTY:
      return 'empty'
    case PartitionStatus_Kind.ERROR:
      return 'error'
  }
  // A kind added by a newer version: its meaning is unknown here, so the status cannot be used.
  throw undecodable(`partition status of unknown kind ${kind}`, 'unknown-kind')
}

function partitionStatusToWire(status: PartitionStatus): pb.PartitionStatus {
  return {
    $typeName: 'floe.control.v1.PartitionStatus',
    topic: status.topic,
    partition: status.partition,
    kind: kindToWire[status.kind],
    rangeStart: status.rangeStart,
    rangeEnd: status.rangeEnd,
    files: status.files.map(dataFileToWire),
    error: status.error ?? '',
    ...(status.logStartJump
      ? { logStartJump: { $typeName: 'floe.control.v1.LogStartJump', ...status.logStartJump } }
      : {}),
    origin: status.origin === undefined ? PartitionStatus_Origin.UNSPECIFIED : originToWire[status.origin],
    ...(status.oldestTimestampMs === undefined ? {} : { oldestTimestampMs: BigInt(status.oldestTimestampMs) }),
  }
}

const originToWire = {
  table: PartitionStatus_Origin.TABLE,
  'group-offset': PartitionStatus_Origin.GROUP_OFFSET,
  'offset-reset': PartitionStatus_Origin.OFFSET_RESET,
} as const

/** Unset (an older sender, or not a data status) stays absent; readers take absent as 'table'. */
function originFromWire(origin: pb.PartitionStatus_Origin): { origin?: RangeOrigin } {
  switch (origin) {
    case PartitionStatus_Origin.TABLE:
      return { origin: 'table' }
    case PartitionStatus_Origin.GROUP_OFFSET:
      return { origin: 'group-offset' }
    case PartitionStatus_Origin.OFFSET_RESET:
      return { origin: 'offset-reset' }
    default:
      return {}
  }
}

function partitionStatusFromWire(status: pb.PartitionStatus): PartitionStatus {
  const jump = status.logStartJump
  return {
    topic: status.topic,
    partition: status.partition,
    kind: kindFromWire(status.kind),
    rangeStart: status.rangeStart,
    rangeEnd: status.rangeEnd,
    files: status.files.map(dataFileFromWire),
    ...(status.error === '' ? {} : { error: status.error }),
    ...(jump ? { logStartJump: { from: jump.from, to: jump.to, lost: jump.lost } } : {}),
    ...originFromWire(status.origin),
    ...(status.oldestTimestampMs === undefined ? {} : { oldestTimestampMs: Number(status.oldestTimestampMs) }),
  }
}

export function dataFileToWire(file: DataFileEntry): pb.DataFileEntry {
  return {
    $typeName: 'floe.control.v1.DataFileEntry',
    filePath: file.filePath,
    fileFormat: file.fileFormat,
    recordCount: file.recordCount,
    fileSizeInBytes: file.fileSizeInBytes,
    specId: file.specId,
    partition: [...file.partitionJson].map(([fieldId, json]) => ({
      $typeName: 'floe.control.v1.PartitionValue',
      fieldId,
      json,
    })),
    columnSizes: mapToWire(file.columnSizes),
    valueCounts: mapToWire(file.valueCounts),
    nullValueCounts: mapToWire(file.nullValueCounts),
    nanValueCounts: mapToWire(file.nanValueCounts),
    lowerBounds: mapToWire(file.lowerBounds),
    upperBounds: mapToWire(file.upperBounds),
    splitOffsets: file.splitOffsets ?? [],
    ...(file.sortOrderId === undefined ? {} : { sortOrderId: file.sortOrderId }),
    bloomFilterLocation: file.bloomFilterLocation ?? '',
    table: file.table ?? '',
  }
}

export function dataFileFromWire(file: pb.DataFileEntry): DataFileEntry {
  if (file.fileFormat !== 'PARQUET') {
    throw undecodable(`data file ${file.filePath} of format ${file.fileFormat}`, 'unknown-file-format')
  }
  const entry: DataFileEntry = {
    filePath: file.filePath,
    fileFormat: file.fileFormat,
    specId: file.specId,
    recordCount: file.recordCount,
    fileSizeInBytes: file.fileSizeInBytes,
    partitionJson: new Map(file.partition.map((value) => [value.fieldId, value.json])),
  }
  // Optional properties are set only when present, so a decoded entry equals the one encoded.
  const columnSizes = mapFromWire(file.columnSizes)
  if (columnSizes) entry.columnSizes = columnSizes
  const valueCounts = mapFromWire(file.valueCounts)
  if (valueCounts) entry.valueCounts = valueCounts
  const nullValueCounts = mapFromWire(file.nullValueCounts)
  if (nullValueCounts) entry.nullValueCounts = nullValueCounts
  const nanValueCounts = mapFromWire(file.nanValueCounts)
  if (nanValueCounts) entry.nanValueCounts = nanValueCounts
  // Bounds are copied: as views they would keep the whole received buffer (a Kafka fetch of
  // several MB) alive for as long as the coordinator holds the file.
  const lowerBounds = mapFromWire(file.lowerBounds, copyBytes)
  if (lowerBounds) entry.lowerBounds = lowerBounds
  const upperBounds = mapFromWire(file.upperBounds, copyBytes)
  if (upperBounds) entry.upperBounds = upperBounds
  if (file.splitOffsets.length > 0) entry.splitOffsets = file.splitOffsets
  if (file.sortOrderId !== undefined) entry.sortOrderId = file.sortOrderId
  if (file.bloomFilterLocation !== '') entry.bloomFilterLocation = file.bloomFilterLocation
  if (file.table !== '') entry.table = file.table
  return entry
}

function mapToWire<V>(map: Map<number, V> | undefined): { [key: number]: V } {
  const object: { [key: number]: V } = {}
  if (map) for (const [key, value] of map) object[key] = value
  return object
}

function mapFromWire<V>(object: { [key: number]: V }, copy?: (value: V) => V): Map<number, V> | undefined {
  const keys = Object.keys(object)
  if (keys.length === 0) return undefined
  const map = new Map<number, V>()
  for (const key of keys) {
    const value = object[Number(key)]!
    map.set(Number(key), copy ? copy(value) : value)
  }
  return map
}

function copyBytes(bytes: Uint8Array): Uint8Array {
  return Uint8Array.prototype.slice.call(bytes)
}
