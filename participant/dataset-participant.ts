// The participant side of one dataset on one worker: a member of the dataset's consumer group that
// ingests every partition assigned to it (consume -> decode -> WAL -> upload) and answers the
// coordinator's rounds. Positions come from the table (invariant 2), never from Kafka's committed
// offset, except for a partition the table has never seen.
import { setTimeout as sleep } from 'node:timers/promises'
import { type ControlMessage, type PartitionStatus, toDataFileEntry } from '../protocol/index.ts'
import type { DatasetConfig } from '../shared/config/index.ts'
import type { PartitionSpec, Schema, StructType } from '../shared/iceberg/index.ts'
import { compilePartitioner } from '../shared/iceberg/partitioning/index.ts'
import { FloeError, messageOf } from '../shared/index.ts'
import {
  type FetchedPartition,
  GroupReader,
  type KafkaAdmin,
  type KafkaConnection,
  type KafkaProducer,
} from '../shared/kafka/index.ts'
import type { FloeMetrics, Logger, PhaseClock } from '../shared/telemetry/index.ts'
import type { Backpressure } from './backpressure/index.ts'
import { compileDecoder, type Decoder, dlqRecord } from './decode/index.ts'
import { PartitionIngest } from './partition-ingest.ts'
import type { UploadQueue } from './upload/index.ts'
import { PartitionLog, partitionLogDirectory, type ReadySegment, recoverPartition } from './wal/index.ts'

export interface ParticipantTable {
  schema: Schema
  spec: PartitionSpec
  /** Where data files go: `<table location>/data`. */
  dataLocation: string
  /** The table's next offset per partition of the dataset's topic, as the table says now. */
  offsets(): Promise<ReadonlyMap<number, bigint>>
}

export interface DatasetParticipantOptions {
  dataset: DatasetConfig
  group: string
  workerId: string
  connection: KafkaConnection
  autoOffsetReset: 'earliest' | 'latest'
  wal: {
    dir: string
    maxFileSizeBytes: number
    maxFileAgeMinutes: number
    maxOpenSegmentsPerPartition: number
    compression: 'zstd' | 'snappy' | 'gzip' | 'lz4' | 'none'
  }
  maxRecordBytes: number
  table: ParticipantTable
  admin: KafkaAdmin
  producer: KafkaProducer
  uploads: UploadQueue
  backpressure: Backpressure
  send: (message: ControlMessage) => Promise<void>
  logger: Logger
  metrics: FloeMetrics
  phases: PhaseClock
  sessionTimeoutMs?: number
}

export class DatasetParticipant {
  readonly #o: DatasetParticipantOptions
  readonly #reader: GroupReader
  readonly #decoder: Decoder
  readonly #partitions = new Map<number, PartitionIngest>()
  readonly #uploads = new Map<string, Promise<unknown>>()
  readonly #partitionType: StructType
  readonly #bloomFieldIds: number[]
  readonly #labels: { dataset: string }
  #running = false
  #loop: Promise<void> | undefined
  /** Serializes the record loop and control handling: both touch the partitions. */
  #lock: Promise<unknown> = Promise.resolve()
  #ready = false

