// The composition root of one `floe run` worker: opens the catalog, storage and Kafka, makes sure
// each dataset's table exists, then runs a participant per dataset and, while this worker owns
// partition 0 of a dataset's topic, that dataset's coordinator (ownership-follower.ts). A drain
// (drain.ts) asks for a last round and waits for its ACK before leaving the groups.
import { hostname } from 'node:os'
import {
  Backpressure,
  lockWalDir,
  systemClock,
  systemTimers,
  type WalLock,
  walDiskUsage,
} from '../participant/index.ts'
import { ControlChannel, type ControlMessage } from '../protocol/index.ts'
import type { Catalog } from '../shared/catalog/index.ts'
import { openCatalog } from '../shared/catalog/index.ts'
import { catalogLabel, type FloeConfig } from '../shared/config/index.ts'
import { FloeError, messageOf, RoundFirst } from '../shared/index.ts'
import { KafkaAdmin, type KafkaConnection, KafkaProducer } from '../shared/kafka/index.ts'
import { EncoderPool } from '../shared/parquet/index.ts'
import {
  createMetrics,
  type Endpoints,
  type FloeMetrics,
  type Logger,
  phases,
  serveEndpoints,
} from '../shared/telemetry/index.ts'
import { buildDatasetRuntime, type DatasetRuntime } from './dataset-runtime.ts'
import { drain } from './drain.ts'
import { OwnershipFollower } from './ownership-follower.ts'
import { catalogConfigOf, kafkaConnectionOf, reach, serverFailure, storageOf } from './servers.ts'
import { followTopicPatterns, withMatchedTopics } from './topic-patterns.ts'

export function workerIdOf(env: NodeJS.ProcessEnv = process.env): string {
  return env.FLOE_WORKER_ID ?? `${hostname()}-${process.pid}`
}

