// One assigned Kafka partition of a dataset: its control machine (machine/), created on assignment
// and stopped on revocation, wired to the actors PartitionWork implements over the partition's
// WAL, the upload queue and the Kafka group. The record loop asks `position` before it fetches the
// partition (none unless the machine is writing) and hands each fetched batch to `decode` and
// `append`; everything else that touches the partition is one of the machine's actors.

import { type Actor, createActor, fromCallback, fromPromise } from 'xstate'
import type { PartitionWriteStatus } from '../protocol/index.ts'
import type { TopicDataset } from '../shared/config/index.ts'
import type { PartitionSpec, Schema } from '../shared/iceberg/index.ts'
import type { RoundFirst } from '../shared/index.ts'
import type { FetchedPartition, KafkaAdmin, TopicReader } from '../shared/kafka/index.ts'
import type { RowGroupEncoders } from '../shared/parquet/index.ts'
import type { FloeMetrics, Logger, PhaseClock } from '../shared/telemetry/index.ts'
import type { Decoder } from './decode/index.ts'
import type { EarlierRoutes } from './earlier-routes.ts'
import {
  type AcknowledgeInput,
  type FlushInput,
  isWriting,
  type ParticipantEvent,
  participantMachine,
  type RevokeInput,
  type SendStatusInput,
  type SyncInput,
  type SyncResult,
} from './machine/index.ts'
import { participantEventLogger } from './partition-events.ts'
import type { DecodedBatch } from './partition-ingest.ts'
import type { PartitionQueue } from './partition-queue.ts'
import { PartitionWork } from './partition-work.ts'
import type { BrokerPositionLookup } from './positioning.ts'
import type { RoundReports } from './round-reports.ts'
import { SharedPartitionWork } from './shared-partition-work.ts'
import type { SharedWal } from './shared-wal.ts'
import type { UploadQueue } from './upload/index.ts'

/** `partition`: one PartitionLog per Kafka partition; `shared`: one SharedLog per dataset. */
export type WalLayout = 'partition' | 'shared'

/** The WAL settings of a dataset's partitions (the config's `wal` section). */
export interface WalSettings {
  dir: string
  maxFileSizeBytes: number
  maxFileAgeMinutes: number
  maxOpenSegmentsPerPartition: number
  /** Absent: `partition` (a hand-built setting; the config always names one). */
  layout?: WalLayout
  compression: 'zstd' | 'snappy' | 'gzip' | 'lz4' | 'none'
  /** Where a segment's row group is cut, in estimated uncompressed bytes. */
  rowGroupBytes: number
  /** The worker's encoder threads (`encoderThreads`); none: segments are encoded on the main thread. */
  encoders?: RowGroupEncoders
}

/** What a topic's participant (TopicParticipant) shares with each of its partitions. */
export interface SlotEnvironment {
  dataset: TopicDataset
  table: {
    schema: Schema
    spec: PartitionSpec
    dataLocation: string
    offsets(): Promise<ReadonlyMap<number, bigint>>
  }
  /**
   * A routed dataset (the decoder's routeTables name its tables): how many tables may have open
   * segments at once, and where each table's data files go (the table is made ready on first use).
   */
  route?: {
    /** The route's fingerprint: what the WAL folder and the statuses name. */
    fingerprint: string
    maxOpenTables: number
    dataLocation(table: string): Promise<string>
    /** The ledger's earlier route generations' floors, as the last positioning read them. */
    earlier?: EarlierRoutes
  }
  wal: WalSettings
  bloomFieldIds: readonly number[]
  autoOffsetReset: 'earliest' | 'latest'
  /** The log starts, log ends and group offsets a starting point needs, asked in batches. */
  broker: BrokerPositionLookup
  syncRetryMs: number
  reader: TopicReader
  admin: KafkaAdmin
  uploads: UploadQueue
  reports: RoundReports
  decoder: Decoder
  logger: Logger
  metrics: FloeMetrics
  phases: PhaseClock
  /** Data file location -> its bloom-filter sidecar, for the WRITE-STATUS. */
  sidecars: Map<string, string>
  /** Commits the group offset (lag monitoring only, invariant 6). */
  commitGroupOffset(partition: number, offset: bigint): void
  /** A machine changed state, an upload settled: the loop and the backpressure may look again. */
  changed(): void
  /** The dataset's shared WAL (`wal.layout: shared`); without it each partition has a PartitionLog. */
  shared?: SharedWal
  /** Where a round's flushes and statuses are held, to go ahead of the record loop. */
  roundFirst: RoundFirst
}

