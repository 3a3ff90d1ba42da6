// The composition root of one `floe run` worker: opens the catalog, storage and Kafka, makes sure
// each dataset's table exists, then runs a participant per dataset and, while this worker owns
// partition 0 of a dataset's topic, that dataset's coordinator. A drain asks for a last round and
// waits for its ACK before leaving the groups (DESIGN.md "The protocol").
import { hostname } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { DatasetCoordinator } from '../coordinator/index.ts'
import {
  Backpressure,
  DatasetParticipant,
  systemClock,
  systemTimers,
  Uploader,
  UploadQueue,
  walDiskUsage,
} from '../participant/index.ts'
import { ControlChannel, type ControlMessage } from '../protocol/index.ts'
import type { Catalog } from '../shared/catalog/index.ts'
import { openCatalog } from '../shared/catalog/index.ts'
import type { FloeConfig } from '../shared/config/index.ts'
import { currentSchema, defaultSpec } from '../shared/iceberg/metadata/index.ts'
import { FloeError, messageOf } from '../shared/index.ts'
import { KafkaAdmin, type KafkaConnection, KafkaProducer } from '../shared/kafka/index.ts'
import { readProgress } from '../shared/progress/index.ts'
import {
  createMetrics,
  type Endpoints,
  type FloeMetrics,
  type Logger,
  PhaseClock,
  phases,
  serveEndpoints,
} from '../shared/telemetry/index.ts'
import { catalogConfigOf, datasetGroup, kafkaConnectionOf, reach, storageOf } from './servers.ts'
import { ensureDatasetTable, tableIdentifier } from './tables.ts'

interface DatasetRuntime {
  name: string
  topic: string
  group: string
  participant: DatasetParticipant
  coordinator: DatasetCoordinator
  coordinating: boolean
}

export function workerIdOf(env: NodeJS.ProcessEnv = process.env): string {
  return env.FLOE_WORKER_ID ?? `${hostname()}-${process.pid}`
}

export class Worker {
  readonly config: FloeConfig
  readonly workerId: string
  readonly logger: Logger
  readonly metrics: FloeMetrics
  readonly #phases = new PhaseClock()
  readonly #datasets: DatasetRuntime[] = []
  readonly #abort = new AbortController()
  #catalog: Catalog | undefined
  #admin: KafkaAdmin | undefined
  #producer: KafkaProducer | undefined
  #channel: ControlChannel | undefined
  #backpressure: Backpressure | undefined
  #endpoints: Endpoints | undefined
  #timers: NodeJS.Timeout[] = []
  #acks: ((message: ControlMessage) => void)[] = []
  #following = false

  constructor(config: FloeConfig, options: { logger: Logger; workerId?: string; metrics?: FloeMetrics }) {
    this.config = config
    this.workerId = options.workerId ?? workerIdOf()
    this.logger = options.logger
    this.metrics = options.metrics ?? createMetrics()
  }

  get connection(): KafkaConnection {
    return kafkaConnectionOf(this.config, this.workerId)
  }

  /** Reaches every server first; a missing one stops the start with its name and the reason. */
  async start(): Promise<void> {
    const { config, logger } = this
    const storage = storageOf(config)
    this.#admin = new KafkaAdmin(this.connection)
    const timeoutMs = 30_000
    await reach(`kafka ${config.kafka.brokers.join(',')}`, 'KAFKA_UNAVAILABLE', timeoutMs, () =>
      this.#admin!.partitionCount(config.kafka.controlTopic),
    )
    const catalogName =
      config.catalog.type === 'rest' ? `catalog ${config.catalog.uri}` : `catalog ${config.catalog.path}`
    this.#catalog = await reach(catalogName, 'CATALOG_UNAVAILABLE', timeoutMs, () =>
      openCatalog(catalogConfigOf(config, storage)),
    )
    const catalog = this.#catalog
    const admin = this.#admin
    this.#producer = new KafkaProducer(this.connection)
    const producer = this.#producer