export class Worker {
  readonly config: FloeConfig
  readonly workerId: string
  readonly logger: Logger
  readonly metrics: FloeMetrics
  readonly #datasets: DatasetRuntime[] = []
  readonly #abort = new AbortController()
  #catalog: Catalog | undefined
  #admin: KafkaAdmin | undefined
  #producer: KafkaProducer | undefined
  #channel: ControlChannel | undefined
  #backpressure: Backpressure | undefined
  #endpoints: Endpoints | undefined
  #timers: NodeJS.Timeout[] = []
  #walLock: WalLock | undefined
  #encoders: EncoderPool | undefined
  /** Every dataset's round work, let go first by every dataset's record loop (shared/round-first.ts). */
  readonly #roundFirst = new RoundFirst()
  #gauge: () => void = () => {}
  #fatal: FloeError | undefined
  #onFatal: ((error: FloeError) => void) | undefined
  readonly #failed: Promise<FloeError> = new Promise((resolve) => {
    this.#onFatal = resolve
  })

  /** Whether this worker serves /metrics and /readyz itself: a member on a thread does not (members.ts). */
  readonly #serves: boolean

  constructor(
    config: FloeConfig,
    options: { logger: Logger; workerId?: string; metrics?: FloeMetrics; serveEndpoints?: boolean },
  ) {
    this.config = config
    this.workerId = options.workerId ?? workerIdOf()
    this.logger = options.logger
    this.metrics = options.metrics ?? createMetrics({ commitIntervalSeconds: config.ingestion.commitIntervalSeconds })
    this.#serves = options.serveEndpoints ?? true
  }

  get connection(): KafkaConnection {
    return kafkaConnectionOf(this.config, this.workerId)
  }

  /**
   * Resolves with the first fatal error (shared/errors.ts): the worker cannot go on and must stop
   * with a non-zero exit instead of retrying forever. Never rejects.
   */
  get failed(): Promise<FloeError> {
    return this.#failed
  }

  #fail(error: FloeError, dataset?: string): void {
    if (this.#fatal) return
    this.#fatal = error
    this.logger.fatal(
      { code: error.code, dataset, details: error.details, err: error.message },
      'fatal error: stopping',
    )
    this.#onFatal?.(error)
  }

  /** Reaches every server first; a missing one stops the start with its name and the reason. */
  async start(): Promise<void> {
    const { config, logger } = this
    // Before anything touches the WAL: a second worker on the same directory must not start.
    this.#walLock = await lockWalDir(config.ingestion.wal.dir, { workerId: this.workerId, logger })
    const storage = storageOf(config)
    this.#admin = new KafkaAdmin(this.connection)
    const timeoutMs = 30_000
    await reach(`kafka ${config.kafka.brokers.join(',')}`, 'KAFKA_UNAVAILABLE', timeoutMs, () =>
      this.#admin!.partitionCount(config.kafka.controlTopic),
    )
    const catalogName = `catalog ${catalogLabel(config.catalog)}`
    this.#catalog = await reach(catalogName, 'CATALOG_UNAVAILABLE', timeoutMs, () =>
      openCatalog(catalogConfigOf(config, storage)),
    )
    const catalog = this.#catalog
    const admin = this.#admin
    // The dead-letter producer compresses (a batch of bad records is often repetitive) and retries
    // a little on its own; DeadLetterSender decides what happens after that.
    this.#producer = new KafkaProducer(this.connection, {
      compression: 'zstd',
      retries: 2,
      retryDelayMs: 250,
      timeoutMs: 15_000,
    })
    const producer = this.#producer

    const walDir = config.ingestion.wal.dir
    const limits = config.ingestion.wal
    // the main thread keeps fetch, decode and buffering; the other threads encode row groups
    if (limits.encoderThreads >= 2) {
      this.#encoders = new EncoderPool({
        threads: limits.encoderThreads - 1,
        onThreadExit: ({ threadId, exitCode, error }) =>
          logger.warn(
            { threadId, exitCode, err: error === undefined ? undefined : messageOf(error) },
            'encoder thread died: replaced, its row group encoded on the main thread',
          ),
      })
    }
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
    // The worker's monitor holds what is one per worker (the WAL disk, the heap); each dataset adds
    // its own upload backlog (dataset-runtime.ts), and the gauge says whether any dataset has one.
    const gauge = () => {
      const reasons = new Set([...backpressure.reasons, ...this.#datasets.flatMap((d) => d.backpressure.reasons)])
      for (const reason of ['disk', 'upload-backlog', 'memory'] as const) {
        this.metrics.paused.set({ reason }, reasons.has(reason) ? 1 : 0)
      }
    }
    this.#gauge = gauge
    backpressure.on('change', (reasons) => {
      gauge()
      logger.info({ reasons }, reasons.length ? 'pausing every dataset' : 'resuming every dataset')
    })
    backpressure.on('disk-check-failed', (error) => {
      logger.error(
        { dir: walDir, err: messageOf(error), lastUsedPct: backpressure.diskUsedPct },
        'WAL disk check failed; the last measurement stays in force',
      )
    })
    backpressure.start()

    this.#channel = new ControlChannel({
      connection: this.connection,
      topic: config.kafka.controlTopic,
      groupPrefix: config.kafka.groupPrefix,
      workerId: this.workerId,
      logger: logger.child({ component: 'control' }),
      liveness: {},
    })
    const channel = this.#channel
    const send = (message: ControlMessage) => channel.send(message)

    for (const configured of config.datasets) {
      const dataset = await withMatchedTopics(config, configured, admin)
      // a dead-letter topic Floe creates gets as many partitions as the dataset's widest topic
      let partitions = 0
      for (const topic of dataset.topics) {
        const count = await admin.partitionCount(topic)
        if (count === undefined) {
          throw new FloeError('CONFIG_INVALID', `datasets.${dataset.name}: topic ${topic} does not exist`)
        }
        partitions = Math.max(partitions, count)
      }
      let dlqMaxMessageBytes: number | undefined
      if (dataset.dlqTopic) {
        await admin.ensureTopic(dataset.dlqTopic, partitions)
        dlqMaxMessageBytes = await admin.maxMessageBytes(dataset.dlqTopic)
        logger.info(
          { dataset: dataset.name, dlqTopic: dataset.dlqTopic, maxMessageBytes: dlqMaxMessageBytes ?? 'unknown' },
          'dead-letter topic ready',
        )
      }
      this.#datasets.push(
        await buildDatasetRuntime(dataset, {
          config,
          workerId: this.workerId,
          connection: this.connection,
          catalog,
          admin,
          producer,
          ...(dlqMaxMessageBytes === undefined ? {} : { dlqMaxMessageBytes }),
          worker: backpressure,
          send,
          logger,
          metrics: this.metrics,
          signal: this.#abort.signal,
          ...(this.#encoders ? { encoders: this.#encoders } : {}),
          onFatal: (error, name) => this.#fail(error, name),
          onPressure: () => this.#gauge(),
          roundFirst: this.#roundFirst,
        }),
      )
    }

    // The channel's loop only hands messages out: each dataset handles its own in order, so one
    // dataset's slow handling (a spilled status on a frozen storage) never holds another's.
    channel.register({
      receive: (message) => {
        for (const runtime of this.#datasets) runtime.dispatch(message)
      },
    })
    await channel.start()
    for (const runtime of this.#datasets) {
      // A broker that goes away while the group is joined is named as at the reach above; no
      // timeout here, since a join rightly waits for the group's rebalance.
      await runtime.participant.start().catch((error: unknown) => {
        throw serverFailure(
          `kafka ${config.kafka.brokers.join(',')}, joining the group of dataset ${runtime.name}`,
          'KAFKA_UNAVAILABLE',
          error,
        )
      })
    }

    // The coordinator of a dataset follows the ownership of partition 0 of its first topic.
    const follower = new OwnershipFollower(this.#datasets, {
      logger,
      coordinating: (dataset, active) => this.metrics.coordinatorActive.set({ dataset }, active ? 1 : 0),
      halted: () => this.#fatal !== undefined,
    })
    this.#timers.push(
      setInterval(() => {
        void follower.tick()
        for (const runtime of this.#datasets) runtime.listenForCoordinator()
      }, 1000),
    )
    this.#timers.push(setInterval(() => this.#perfLine(), 10_000))
    this.#timers.push(...followTopicPatterns(config, this.#datasets, admin, logger))
    // The same answer as /readyz gives, as a gauge, for an alert on a worker that stays unready.
    this.#timers.push(setInterval(() => this.metrics.workerReady.set(this.readiness().ready ? 1 : 0), 1000))
    if (this.#serves) {
      this.#endpoints = await serveEndpoints({
        port: config.metrics.port,
        registry: this.metrics.registry,
        ready: () => this.readiness(),
      })
    }
    logger.info(
      { worker: this.workerId, datasets: this.#datasets.map((d) => d.name), metricsPort: this.#endpoints?.port },
      // a member's main thread says 'worker started' once every member has
      this.#serves ? 'worker started' : 'member started',
    )
  }

  /** Ready: consuming every dataset's topics and hearing the control topic, and not stopping. */
  readiness(): { ready: boolean; reason?: string } {
    if (this.#fatal) return { ready: false, reason: `stopping: ${this.#fatal.message}` }
    const channel = this.#channel
    if (!channel) return { ready: false, reason: 'starting' }
    if (!channel.hearing) return { ready: false, reason: `cannot hear the control topic ${channel.topic}` }
    const waiting = this.#datasets.filter((d) => !d.participant.ready).map((d) => d.name)
    return waiting.length ? { ready: false, reason: `joining: ${waiting.join(', ')}` } : { ready: true }
  }

  get metricsPort(): number | undefined {
    return this.#endpoints?.port
  }

  /** One perf line per dataset: each record loop has its own clock. */
  #perfLine(): void {
    for (const runtime of this.#datasets) {
      const report = runtime.phases.report()
      for (const phase of phases) this.metrics.phaseSeconds.inc({ phase }, report.shares[phase] * report.seconds)
      this.logger.info({ dataset: runtime.name, perf: report.counts, shares: report.shares }, report.line)
    }
  }

  /**
   * Asks for a last round of every dataset and waits for its ACK, within `timeoutMs` (drain.ts).
   */
  drain(timeoutMs: number): Promise<boolean> {
    const channel = this.#channel
    if (!channel) return Promise.resolve(true)
    return drain(this.#datasets, timeoutMs, { channel, workerId: this.workerId, logger: this.logger })
  }

  /** Stops everything; with `leave`, the groups are left at once so partitions move now. */
  async stop(options: { leave: boolean } = { leave: true }): Promise<void> {
    // the timers start once the worker runs: only then is there a last perf line to write
    const running = this.#timers.length > 0
    for (const timer of this.#timers) clearInterval(timer)
    this.#timers = []
    for (const runtime of this.#datasets) {
      if (runtime.coordinating) await runtime.coordinator.stop().catch(() => {})
      await runtime.participant.stop(options).catch(() => {})
      runtime.backpressure.close()
    }
    this.#abort.abort()
    this.#backpressure?.stop()
    // after the participants: their last segments were encoded by these threads
    await this.#encoders?.close()
    this.#encoders = undefined
    await this.#channel?.close().catch(() => {})
    await this.#producer?.close().catch(() => {})
    await this.#admin?.close().catch(() => {})
    await this.#catalog?.close().catch(() => {})
    if (this.#endpoints) await this.#endpoints.close()
    if (running) this.#perfLine()
    await this.#walLock?.release()
    this.#walLock = undefined
  }
}