/** What holds open segments and ready files: the memory relief and the WAL gauges read and act on it. */
export interface WalHolder {
  readonly heldBytes: number
  readonly bufferedHeldBytes: number
  readonly openSegmentCount: number
  readonly readySegmentCount: number
  readonly readyBytes: number
  flushRowGroups(): Promise<void>
  rotateForMemory(): Promise<void>
}

/** A partition's record path since its last sync, as the slot sees it. */
export interface IngestView {
  /** Where the next fetch starts; undefined while the WAL does not track the partition. */
  readonly position: bigint | undefined
  /** The fetch said the position is outside the log: not fetched again until a sync moves it. */
  outOfRange: boolean
  /** The WAL takes appends. */
  readonly open: boolean
  decode(fetched: FetchedPartition, decoder: Decoder): DecodedBatch
}

/**
 * The work on one partition's WAL, in either layout (PartitionWork, SharedPartitionWork): the
 * machine's actors and the record loop's append and triggers.
 */
export interface SlotWork extends WalHolder {
  readonly ingest: IngestView | undefined
  sync(input: SyncInput, signal: AbortSignal): Promise<SyncResult>
  flush(input: FlushInput, signal: AbortSignal): Promise<PartitionWriteStatus>
  acknowledge(offset: bigint): Promise<void>
  letGo(reason: string): Promise<void>
  append(ingest: IngestView, batch: DecodedBatch, appendable: () => boolean): Promise<boolean>
  rotateIfDue(): Promise<void>
  useTable(schema: Schema, spec: PartitionSpec): void
  /** Segments written from now on follow the schema and spec: the open ones are rotated first. */
  followTable(schema: Schema, spec: PartitionSpec): Promise<void>
}

/** A fetched batch decoded against the partition's log of the moment (append checks it is still that one). */
export interface DecodedFetch {
  ingest: IngestView
  batch: DecodedBatch
}

/** What one fetched batch did, for the counters. */
export interface IngestCounts {
  records: number
  rows: number
  bad: number
}

export class PartitionSlot implements WalHolder {
  readonly partition: number
  readonly topic: string
  readonly actor: Actor<typeof participantMachine>
  readonly #env: SlotEnvironment
  readonly #lagLabels: { dataset: string; topic: string; partition: string }
  readonly #work: SlotWork

  constructor(env: SlotEnvironment, partition: number, queue: PartitionQueue, paused: boolean) {
    this.#env = env
    this.partition = partition
    this.topic = env.dataset.topic
    this.#lagLabels = { dataset: env.dataset.name, topic: env.dataset.topic, partition: String(partition) }
    const resync = (reason: string) => this.actor.send({ type: 'ingest.resync', reason })
    const work = env.shared
      ? new SharedPartitionWork(env, partition, env.shared, resync)
      : new PartitionWork(env, partition, queue, resync)
    this.#work = work
    const machine = participantMachine.provide({
      actors: {
        syncPartition: fromPromise<SyncResult, SyncInput>(async ({ input, signal }) => {
          const synced = await work.sync(input, signal)
          // The group's offset follows the table's from the moment a member takes the partition:
          // the ACK that would move it may have gone to the member before, revoked meanwhile.
          if (synced.tableOffset !== undefined) env.commitGroupOffset(partition, synced.tableOffset)
          return synced
        }),
        // Fetching is the record loop's, and it leaves out every partition that is not writing:
        // holding is implicit. Letting go wakes the loop, which may be waiting with nothing to read.
        holdConsumer: fromCallback(() => () => env.changed()),
        // a round's flush and status go ahead of the record loop's next fetch (shared/round-first.ts)
        flushPartition: fromPromise<PartitionWriteStatus, FlushInput>(({ input, signal }) =>
          env.roundFirst.hold(work.flush(input, signal)),
        ),
        sendStatus: fromPromise<void, SendStatusInput>(({ input }) =>
          env.roundFirst.hold(env.reports.submit(input.commitId, input.status)),
        ),
        acknowledge: fromPromise<void, AcknowledgeInput>(({ input }) => work.acknowledge(input.offset)),
        rotateOnRevoke: fromPromise<void, RevokeInput>(() => work.letGo('revoke')),
      },
    })
    this.actor = createActor(machine, {
      input: { dataset: env.dataset.name, topic: this.topic, partition, syncRetryMs: env.syncRetryMs },
    })
    this.actor.on('*', participantEventLogger(env.logger, partition))
    this.actor.subscribe({ next: () => env.changed(), error: () => env.changed() })
    this.actor.start()
    if (paused) this.actor.send({ type: 'backpressure.pause' })
  }

