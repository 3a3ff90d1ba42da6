// What a DatasetParticipant is given: the dataset, its table as the catalog has it, its Kafka and
// storage clients, and where it reports.
import type { ControlMessage } from '../protocol/index.ts'
import type { DatasetConfig } from '../shared/config/index.ts'
import type { NestedField, PartitionSpec, Schema } from '../shared/iceberg/index.ts'
import type { FloeError, RoundFirst } from '../shared/index.ts'
import type { KafkaAdmin, KafkaConnection, KafkaProducer } from '../shared/kafka/index.ts'
import type { ObjectStorage } from '../shared/storage/index.ts'
import type { FloeMetrics, Logger, PhaseClock } from '../shared/telemetry/index.ts'
import type { PressureSource } from './backpressure/index.ts'
import type { EarlierRoutes } from './earlier-routes.ts'
import type { WalSettings } from './partition-slot.ts'
import type { UploadQueue } from './upload/index.ts'

export interface ParticipantTable {
  /** The table's schema and default spec at start; `current` follows later changes. */
  schema: Schema
  spec: PartitionSpec
  /** Where data files go: `<table location>/data`. */
  dataLocation: string
  /** The table's next offset per partition of one of the dataset's topics, as the table says now. */
  offsets(topic: string): Promise<ReadonlyMap<number, bigint>>
  /**
   * The table's schema and default spec as the catalog says now, read at every START-COMMIT:
   * another engine may evolve them while Floe runs. Without it, the ones at start are kept.
   */
  current?(): Promise<{ schema: Schema; spec: PartitionSpec }>
  /**
   * A dataset that infers its columns: commits the table's schema widened to take every request
   * (the fields records brought) and resolves to the table's schema and spec after it.
   */
  widen?(requests: readonly (readonly NestedField[])[]): Promise<{ schema: Schema; spec: PartitionSpec }>
  /**
   * A routed dataset: makes a table the route names ready (created with the dataset's schema and
   * spec on first use) and resolves to where its data files go.
   */
  routedDataLocation?(table: string): Promise<string>
  /**
   * A routed dataset: the floors of the ledger's earlier route generations, which `offsets`
   * refreshes (and which holds the partitions back while the ledger is not at this route).
   */
  earlierRoutes?: EarlierRoutes
}

export interface DatasetParticipantOptions {
  dataset: DatasetConfig
  group: string
  workerId: string
  connection: KafkaConnection
  autoOffsetReset: 'earliest' | 'latest'
  wal: WalSettings
  maxRecordBytes: number
  table: ParticipantTable
  admin: KafkaAdmin
  /** The dead-letter producer: compressing, with bounded retries of its own (DeadLetterSender retries on). */
  producer: KafkaProducer
  /** The dead-letter topic's `max.message.bytes` (KafkaAdmin.maxMessageBytes); default 1 MiB. */
  dlqMaxMessageBytes?: number
  uploads: UploadQueue
  /** The dataset's view of the worker's backpressure (DatasetBackpressure), or the worker's monitor. */
  backpressure: PressureSource
  send: (message: ControlMessage) => Promise<void>
  logger: Logger
  metrics: FloeMetrics
  phases: PhaseClock
  sessionTimeoutMs?: number
  /** The worker's round work, which each record loop lets go first (default: this topic's own). */
  roundFirst?: RoundFirst
  /**
   * Where a WRITE-STATUS too large for the control topic puts its file list (protocol's
   * spillFiles): the table's location and a storage that writes there. Without it every status
   * goes whole.
   */
  statusSpill?: { storage: ObjectStorage; tableLocation: string; maxBytes?: number }
  /** How long a round's WRITE-STATUS waits for partitions still flushing (default 5000 ms). */
  statusWindowMs?: number
  /** Wait before a failed partition sync is tried again (default 1000 ms). */
  syncRetryMs?: number
  /**
   * A fatal error in the record loop (shared/errors.ts: a broken invariant, a damaged progress
   * marker, badRecords: stop, a bug in Floe): the loop stops instead of retrying, and the worker
   * stops with it.
   */
  onFatal?: (error: FloeError) => void
}
