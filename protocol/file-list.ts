// Keeping control messages small. A WRITE-STATUS with many files (hundreds of Iceberg partitions,
// wide schemas with bounds per column) can reach megabytes: the Iceberg Kafka Connect sink has
// met 7 MB control messages, its users report, over Kafka's default 1 MB
// message limit. Past a threshold the file list goes to object storage beside the table, and the
// message carries its location and count.
import { randomUUID } from 'node:crypto'
import { fromBinary, toBinary } from '@bufbuild/protobuf'
import type { ObjectStorage, StorageCallOptions } from '../shared/storage/index.ts'
import { ReportedFilesSchema } from './gen/index.ts'
import { type ControlMessage, encodeEnvelope, type WriteStatus } from './messages.ts'
import { dataFileFromWire, dataFileToWire, filesIn, plainBytes, rotationToWire, undecodable } from './wire.ts'

/** Default size above which a WriteStatus's files go to storage: a quarter of Kafka's 1 MB default. */
export const DEFAULT_MAX_CONTROL_MESSAGE_BYTES = 256 * 1024

/**
 * Where a worker writes a large file list for one round:
 * `<table location>/metadata/floe-control/<commit id>/<worker id>-<uuid>.pb`. Under the table's
 * metadata so that it lives and is cleaned up with the table; a fresh UUID per write, so a
 * repeated status never overwrites one the coordinator may be reading.
 */
export function fileListLocation(
  tableLocation: string,
  commitId: string,
  workerId: string,
  id: string = randomUUID(),
): string {
  return `${tableLocation.replace(/\/+$/, '')}/metadata/floe-control/${commitId}/${workerId}-${id}.pb`
}

export interface SpillOptions extends StorageCallOptions {
  storage: ObjectStorage
  /** Where to write the file list if needed (fileListLocation). */
  location: string
  /** Encoded envelope size above which the files are written out. */
  maxBytes?: number
}

/**
 * The message as it is, when its envelope fits in `maxBytes`; otherwise the same message with
 * every partition's and rotation's files written to `location` and replaced by a FilesPointer.
 */
export async function spillFiles(
  message: ControlMessage<WriteStatus>,
  options: SpillOptions,
): Promise<ControlMessage<WriteStatus>> {
  if (encodeEnvelope(message).byteLength <= (options.maxBytes ?? DEFAULT_MAX_CONTROL_MESSAGE_BYTES)) return message
  const { partitions, rotations } = message.body
  const list = toBinary(ReportedFilesSchema, {
    $typeName: 'floe.control.v1.ReportedFiles',
    commitId: message.commitId,
    partitions: partitions.map((status) => ({
      $typeName: 'floe.control.v1.PartitionFiles' as const,
      topic: status.topic,
      partition: status.partition,
      files: status.files.map(dataFileToWire),
    })),
    rotations: (rotations ?? []).map(rotationToWire),
  })
  await options.storage.put(options.location, list, options.signal ? { signal: options.signal } : {})
  return {
    ...message,
    body: {
      ...message.body,
      partitions: partitions.map((status) => ({ ...status, files: [] })),
      ...(rotations === undefined ? {} : { rotations: rotations.map((rotation) => ({ ...rotation, files: [] })) }),
      filesPointer: { location: options.location, fileCount: filesIn(message.body) },
    },
  }
}

/**
 * The status with its files in place: read back from storage when it carries a pointer, as it is
 * otherwise. With `commitId`, a list written for another round is refused. Throws
 * PROTOCOL_UNDECODABLE for a list that does not match its status, and the storage's errors
 * (STORAGE_NOT_FOUND, STORAGE_UNAVAILABLE) as they are.
 */
export async function resolveFiles(
  status: WriteStatus,
  storage: ObjectStorage,
  options: StorageCallOptions & { commitId?: string } = {},
): Promise<WriteStatus> {
  const pointer = status.filesPointer
  if (pointer === undefined) return status
  const bytes = await storage.get(pointer.location, options.signal ? { signal: options.signal } : {})
  let list: ReturnType<typeof fromBinary<typeof ReportedFilesSchema>>
  try {
    list = fromBinary(ReportedFilesSchema, plainBytes(bytes), { readUnknownFields: false })
  } catch (error) {
    throw undecodable(`file list at ${pointer.location} is not a ReportedFiles message`, 'file-list-malformed', error)
  }
  if (options.commitId !== undefined && list.commitId !== options.commitId) {
    throw undecodable(
      `file list at ${pointer.location} is for round ${list.commitId}, not ${options.commitId}`,
      'file-list-mismatch',
    )
  }
  const filesByPartition = new Map<string, (typeof list.partitions)[number]['files']>()
  for (const p of list.partitions) filesByPartition.set(`${p.partition}:${p.topic}`, p.files)
  const partitions = status.partitions.map((p) => ({
    ...p,
    files: (filesByPartition.get(`${p.partition}:${p.topic}`) ?? []).map(dataFileFromWire),
  }))
  const filesByRotation = new Map(list.rotations.map((r) => [r.id, r.files]))
  const rotations = status.rotations?.map((r) => ({
    ...r,
    files: (filesByRotation.get(r.id) ?? []).map(dataFileFromWire),
  }))
  const { filesPointer: _read, ...rest } = status
  const resolved: WriteStatus = { ...rest, partitions, ...(rotations === undefined ? {} : { rotations }) }
  // Counted after matching: files of a partition or rotation the status does not name would be
  // lost silently.
  const count = filesIn(resolved)
  if (count !== pointer.fileCount) {
    throw undecodable(
      `file list at ${pointer.location} gives the status's partitions and rotations ${count} files, the status says ${pointer.fileCount}`,
      'file-list-mismatch',
    )
  }
  return resolved
}