  send(event: ParticipantEvent): void {
    this.actor.send(event)
  }

  /** The record loop may fetch this partition now, from `position`. */
  get position(): bigint | undefined {
    const ingest = this.#work.ingest
    if (!ingest || ingest.outOfRange || !ingest.open) return undefined
    return isWriting(this.actor.getSnapshot()) ? ingest.position : undefined
  }

  get paused(): boolean {
    return this.actor.getSnapshot().matches({ active: { ingest: 'paused' } })
  }

  /** The machine is flushing round `commitId` (the round's WRITE-STATUS waits for it). */
  flushing(commitId: string): boolean {
    const snapshot = this.actor.getSnapshot()
    return snapshot.context.round === commitId && snapshot.matches({ active: { commit: 'flushing' } })
  }

  /**
   * The lag gauge, as the table sees it: what the topic holds beyond the uncommitted chain's start.
   * A partition that answered with an error reports no high watermark.
   */
  reportLag(fetched: FetchedPartition): void {
    if (fetched.error !== undefined) return
    const chainStart = this.actor.getSnapshot().context.chainStart ?? fetched.from
    this.#env.metrics.consumerLag.set(this.#lagLabels, Number(fetched.highWatermark - chainStart))
  }

  /** Estimated memory its open segments hold, and of that their buffered rows. */
  get heldBytes(): number {
    return this.#work.heldBytes
  }
  get bufferedHeldBytes(): number {
    return this.#work.bufferedHeldBytes
  }
  get openSegmentCount(): number {
    return this.#work.openSegmentCount
  }
  get readySegmentCount(): number {
    return this.#work.readySegmentCount
  }
  get readyBytes(): number {
    return this.#work.readyBytes
  }

  /**
   * One fetched batch, decoded, or undefined when there is nothing to append: a batch made from a
   * position the partition no longer has (a sync moved it meanwhile) is dropped. The caller
   * dead-letters `bad` (one send for every partition of a fetch) before it calls `append`, so no
   * commit can pass a record the dead-letter topic does not have.
   */
  decode(fetched: FetchedPartition): DecodedFetch | undefined {
    const ingest = this.#work.ingest
    if (!ingest || !this.#appendable(ingest, fetched.from) || ingest.outOfRange) return undefined
    if (fetched.outOfRange) {
      ingest.outOfRange = true
      this.actor.send({ type: 'ingest.resync', reason: 'out-of-range' })
      return undefined
    }
    if (fetched.next === fetched.from) return undefined
    this.#env.phases.switchTo('decode')
    return { ingest, batch: ingest.decode(fetched, this.#env.decoder) }
  }

  /** Appends a decoded batch whose bad records are dealt with; undefined if the partition moved meanwhile. */
  async append({ ingest, batch }: DecodedFetch): Promise<IngestCounts | undefined> {
    this.#env.phases.switchTo('encode')
    const appended = await this.#work.append(ingest, batch, () => this.#appendable(ingest, batch.from))
    return appended ? { records: batch.records, rows: batch.rows.length, bad: batch.bad.length } : undefined
  }

  /**
   * Rows go in only while the machine is writing, into the log of the last sync, at its position.
   * A batch fetched before a pause or a resync is dropped and read again later.
   */
  #appendable(ingest: IngestView, from: bigint): boolean {
    return this.#work.ingest === ingest && ingest.position === from && isWriting(this.actor.getSnapshot())
  }

  /** Rotates when a size, age or open-segment trigger says so. */
  rotateIfDue(): Promise<void> {
    return this.#work.rotateIfDue()
  }

  /** Rotates the open segments now (memory relief), whatever the triggers say. */
  rotateForMemory(): Promise<void> {
    return this.#work.rotateForMemory()
  }

  /** Writes the open segments' buffered rows out as row groups (memory pressure). */
  flushRowGroups(): Promise<void> {
    return this.#work.flushRowGroups()
  }

  /** The table's schema or spec changed: segments this partition opens from now on follow them. */
  useTable(schema: Schema, spec: PartitionSpec): void {
    this.#work.useTable(schema, spec)
  }

  /** Rows appended from now on go into segments of this schema and spec: the open ones rotate first. */
  followTable(schema: Schema, spec: PartitionSpec): Promise<void> {
    return this.#work.followTable(schema, spec)
  }

  /** Worker shutdown: stop the machine, rotate what is open (kept for recovery), close the WAL. */
  async shutdown(): Promise<void> {
    this.actor.stop()
    await this.#work.letGo('shutdown')
  }
}
