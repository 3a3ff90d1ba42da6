// One assigned partition's work in the shared-segment layout: the same actors as PartitionWork
// (sync, flush, acknowledge, let go, append), each handed to the dataset's SharedWal, which runs
// it on the dataset's one queue. What PartitionWork does per partition and the shared layout does
// once per dataset (rotation triggers, memory relief, the table's changes, the ACK's deletes)
// is the SharedWal's, called by the TopicParticipant; here those are no-ops.
import {
  type ControlMessage,
  type LogStartJump,
  type PartitionWriteStatus,
  partitionAcksOf,
} from '../protocol/index.ts'
import { FloeError, messageOf } from '../shared/index.ts'
import type { FetchedPartition } from '../shared/kafka/index.ts'
import type { Decoder } from './decode/index.ts'
import type { FlushInput, SyncInput, SyncReason, SyncResult } from './machine/index.ts'
import { type DecodedBatch, decodeFetched } from './partition-ingest.ts'
import { PartitionQueue } from './partition-queue.ts'
import type { IngestView, SlotEnvironment, SlotWork } from './partition-slot.ts'
import { abortable, countSkipped } from './partition-work.ts'
import type { RoundReportsOptions } from './round-reports.ts'
import { SharedWal } from './shared-wal.ts'

/**
 * The dataset's side of the shared layout: one queue for every partition's work (each step may
 * move every partition: a cut claims all of them, a walk rewinds any of them), the SharedWal on
 * it, and each ACK handed to the WAL before any machine acts on it.
 */
export class SharedLayout {
  readonly queue = new PartitionQueue()
  #wal: SharedWal | undefined
  /** How the round's WRITE-STATUS is made: every status of the round again, composed by the WAL. */
  readonly reports: Pick<RoundReportsOptions, 'cumulative' | 'compose'> = {
    cumulative: true,
    compose: (commitId, statuses) =>
      this.#wal?.compose(commitId, statuses) ?? { statuses: [...statuses], rotations: [] },
  }

  /** The WAL, made once the partitions' environment exists (which names it as `shared`). */
  attach(env: SlotEnvironment): void {
    this.#wal = new SharedWal(env, this.queue)
    env.shared = this.#wal
  }

  get wal(): SharedWal {
    if (!this.#wal) throw new FloeError('INVARIANT_BROKEN', 'the shared WAL is used before it is attached')
    return this.#wal
  }

  /** The WAL takes the ACK first: its deletes and walk are queued before any machine acts on it. */
  receive(message: ControlMessage, logger: SlotEnvironment['logger']): void {
    if (message.body.type !== 'CommitAcked') return
    void this.wal.acknowledged(message.commitId, partitionAcksOf(message.body)).catch((error: unknown) => {
      logger.warn({ err: messageOf(error) }, 'the shared WAL could not apply an ACK; the next sync does')
    })
  }
}

/** The record path of one partition since its last sync: its position is the shared WAL's. */
class SharedIngest implements IngestView {
  readonly topic: string
  readonly partition: number
  readonly #wal: SharedWal
  outOfRange = false

  constructor(wal: SharedWal, topic: string, partition: number) {
    this.#wal = wal
    this.topic = topic
    this.partition = partition
  }

  get position(): bigint | undefined {
    return this.#wal.position(this.partition)
  }

  get open(): boolean {
    return this.#wal.position(this.partition) !== undefined
  }

  decode(fetched: FetchedPartition, decoder: Decoder): DecodedBatch {
    const wal = this.#wal
    return decodeFetched(
      this.topic,
      this.partition,
      fetched,
      decoder,
      wal.skipFloors(this.partition),
      wal.earlierFloors(this.partition),
    )
  }
}

export class SharedPartitionWork implements SlotWork {
  readonly partition: number
  readonly topic: string
  readonly #env: SlotEnvironment
  readonly #wal: SharedWal
  readonly #resync: (reason: SyncReason) => void
  #ingest: SharedIngest | undefined
  #counted: LogStartJump | undefined

  constructor(env: SlotEnvironment, partition: number, wal: SharedWal, resync: (reason: SyncReason) => void) {
    this.#env = env
    this.partition = partition
    this.topic = env.dataset.topic
    this.#wal = wal
    this.#resync = resync
  }

  get ingest(): IngestView | undefined {
    return this.#ingest
  }

  // The dataset's SharedWal holds the memory and files; a partition holds none of its own.
  readonly heldBytes = 0
  readonly bufferedHeldBytes = 0
  readonly openSegmentCount = 0
  readonly readySegmentCount = 0
  readonly readyBytes = 0

  async sync(input: SyncInput, signal: AbortSignal): Promise<SyncResult> {
    this.#ingest = undefined
    const synced = await this.#wal.sync(this.partition)
    signal.throwIfAborted()
    this.#ingest = new SharedIngest(this.#wal, this.topic, this.partition)
    const { chainStart, reused, recordedJump, ...result } = synced
    this.#env.logger.info(
      {
        partition: this.partition,
        reason: input.reason,
        origin: result.origin,
        chainStart: String(chainStart),
        position: String(this.#wal.position(this.partition)),
        reusedRotations: reused,
      },
      'partition synced',
    )
    // a jump the WAL recorded was counted by the process that read past it, this one or an earlier
    this.#counted ??= recordedJump
    const jump = result.logStartJump
    if (jump) this.#counted = countSkipped(this.#env, this.partition, jump, this.#counted, input.reason)
    return result
  }

  async flush(input: FlushInput, signal: AbortSignal): Promise<PartitionWriteStatus> {
    const status = await abortable(this.#wal.flush(this.partition, input), signal).catch((error: unknown) => {
      // A WAL that failed outside an append (a memory or age cut, the round's cut) tracks no
      // position: nothing is fetched, so no append would ever ask for the sync that repairs it.
      if (this.#wal.failed) this.#resync('wal-failed')
      throw error
    })
    if (status !== 'gap') return status
    this.#resync('wal-gap')
    throw new FloeError(
      'INVARIANT_BROKEN',
      `partition ${this.partition}: the shared WAL does not chain from ${input.chainStart}`,
      {
        details: { topic: this.topic, partition: this.partition, chainAt: String(input.chainStart) },
      },
    )
  }

  /** The SharedWal took the ACK's deletes and walk before the machine saw it: only the group offset is left. */
  acknowledge(offset: bigint): Promise<void> {
    this.#env.commitGroupOffset(this.partition, offset)
    this.#env.changed()
    return Promise.resolve()
  }

  /** Revocation lets go of the partition in the WAL; shutdown leaves it to the SharedWal's close. */
  async letGo(reason: string): Promise<void> {
    this.#ingest = undefined
    if (reason === 'revoke') await this.#wal.release(this.partition)
  }

  async append(ingest: IngestView, batch: DecodedBatch, appendable: () => boolean): Promise<boolean> {
    try {
      return await this.#wal.append(this.partition, batch, () => this.#ingest === ingest && appendable())
    } catch (error) {
      // A failed WAL cannot say which rows reached which file: read again from the table.
      if (this.#wal.failed) this.#resync('wal-failed')
      throw error
    }
  }

  rotateIfDue(): Promise<void> {
    return Promise.resolve()
  }
  rotateForMemory(): Promise<void> {
    return Promise.resolve()
  }
  flushRowGroups(): Promise<void> {
    return Promise.resolve()
  }
  useTable(): void {}
  followTable(): Promise<void> {
    return Promise.resolve()
  }
}
