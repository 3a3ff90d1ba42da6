// The participant side of one topic of a dataset on one worker: it ingests every partition of the
// topic assigned to the worker's member of the dataset's group (consume -> decode -> WAL -> upload)
// and answers the coordinator's rounds for them. The membership is the DatasetParticipant's, which
// runs one of these per topic.
//
// Two mechanisms, each owning its part:
// - the record loop (here): fetch the partitions whose machine is writing, decode, dead-letter,
//   append, rotate on size/age/open segments, report memory and upload backlog. Plain code, per
//   batch.
// - one control machine per assigned partition (machine/, run by PartitionSlot): positioning from
//   the table (invariant 2), recovery, pause/resume, END-COMMIT's flush and status, the ACK's
//   deletes, resyncs and revocation. Control messages reach only the machines (and, in the shared
//   layout, the WAL: it takes each ACK first).
// What the loop and the rounds lean on lives beside it, one job a file: the WRITE-STATUS
// (write-status-sender.ts), the group offsets (group-offsets.ts), the WAL gauges (wal-gauges.ts),
// the sweep of unowned partitions (unowned-wal.ts), the dead-letter wiring (bad-records.ts), the
// memory relief (relieve-memory.ts), the idle wait (wake-up.ts) and, in the shared-segment layout
// (`wal.layout: shared`), the topic's one WAL and queue (SharedLayout).
import type { ControlMessage } from '../protocol/index.ts'
import { routeIdentity, type TopicDataset } from '../shared/config/index.ts'
import { FloeError, isFatal, messageOf, RoundFirst } from '../shared/index.ts'
import type { TopicReader } from '../shared/kafka/index.ts'
import { type BadRecords, badRecordsOf } from './bad-records.ts'
import { compileDecoder } from './decode/index.ts'
import { GroupOffsets } from './group-offsets.ts'
import { InferredColumns } from './inferred-columns.ts'
import { participantEventOf } from './machine/index.ts'
import type { DatasetParticipantOptions, ParticipantTable } from './participant-options.ts'
import type { BadRecord } from './partition-ingest.ts'
import { type PartitionQueue, PartitionQueues } from './partition-queue.ts'
import {
  type DecodedFetch,
  type IngestCounts,
  PartitionSlot,
  type SlotEnvironment,
  type WalHolder,
} from './partition-slot.ts'
import { BrokerPositions, gatheredLoad } from './positioning.ts'
import { relieveMemory } from './relieve-memory.ts'
import { RoundReports } from './round-reports.ts'
import { SharedLayout } from './shared-partition-work.ts'
import { bloomFieldIdsOf, TableFollower } from './table-follower.ts'
import { StartSweeps } from './unowned-wal.ts'
import { WakeUp } from './wake-up.ts'
import { WriteStatusSender } from './write-status-sender.ts'

export interface TopicParticipantOptions extends Omit<DatasetParticipantOptions, 'dataset' | 'connection'> {
  dataset: TopicDataset
  /** The topic's side of the member (GroupReader.topicReader): the DatasetParticipant joins and leaves. */
  reader: TopicReader
  /** This topic's WAL changed size: the DatasetParticipant reports every topic's sum. */
  reportWal(): void
}

