// A round's WRITE-STATUS for the partitions of one dataset on this worker: each partition's status
// on the wire (its data files with the partition type of their spec and their bloom-filter
// sidecar), and, when the message would be too large for the control topic, its file list spilled
// to storage (protocol's spillFiles).
import {
  type ControlMessage,
  fileListLocation,
  type Sender,
  spillFiles,
  toDataFileEntry,
  toPartitionStatus,
  toRotation,
  type WriteStatus,
} from '../protocol/index.ts'
import type { DataFile, StructType } from '../shared/iceberg/index.ts'
import type { ObjectStorage } from '../shared/storage/index.ts'
import type { RoundMessage } from './round-reports.ts'

export interface WriteStatusSenderOptions {
  dataset: string
  group: string
  workerId: string
  /**
   * The topic this sender answers for, set when the dataset reads several topics: the coordinator
   * keeps one status per member and topic.
   */
  topic?: string | undefined
  /** A routed dataset's route fingerprint: the coordinator takes statuses of the ledger's route only. */
  route?: string
  /** The member id and generation of the moment in the dataset's consumer group. */
  membership(): Pick<Sender, 'memberId' | 'generation'>
  /** The partition type of a data file's spec (TableFollower.partitionTypeOf). */
  partitionTypeOf(specId: number, filePath: string): StructType
  /** Data file location -> its bloom-filter sidecar. */
  sidecars: ReadonlyMap<string, string>
  /** Where a status too large for the control topic puts its file list; without it every status goes whole. */
  statusSpill?: { storage: ObjectStorage; tableLocation: string; maxBytes?: number } | undefined
  send(message: ControlMessage): Promise<void>
}

export class WriteStatusSender {
  readonly #o: WriteStatusSenderOptions

  constructor(options: WriteStatusSenderOptions) {
    this.#o = options
  }

  async send(commitId: string, { statuses, rotations }: RoundMessage): Promise<void> {
    const { dataset, group, workerId, statusSpill, sidecars, topic, route } = this.#o
    const toEntry = (file: DataFile) =>
      toDataFileEntry(file, this.#o.partitionTypeOf(file.specId, file.filePath), sidecars.get(file.filePath))
    let message: ControlMessage<WriteStatus> = {
      dataset,
      group,
      commitId,
      sender: { workerId, ...this.#o.membership() },
      timeMs: Date.now(),
      body: {
        type: 'WriteStatus',
        partitions: statuses.map((status) => toPartitionStatus(status, toEntry)),
        ...(rotations === undefined ? {} : { rotations: rotations.map((rotation) => toRotation(rotation, toEntry)) }),
        ...(topic === undefined ? {} : { topic }),
        ...(route === undefined ? {} : { route }),
      },
    }
    if (statusSpill) {
      message = await spillFiles(message, {
        storage: statusSpill.storage,
        location: fileListLocation(statusSpill.tableLocation, commitId, workerId),
        ...(statusSpill.maxBytes === undefined ? {} : { maxBytes: statusSpill.maxBytes }),
      })
    }
    await this.#o.send(message)
  }
}