  constructor(options: DatasetParticipantOptions) {
    this.#o = options
    const { dataset } = options
    this.#labels = { dataset: dataset.name }
    this.#reader = new GroupReader(options.connection, {
      groupId: options.group,
      topic: dataset.topic,
      sessionTimeoutMs: options.sessionTimeoutMs ?? 30_000,
    })
    this.#decoder = compileDecoder(dataset, { maxRecordBytes: options.maxRecordBytes })
    this.#partitionType = compilePartitioner(options.table.spec, options.table.schema).partitionType
    this.#bloomFieldIds = dataset.bloomFilterColumns.map((name) => {
      const field = options.table.schema.fields.find((f) => f.name === name)
      if (!field) throw new FloeError('CONFIG_INVALID', `bloom filter column ${name} is not in table ${dataset.table}`)
      return field.id
    })
  }

  get ready(): boolean {
    return this.#ready
  }

  get memberId(): string {
    return this.#reader.memberId
  }

  /** Partitions this member ingests now. */
  get assigned(): number[] {
    return [...this.#partitions.keys()].sort((a, b) => a - b)
  }

  async start(): Promise<void> {
    await this.#reader.join()
    this.#running = true
    this.#loop = this.#run()
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#lock.then(work, work)
    this.#lock = next.catch(() => {})
    return next
  }

  async #run(): Promise<void> {
    const { phases, backpressure, logger } = this.#o
    while (this.#running) {
      try {
        await this.#exclusive(() => this.#syncAssignment())
        this.#ready = true
        if (backpressure.paused) {
          phases.switchTo('paused')
          await sleep(100)
          continue
        }
        const positions = new Map<number, bigint>()
        for (const [partition, state] of this.#partitions) positions.set(partition, state.position)
        if (positions.size === 0) {
          phases.switchTo('idle')
          await sleep(200)
          continue
        }
        phases.switchTo('poll')
        const fetched = await this.#reader.fetch(positions)
        await this.#exclusive(() => this.#ingestAll(fetched))
      } catch (error) {
        if (!this.#running) break
        logger.warn({ err: messageOf(error), dataset: this.#o.dataset.name }, 'record loop error; retrying')
        phases.switchTo('idle')
        await sleep(1000)
      }
    }
  }

  async #ingestAll(fetched: FetchedPartition[]): Promise<void> {
    const { phases, metrics, dataset } = this.#o
    for (const part of fetched) {
      const state = this.#partitions.get(part.partition)
      // A stale answer: the partition moved away or was repositioned while the fetch was out.
      if (!state || state.position !== part.from) continue
      if (part.outOfRange) {
        const jump = await state.jumpToLogStart(part.logStartOffset)
        if (jump)
          this.#o.logger.warn(
            { dataset: dataset.name, partition: part.partition, ...stringify(jump) },
            'log start moved past the table offset: records were lost to retention',
          )
        continue
      }
      const result = await state.ingest(part, this.#decoder, (p) => phases.switchTo(p))
      phases.counts.in += result.records
      phases.counts.written += result.rows
      phases.counts.dlq += result.bad.length
      metrics.recordsReceived.inc(this.#labels, result.records)
      metrics.recordsWritten.inc(this.#labels, result.rows)
      if (result.bad.length) {
        phases.switchTo('dlq')
        await this.#deadLetter(result.bad)
      }
    }
    phases.switchTo('write')
    for (const state of this.#partitions.values()) {
      const reason = state.log.rotationDue()
      if (reason) await this.#rotate(state, reason)
    }
    this.#reportPressure()
  }

  /** Bad records go to the dead-letter topic before their offsets can be committed past. */
  async #deadLetter(
    bad: { record: import('../shared/kafka/index.ts').IncomingRecord; error: FloeError }[],
  ): Promise<void> {
    const { dataset, metrics, producer } = this.#o
    for (const { error } of bad) {
      const reason = String(error.details.reason ?? error.code)
      if (dataset.dlqTopic) metrics.recordsDeadLettered.inc({ dataset: dataset.name, reason })
      else metrics.recordsDropped.inc({ dataset: dataset.name, reason })
    }
    if (!dataset.dlqTopic) return
    const topic = dataset.dlqTopic
    await producer.send(bad.map(({ record, error }) => dlqRecord(record, topic, dataset.name, error)))
  }

  async #rotate(state: PartitionIngest, reason: Parameters<PartitionIngest['rotate']>[0]): Promise<void> {
    const rotation = await state.rotate(reason)
    if (!rotation) return
    this.#o.metrics.rotations.inc({ dataset: this.#o.dataset.name, reason })
    for (const segment of rotation.segments) this.#upload(state, segment)
  }

  #upload(state: PartitionIngest, segment: ReadySegment): Promise<unknown> {
    const existing = this.#uploads.get(segment.uuid)
    if (existing) return existing
    const upload = this.#o.uploads.enqueue(segment, this.#o.table.dataLocation).then(async (file) => {
      await state.log.markUploaded(segment, file.filePath).catch(() => undefined)
      this.#o.metrics.uploads.inc({ dataset: this.#o.dataset.name, outcome: 'ok' })
      return file
    })
    this.#uploads.set(segment.uuid, upload)
    upload.catch(() => this.#uploads.delete(segment.uuid))
    return upload
  }

  #reportPressure(): void {
    let memory = 0
    for (const state of this.#partitions.values()) memory += state.log.bufferedBytes
    this.#o.backpressure.setOpenSegmentMemoryBytes(memory)
    this.#o.backpressure.setPendingUploadBytes(this.#o.uploads.pendingBytes)
    this.#o.metrics.uploadsPending.set(this.#labels, this.#o.uploads.pendingCount)
    this.#o.metrics.uploadPendingBytes.set(this.#labels, this.#o.uploads.pendingBytes)
  }

  async #syncAssignment(): Promise<void> {
    const now = new Set(this.#reader.assigned())
    for (const [partition, state] of this.#partitions) {
      if (now.has(partition)) continue
      // Revoked: the new owner reads again from the table's offset; what we hold uncommitted is
      // dropped (uploaded objects become orphans, invisible to readers: invariant 7).
      this.#partitions.delete(partition)
      await state.log.dropUncommitted(state.committedOffset).catch(() => {})
      await state.log.close().catch(() => {})
      this.#o.logger.info({ dataset: this.#o.dataset.name, partition }, 'partition revoked')
    }
    const added = [...now].filter((p) => !this.#partitions.has(p))
    if (added.length === 0) return
    const tableOffsets = await this.#o.table.offsets()
    const unseen = added.filter((p) => !tableOffsets.has(p))
    const groupOffsets = unseen.length ? await this.#reader.committed(unseen) : new Map<number, bigint>()
    const resetOffsets = unseen.length
      ? await (this.#o.autoOffsetReset === 'earliest'
          ? this.#o.admin.startOffsets(this.#o.dataset.topic, unseen)
          : this.#o.admin.endOffsets(this.#o.dataset.topic, unseen))
      : new Map<number, bigint>()
    for (const partition of added) {
      const tableOffset = tableOffsets.get(partition)
      const dir = partitionLogDirectory(this.#o.wal.dir, this.#o.dataset.name, this.#o.dataset.topic, partition)
      const recovered = await recoverPartition(dir, tableOffset, { topic: this.#o.dataset.topic, partition })
      const start = tableOffset ?? groupOffsets.get(partition) ?? resetOffsets.get(partition) ?? 0n
      const position = recovered.resumeFrom ?? start
      const log = new PartitionLog({
        dir,
        topic: this.#o.dataset.topic,
        partition,
        schema: this.#o.table.schema,
        spec: this.#o.table.spec,
        startOffset: position,
        codec: this.#o.wal.compression === 'none' ? 'uncompressed' : this.#o.wal.compression,
        bloomFilterColumns: this.#bloomFieldIds,
        limits: {
          maxFileSizeBytes: this.#o.wal.maxFileSizeBytes,
          maxFileAgeMs: this.#o.wal.maxFileAgeMinutes * 60_000,
          maxOpenSegments: this.#o.wal.maxOpenSegmentsPerPartition,
        },
        recovered: recovered.segments,
      })
      const origin = tableOffset !== undefined ? 'table' : groupOffsets.has(partition) ? 'group-offset' : 'offset-reset'
      const state = new PartitionIngest({
        log,
        position,
        committedOffset: start,
        origin,
        recovered: recovered.rotations,
      })
      this.#partitions.set(partition, state)
      for (const segment of recovered.segments) this.#upload(state, segment)
      this.#o.logger.info(
        {
          dataset: this.#o.dataset.name,
          partition,
          position: String(position),
          from:
            tableOffset !== undefined
              ? 'table'
              : groupOffsets.has(partition)
                ? 'group-offset'
                : this.#o.autoOffsetReset,
          reusedFiles: recovered.segments.length,
          deletedFiles: recovered.deleted.length,
        },
        'partition assigned',
      )
    }
  }

  /** A control message for this dataset and group: START, END, ACK. Other messages are ignored. */
  receive(message: ControlMessage): Promise<void> {
    if (message.dataset !== this.#o.dataset.name || message.group !== this.#o.group) return Promise.resolve()
    switch (message.body.type) {
      case 'StartCommit':
        return this.#exclusive(() =>
          this.#onStart(message.body as Extract<ControlMessage['body'], { type: 'StartCommit' }>),
        )
      case 'EndCommit':
        return this.#exclusive(() => this.#onEnd(message.commitId))
      case 'CommitAcked':
        return this.#exclusive(() =>
          this.#onAck(message.body as Extract<ControlMessage['body'], { type: 'CommitAcked' }>),
        )
      default:
        return Promise.resolve()
    }
  }

  async #onStart(body: Extract<ControlMessage['body'], { type: 'StartCommit' }>): Promise<void> {
    for (const { topic, partition, offset } of body.tableOffsets) {
      const state = topic === this.#o.dataset.topic ? this.#partitions.get(partition) : undefined
      if (!state || offset === state.committedOffset) continue
      if (offset > state.committedOffset && state.uncommitted.some((r) => r.end === offset)) {
        // The table already has some of our ranges (an ACK we never saw): let them go.
        await state.committed(offset)
      } else if (!state.jump) {
        this.#o.logger.warn(
          { dataset: this.#o.dataset.name, partition, ours: String(state.committedOffset), table: String(offset) },
          'out of line with the table: reading again from its offset',
        )
        await state.resync(offset)
      }
    }
  }

  async #onEnd(commitId: string): Promise<void> {
    const { phases } = this.#o
    phases.switchTo('write')
    for (const state of this.#partitions.values()) await this.#rotate(state, 'commit')
    phases.switchTo('upload-wait')
    const statuses: PartitionStatus[] = []
    for (const [partition, state] of this.#partitions) {
      const range = state.pendingRange()
      const files = []
      try {
        for (const segment of state.pendingSegments()) {
          const file = (await this.#upload(state, segment)) as import('../shared/iceberg/index.ts').DataFile
          files.push(toDataFileEntry(file, this.#partitionType))
        }
      } catch (error) {
        statuses.push({
          topic: state.topic,
          partition,
          kind: 'error',
          rangeStart: 0n,
          rangeEnd: 0n,
          files: [],
          error: messageOf(error),
        })
        continue
      }
      if (!range && !state.jump) {
        statuses.push({
          topic: state.topic,
          partition,
          kind: 'empty',
          rangeStart: state.committedOffset,
          rangeEnd: state.committedOffset,
          files: [],
        })
        continue
      }
      const start = state.jump ? state.jump.to : (range?.start ?? state.committedOffset)
      statuses.push({
        topic: state.topic,
        partition,
        kind: 'data',
        rangeStart: start,
        rangeEnd: range?.end ?? start,
        files,
        origin: state.origin,
        ...(state.jump ? { logStartJump: state.jump } : {}),
      })
    }
    phases.switchTo('report')
    await this.#o.send({
      dataset: this.#o.dataset.name,
      group: this.#o.group,
      commitId,
      sender: { workerId: this.#o.workerId, memberId: this.#reader.memberId, generation: this.#reader.generation },
      timeMs: Date.now(),
      body: { type: 'WriteStatus', partitions: statuses },
    })
  }

  async #onAck(body: Extract<ControlMessage['body'], { type: 'CommitAcked' }>): Promise<void> {
    const committed = new Map<number, bigint>()
    for (const { topic, partition, offset } of body.committedOffsets) {
      const state = topic === this.#o.dataset.topic ? this.#partitions.get(partition) : undefined
      if (!state) continue
      const deleted = await state.committed(offset)
      for (const segment of deleted) this.#uploads.delete(segment.uuid)
      committed.set(partition, offset)
    }
    for (const rejection of body.rejections) {
      const state = rejection.topic === this.#o.dataset.topic ? this.#partitions.get(rejection.partition) : undefined
      if (!state) continue
      this.#o.logger.warn(
        { dataset: this.#o.dataset.name, partition: rejection.partition, reason: rejection.reason },
        'range rejected: reading again from the table offset',
      )
      await state.resync(rejection.tableOffset ?? state.committedOffset)
    }
    // Group offsets mirror the table for lag monitoring (invariant 6), after the ACK.
    await this.#reader.commit(committed).catch((error: unknown) => {
      this.#o.logger.warn({ err: messageOf(error) }, 'could not commit group offsets (lag metrics only)')
    })
  }

  /** Stops the record loop; with `leave`, also leaves the group so partitions move at once. */
  async stop(options: { leave: boolean }): Promise<void> {
    this.#running = false
    await this.#loop?.catch(() => {})
    await this.#exclusive(async () => {
      for (const state of this.#partitions.values()) await state.log.close().catch(() => {})
    })
    if (options.leave) await this.#reader.leave().catch(() => {})
  }
}

function stringify(values: object): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)]))
}