export class TopicParticipant {
  readonly #o: TopicParticipantOptions
  readonly #reader: TopicReader
  readonly #env: SlotEnvironment
  readonly #slots = new Map<number, PartitionSlot>()
  /** Per partition number, kept across revoke and re-assign: the one order of a partition's work. */
  readonly #queues = new PartitionQueues()
  readonly #table: TableFollower
  readonly #labels: { dataset: string }
  readonly #reports: RoundReports
  readonly #groupOffsets: GroupOffsets
  readonly #badRecords: BadRecords
  /** Files left by partitions moved to other workers, and by the other WAL layout (unowned-wal.ts). */
  readonly #sweeps: StartSweeps
  /** The dataset's shared WAL and its one queue (`wal.layout: shared`). */
  readonly #shared: SharedLayout | undefined
  /** A dataset that infers its columns: its schema changes, made between turns of the loop. */
  readonly #inferred: InferredColumns | undefined
  #running = false
  #ready = false
  #loop: Promise<void> | undefined
  readonly #wakeUp = new WakeUp()
  /** Before each fetch: waits for the round work held since (shared/round-first.ts). */
  readonly #letRoundPass: () => Promise<boolean>
  readonly #onPause = () => this.#broadcast({ type: 'backpressure.pause' })
  readonly #onResume = () => {
    this.#broadcast({ type: 'backpressure.resume' })
    this.#wakeUp.wake()
  }

  constructor(options: TopicParticipantOptions) {
    this.#o = options
    const { dataset } = options
    this.#labels = { dataset: dataset.name }
    this.#reader = options.reader
    // a copy (its schema and spec follow the table's); an assignment's partitions load it together
    const table = { ...options.table, offsets: gatheredLoad(() => options.table.offsets(dataset.topic)) }
    this.#table = new TableFollower(table, options.table.current, options.logger)
    // Data file location -> its bloom-filter sidecar: the partitions write it, the WRITE-STATUS reads it.
    const sidecars = new Map<string, string>()
    const statuses = new WriteStatusSender({
      dataset: dataset.name,
      group: options.group,
      workerId: options.workerId,
      ...(dataset.severalTopics ? { topic: dataset.topic } : {}),
      ...(dataset.route ? { route: routeIdentity(dataset.route).fingerprint } : {}),
      membership: () => this.membership(),
      partitionTypeOf: (specId, filePath) => this.#table.partitionTypeOf(specId, filePath),
      sidecars,
      statusSpill: options.statusSpill,
      send: options.send,
    })
    const groupOffsets = new GroupOffsets({
      commit: (offsets) => this.#reader.commit(offsets),
      holds: (partition) => this.#reader.assigned().includes(partition),
      logger: options.logger,
    })
    this.#groupOffsets = groupOffsets
    const roundFirst = options.roundFirst ?? new RoundFirst()
    this.#letRoundPass = roundFirst.turn()
    const shared = options.wal.layout === 'shared' ? new SharedLayout() : undefined
    this.#shared = shared
    this.#reports = new RoundReports({
      send: (commitId, message) => statuses.send(commitId, message),
      flushing: (commitId) => [...this.#slots.values()].some((slot) => slot.flushing(commitId)),
      windowMs: options.statusWindowMs ?? 5000,
      ...shared?.reports,
    })
    this.#badRecords = badRecordsOf(dataset, {
      producer: options.producer,
      maxMessageBytes: options.dlqMaxMessageBytes,
      partitionCount: (topic) => options.admin.partitionCount(topic),
      running: () => this.#running,
      wait: (ms) => this.#wakeUp.idle(ms),
      labels: this.#labels,
      logger: options.logger,
      metrics: options.metrics,
      phases: options.phases,
    })
    this.#env = {
      dataset,
      table,
      wal: options.wal,
      bloomFieldIds: bloomFieldIdsOf(dataset, options.table.schema),
      autoOffsetReset: options.autoOffsetReset,
      broker: new BrokerPositions(dataset.topic, options.admin, this.#reader),
      syncRetryMs: options.syncRetryMs ?? 1000,
      reader: this.#reader,
      admin: options.admin,
      uploads: options.uploads,
      reports: this.#reports,
      decoder: compileDecoder(dataset, { maxRecordBytes: options.maxRecordBytes }, options.table.schema),
      logger: options.logger,
      metrics: options.metrics,
      phases: options.phases,
      sidecars,
      commitGroupOffset: (partition, offset) => groupOffsets.commit(partition, offset),
      changed: () => this.#changed(),
      roundFirst,
    }
    const { route } = dataset
    const routedDataLocation = options.table.routedDataLocation
    if (route && routedDataLocation) {
      const earlier = options.table.earlierRoutes
      this.#env.route = {
        fingerprint: routeIdentity(route).fingerprint,
        maxOpenTables: route.maxOpenTables,
        dataLocation: (t) => routedDataLocation(t),
        ...(earlier ? { earlier } : {}),
      }
    }
    shared?.attach(this.#env)
    this.#inferred = dataset.inferColumns ? this.#inferredColumns(options.table) : undefined
    // In the shared layout every partition's folder is what the other layout left: none is owned.
    this.#sweeps = new StartSweeps(
      {
        walDir: options.wal.dir,
        dataset: dataset.name,
        topic: dataset.topic,
        layout: options.wal.layout ?? 'partition',
        severalTopics: dataset.severalTopics,
        owned: (partition) => !shared && this.#slots.has(partition),
        queue: (partition) => this.#queueOf(partition),
      },
      options.logger,
    )
  }

  get topic(): string {
    return this.#o.dataset.topic
  }

  /** Joined the group and running its record loop. */
  get ready(): boolean {
    return this.#ready
  }

  /** The member id and group generation of this moment, as every WRITE-STATUS states them. */
  membership(): { memberId: string; generation: number } {
    return { memberId: this.#reader.memberId, generation: this.#reader.generation }
  }

  /** Partitions this member ingests now. */
  get assigned(): number[] {
    return [...this.#slots.keys()].sort((a, b) => a - b)
  }

  /** Starts the record loop; the DatasetParticipant joined the group first. */
  start(): void {
    this.#o.backpressure.on('pause', this.#onPause)
    this.#o.backpressure.on('resume', this.#onResume)
    this.#running = true
    this.#loop = this.#run()
  }

  /** A control message: START, END and ACK of this dataset and group go to the partitions' machines. */
  receive(message: ControlMessage): Promise<void> {
    if (message.dataset !== this.#o.dataset.name || message.group !== this.#o.group) return Promise.resolve()
    this.#shared?.receive(message, this.#o.logger)
    for (const slot of this.#slots.values()) {
      const event = participantEventOf(message, slot.topic, slot.partition)
      if (event) slot.send(event)
    }
    if (message.body.type === 'StartCommit') {
      this.#sweeps.atStart(message.body)
      const inferred = this.#inferred
      if (inferred) {
        const generation = inferred.generation
        void this.#table.follow((shape) => inferred.changed(shape, generation), { adopt: false })
      } else {
        void this.#table.follow(({ schema, spec }) => {
          for (const slot of this.#slots.values()) slot.useTable(schema, spec)
          this.#shared?.wal.useTable(schema, spec)
        })
      }
    }
    return Promise.resolve()
  }

  /**
   * Stops the record loop and every partition: open segments rotate into ready files that a
   * restart reuses (docs/design.md "Rotate ... shutdown").
   */
  async stop(): Promise<void> {
    this.#running = false
    this.#wakeUp.wake()
    await this.#loop?.catch(() => {})
    this.#o.backpressure.off('pause', this.#onPause)
    this.#o.backpressure.off('resume', this.#onResume)
    this.#reports.close(new FloeError('INVARIANT_BROKEN', 'participant stopped'))
    // The last ACKs' group offsets land before the member leaves the group.
    await this.#groupOffsets.settle()
    for (const slot of this.#slots.values()) await slot.shutdown().catch(() => {})
    this.#slots.clear()
    await this.#shared?.wal.close().catch(() => {})
    this.#reportPressure()
  }

  // ---- the record loop -------------------------------------------------------------------------

  async #run(): Promise<void> {
    const { phases, logger } = this.#o
    while (this.#running) {
      try {
        this.#followAssignment()
        await this.#inferred?.settle()
        this.#ready = true
        const positions = new Map<number, bigint>()
        let paused = false
        for (const slot of this.#slots.values()) {
          const position = slot.position
          if (position !== undefined) positions.set(slot.partition, position)
          else paused ||= slot.paused
        }
        if (positions.size === 0) {
          phases.switchTo(paused ? 'paused' : 'idle')
          await this.#rotateDue()
          await this.#relieveMemory()
          await this.#wakeUp.idle(200)
          continue
        }
        phases.switchTo('report')
        if (await this.#letRoundPass()) continue
        phases.switchTo('poll')
        const fetched = await this.#reader.fetch(positions)
        // Decode every partition of the fetch, dead-letter their refused records in one send (a
        // round trip per partition would cost more than the decoding), then append.
        const decoded: [PartitionSlot, DecodedFetch][] = []
        const bad: BadRecord[] = []
        for (const part of fetched) {
          const slot = this.#slots.get(part.partition)
          if (!slot) continue
          slot.reportLag(part)
          const one = slot.decode(part)
          if (!one) continue
          decoded.push([slot, one])
          for (const record of one.batch.bad) bad.push(record)
          if (one.batch.widening) this.#inferred?.request(one.batch.widening)
        }
        if (bad.length > 0) {
          phases.switchTo('dlq')
          await this.#badRecords.handle(bad)
        }
        // stopped at its first record, for a wider schema: nothing to append
        const appending = decoded.filter(([, one]) => one.batch.next !== one.batch.from)
        await this.#append(appending)
        phases.switchTo('write')
        await this.#rotateDue()
        this.#reportPressure()
        await this.#relieveMemory()
      } catch (error) {
        if (!this.#running) break
        if (isFatal(error)) {
          // Retrying cannot mend it and reading on could commit on a broken premise.
          logger.error({ err: messageOf(error), code: error.code }, 'record loop stopped by a fatal error')
          this.#o.onFatal?.(error)
          break
        }
        logger.warn({ err: messageOf(error), code: (error as FloeError).code }, 'record loop error; retrying')
        phases.switchTo('idle')
        await this.#wakeUp.idle(1000)
      }
    }
    phases.switchTo('idle')
  }

  /**
   * A fetch's decoded batches into the WAL, each counted once in: in the shared layout all at once
   * (the dataset's log takes every batch asked for in one turn in one step), else each partition's
   * log in turn.
   */
  async #append(decoded: readonly [PartitionSlot, DecodedFetch][]): Promise<void> {
    if (!this.#shared) {
      for (const [slot, one] of decoded) this.#count(await slot.append(one))
      return
    }
    const settled = await Promise.allSettled(decoded.map(([slot, one]) => slot.append(one)))
    for (const result of settled) if (result.status === 'fulfilled') this.#count(result.value)
    for (const result of settled) if (result.status === 'rejected') throw result.reason
  }

  #count(counts: IngestCounts | undefined): void {
    if (!counts) return
    const { phases, metrics } = this.#o
    phases.counts.in += counts.records
    phases.counts.written += counts.rows
    phases.counts.dlq += counts.bad
    metrics.recordsReceived.inc(this.#labels, counts.records)
    metrics.recordsWritten.inc(this.#labels, counts.rows)
  }

  #inferredColumns(table: ParticipantTable): InferredColumns {
    const { widen } = table
    if (!widen)
      throw new FloeError(
        'INVARIANT_BROKEN',
        `dataset ${this.#o.dataset.name} infers its columns, but cannot widen its table`,
      )
    return new InferredColumns({
      follower: this.#table,
      decoder: this.#env.decoder,
      widen,
      // every log is asked, even after one failed: a log whose rotation failed takes no appends
      followTable: async ({ schema, spec }) => {
        const logs = [...this.#slots.values(), ...(this.#shared ? [this.#shared.wal] : [])]
        const results = await Promise.allSettled(logs.map((log) => log.followTable(schema, spec)))
        for (const result of results) if (result.status === 'rejected') throw result.reason
      },
      logger: this.#o.logger,
      phases: this.#o.phases,
    })
  }

  async #rotateDue(): Promise<void> {
    for (const slot of this.#slots.values()) await slot.rotateIfDue()
    await this.#shared?.wal.rotateIfDue()
  }

  async #relieveMemory(): Promise<void> {
    const { backpressure, metrics } = this.#o
    if (await relieveMemory(this.walHolders(), backpressure, metrics, this.#labels)) this.#reportPressure()
  }

  /** What holds the topic's WAL memory and files: the shared WAL, or each partition's log. */
  walHolders(): Iterable<WalHolder> {
    return this.#shared ? [this.#shared.wal] : this.#slots.values()
  }

  #queueOf(partition: number): PartitionQueue {
    return this.#shared?.queue ?? this.#queues.of(partition)
  }

  /** Creates a machine for each newly assigned partition and revokes the ones the group took away. */
  #followAssignment(): void {
    const now = new Set(this.#reader.assigned())
    for (const [partition, slot] of this.#slots) {
      if (!now.has(partition)) {
        // Revoked: the machine rotates and lets go; the new owner reads from the table's offset.
        slot.send({ type: 'partition.revoked' })
        this.#slots.delete(partition)
        this.#changed()
      }
    }
    for (const partition of now) {
      if (this.#slots.has(partition)) continue
      const slot = new PartitionSlot(this.#env, partition, this.#queueOf(partition), this.#o.backpressure.paused)
      this.#slots.set(partition, slot)
      // The member and generation tie the line to what the broker says of the group (describe it).
      this.#o.logger.info({ partition, ...this.membership() }, 'partition assigned')
    }
  }

  /** Tells the backpressure monitor the dataset's share, and the gauges (every topic's sum). */
  #reportPressure(): void {
    this.#o.reportWal()
  }

  // ---- plumbing --------------------------------------------------------------------------------

  #broadcast(event: { type: 'backpressure.pause' } | { type: 'backpressure.resume' }): void {
    for (const slot of this.#slots.values()) slot.send(event)
  }

  #changed(): void {
    this.#reports.poke()
    this.#wakeUp.wake()
    if (this.#running) this.#reportPressure()
  }
}