    const walDir = config.ingestion.wal.dir
    const limits = config.ingestion.wal
    this.#backpressure = new Backpressure({
      limits: {
        diskHighWatermarkPct: limits.diskHighWatermarkPct,
        maxPendingUploadBytes: limits.maxPendingUploadBytes,
        maxOpenSegmentMemoryBytes: limits.maxOpenSegmentMemoryBytes,
      },
      measureDisk: walDiskUsage(walDir, limits.volumeSizeBytes ? { volumeSizeBytes: limits.volumeSizeBytes } : {}),
      clock: systemClock,
      timers: systemTimers,
    })
    const backpressure = this.#backpressure
    backpressure.on('change', (reasons) => {
      for (const reason of ['disk', 'upload-backlog', 'memory'] as const) {
        this.metrics.paused.set({ reason }, reasons.includes(reason) ? 1 : 0)
      }
      logger.info({ reasons }, reasons.length ? 'pausing consumers' : 'resuming consumers')
    })
    backpressure.start()

    const uploads = new UploadQueue({
      uploader: new Uploader({
        storage,
        log: (event) => {
          if (event.kind === 'retrying')
            logger.warn(
              { location: event.location, attempt: event.attempt, waitMs: event.waitMs, err: event.error.message },
              'upload failed; retrying',
            )
          else if (event.kind === 'failed')
            logger.error({ location: event.location, err: messageOf(event.error) }, 'upload failed')
        },
      }),
      signal: this.#abort.signal,
    })

    this.#channel = new ControlChannel({
      connection: this.connection,
      topic: config.kafka.controlTopic,
      groupPrefix: config.kafka.groupPrefix,
      workerId: this.workerId,
      logger: logger.child({ component: 'control' }),
    })
    const channel = this.#channel
    const send = (message: ControlMessage) => channel.send(message)

    for (const dataset of config.datasets) {
      const partitions = await admin.partitionCount(dataset.topic)
      if (partitions === undefined) {
        throw new FloeError('CONFIG_INVALID', `datasets.${dataset.name}: topic ${dataset.topic} does not exist`)
      }
      if (dataset.dlqTopic) await admin.ensureTopic(dataset.dlqTopic, partitions)
      const loaded = await ensureDatasetTable(catalog, dataset)
      const group = datasetGroup(config, dataset.name)
      const identifier = tableIdentifier(dataset)
      const participant = new DatasetParticipant({
        dataset,
        group,
        workerId: this.workerId,
        connection: this.connection,
        autoOffsetReset: config.kafka.autoOffsetReset,
        sessionTimeoutMs: config.kafka.sessionTimeoutMs,
        wal: { ...limits, dir: walDir },
        maxRecordBytes: config.ingestion.maxRecordBytes,
        table: {
          schema: currentSchema(loaded.metadata),
          spec: defaultSpec(loaded.metadata),
          dataLocation: loaded.metadata.properties['write.data.path'] ?? `${loaded.metadata.location}/data`,
          offsets: async () => {
            const { metadata } = await catalog.loadTable(identifier)
            return readProgress(metadata, group).get(dataset.topic) ?? new Map()
          },
        },
        admin,
        producer,
        uploads,
        backpressure,
        send,
        logger: logger.child({ dataset: dataset.name, component: 'participant' }),
        metrics: this.metrics,
        phases: this.#phases,
        // A WRITE-STATUS too large for the control topic puts its file list in the table's storage.
        statusSpill: { storage, tableLocation: loaded.metadata.location },
      })
      const coordinator = new DatasetCoordinator({
        dataset: { name: dataset.name, topic: dataset.topic },
        group,
        workerId: this.workerId,
        commitIntervalMs: config.ingestion.commitIntervalSeconds * 1000,
        commitTimeoutMs: config.ingestion.commitTimeoutSeconds * 1000,
        catalog,
        storage,
        table: identifier,
        admin,
        send,
        logger: logger.child({ dataset: dataset.name, component: 'coordinator' }),
        metrics: this.metrics,
        membership: () => ({ memberId: participant.memberId, generation: 0 }),
      })
      this.#datasets.push({
        name: dataset.name,
        topic: dataset.topic,
        group,
        participant,
        coordinator,
        coordinating: false,
      })
    }

    channel.register({
      receive: async (message) => {
        if (message.body.type === 'CommitAcked') for (const waiter of this.#acks) waiter(message)
        for (const runtime of this.#datasets) {
          if (message.dataset !== runtime.name || message.group !== runtime.group) continue
          await runtime.participant.receive(message)
          if (runtime.coordinating) await runtime.coordinator.receive(message)
        }
      },
    })
    await channel.start()
    for (const runtime of this.#datasets) await runtime.participant.start()

    // The coordinator of a dataset follows the ownership of its topic's partition 0.
    this.#timers.push(setInterval(() => void this.#followOwnership(), 1000))
    this.#timers.push(setInterval(() => this.#perfLine(), 10_000))
    this.#endpoints = await serveEndpoints({
      port: config.metrics.port,
      registry: this.metrics.registry,
      ready: () => {
        const waiting = this.#datasets.filter((d) => !d.participant.ready).map((d) => d.name)
        return waiting.length ? { ready: false, reason: `joining: ${waiting.join(', ')}` } : { ready: true }
      },
    })
    logger.info(
      { worker: this.workerId, datasets: this.#datasets.map((d) => d.name), metricsPort: this.#endpoints.port },
      'worker started',
    )
  }

  get metricsPort(): number | undefined {
    return this.#endpoints?.port
  }

  async #followOwnership(): Promise<void> {
    // A coordinator start or stop can outlast the 1 s tick: never run two passes at once.
    if (this.#following) return
    this.#following = true
    try {
      await this.#followOnce()
    } finally {
      this.#following = false
    }
  }

  async #followOnce(): Promise<void> {
    for (const runtime of this.#datasets) {
      const owns = runtime.participant.assigned.includes(0)
      if (owns === runtime.coordinating) continue
      runtime.coordinating = owns
      this.metrics.coordinatorActive.set({ dataset: runtime.name }, owns ? 1 : 0)
      try {
        if (owns) await runtime.coordinator.start()
        else await runtime.coordinator.stop()
        this.logger.info({ dataset: runtime.name }, owns ? 'coordinating' : 'no longer coordinating')
      } catch (error) {
        this.logger.error({ dataset: runtime.name, err: messageOf(error) }, 'coordinator start/stop failed')
      }
    }
  }

  #perfLine(): void {
    const report = this.#phases.report()
    for (const phase of phases) this.metrics.phaseSeconds.inc({ phase }, report.shares[phase] * report.seconds)
    this.logger.info({ perf: report.counts, shares: report.shares }, report.line)
  }

  /**
   * Asks for a last round of every dataset and waits for its ACK, within `timeoutMs`: a round that
   * started after the request includes everything this worker wrote before it.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    const channel = this.#channel
    if (!channel) return true
    const requestedAt = Date.now()
    // A dataset this worker coordinates: the coordinator says when its requested round ended.
    // Otherwise: ask the coordinator over the control topic and watch for the round's ACK.
    const pending = new Set(this.#datasets.filter((d) => !d.coordinating).map((d) => d.name))
    const started = new Set<string>()
    const done = new Promise<void>((resolve) => {
      const waiter = (message: ControlMessage) => {
        if (message.timeMs >= requestedAt && started.has(message.commitId)) pending.delete(message.dataset)
        if (pending.size === 0) resolve()
      }
      this.#acks.push(waiter)
      channel.register({
        receive: (message) => {
          if (message.body.type === 'StartCommit' && message.timeMs >= requestedAt) started.add(message.commitId)
        },
      })
    })
    const local: Promise<unknown>[] = []
    for (const runtime of this.#datasets) {
      if (runtime.coordinating) {
        local.push(runtime.coordinator.requestRound('shutdown'))
      } else {
        await channel
          .send({
            dataset: runtime.name,
            group: runtime.group,
            commitId: '',
            sender: { workerId: this.workerId, memberId: runtime.participant.memberId, generation: 0 },
            timeMs: Date.now(),
            body: { type: 'CommitRequested', reason: 'shutdown', partitions: [] },
          })
          .catch((error: unknown) => this.logger.warn({ err: messageOf(error) }, 'could not ask for a last round'))
      }
    }
    const all = Promise.all([pending.size ? done : Promise.resolve(), ...local])
    const finished = await Promise.race([all.then(() => true), sleep(timeoutMs).then(() => false)])
    this.logger.info(
      { finished, waitedMs: Date.now() - requestedAt },
      finished ? 'last round acknowledged' : 'drain timed out; leftovers are safe by recovery',
    )
    return finished
  }

  /** Stops everything; with `leave`, the groups are left at once so partitions move now. */
  async stop(options: { leave: boolean } = { leave: true }): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer)
    for (const runtime of this.#datasets) {
      if (runtime.coordinating) await runtime.coordinator.stop().catch(() => {})
      await runtime.participant.stop(options).catch(() => {})
    }
    this.#abort.abort()
    this.#backpressure?.stop()
    await this.#channel?.close().catch(() => {})
    await this.#producer?.close().catch(() => {})
    await this.#admin?.close().catch(() => {})
    await this.#catalog?.close().catch(() => {})
    if (this.#endpoints) {
      await this.#endpoints.close()
      this.#perfLine()
    }
  }
}
