// What a worker runs for one dataset, built so that nothing of it is shared with another dataset
// in a way that lets one's retries hold the other (docs/design.md invariant 10): its own storage client
// (the dataset's `storage`, else the top-level one), its own upload queue, its own upload-backlog
// latch on top of the worker's disk and memory backpressure, and its own queue of control messages,
// so a coordinator reading a spilled WRITE-STATUS from a frozen storage holds only its dataset.
import { join } from 'node:path'
import {
  DatasetCoordinator,
  type DatasetCoordinatorOptions,
  readRouteRecord,
  routeGate,
  UnheldPartitionGuards,
} from '../coordinator/index.ts'
import {
  type Backpressure,
  DatasetBackpressure,
  DatasetParticipant,
  EarlierRoutes,
  Uploader,
  UploadQueue,
} from '../participant/index.ts'
import { bloomSidecarLocation } from '../participant/upload/index.ts'
import type { ControlMessage } from '../protocol/index.ts'
import type { Catalog, TableIdentifier } from '../shared/catalog/index.ts'
import {
  catalogLabel,
  type DatasetConfig,
  type FloeConfig,
  routeCanName,
  routeIdentity,
} from '../shared/config/index.ts'
import { maintenancePolicyOf } from '../shared/iceberg/maintenance/index.ts'
import { currentSchema, dataDirectory, defaultSpec, type TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { FloeError, isFloeError, messageOf, type RoundFirst } from '../shared/index.ts'
import type { KafkaAdmin, KafkaConnection, KafkaProducer } from '../shared/kafka/index.ts'
import type { RowGroupEncoders } from '../shared/parquet/index.ts'
import { readProgress } from '../shared/progress/index.ts'
import { type FloeMetrics, type Logger, PhaseClock } from '../shared/telemetry/index.ts'
import { CoordinatorSilence } from './coordinator-silence.ts'
import { RESTART_FIRST_DELAY_MS } from './ownership.ts'
import { answerWithin, datasetGroup, storageOf } from './servers.ts'
import { ensureDatasetTable, RoutedTables, routedTablesOf, tableIdentifier, widenTable } from './tables.ts'
import { withVendedCredentials } from './vended-credentials.ts'

export interface DatasetRuntime {
  name: string
  /** In name order: partition 0 of the first says who coordinates. */
  readonly topics: readonly string[]
  /** With a topicPattern: the topics it matches now (the worker looks every topicRefreshSeconds). */
  followTopics(matched: readonly string[]): void
  group: string
  participant: DatasetParticipant
  coordinator: DatasetCoordinator
  backpressure: DatasetBackpressure
  /** This dataset's record loop's clock: loops of two datasets interleave, one clock would mix them. */
  phases: PhaseClock
  coordinating: boolean
  /** When a crashed coordinator may be started again (backs off while it keeps crashing). */
  restartAt: number
  restartDelayMs: number
  /** This worker's member id and generation in the dataset's group. */
  membership(): { memberId: string; generation: number }
  /** Hands a control message to this dataset's queue; never waits for it. */
  dispatch(message: ControlMessage): void
  /**
   * On the worker's ownership tick: when no round of the dataset was heard for a while and this
   * worker does not coordinate, asks whether partition 0 is held by no one (CoordinatorSilence).
   */
  listenForCoordinator(): void
  /** Resolves when every dispatched message was handled. */
  settled(): Promise<void>
}

export interface DatasetRuntimeDeps {
  config: FloeConfig
  workerId: string
  connection: KafkaConnection
  catalog: Catalog
  admin: KafkaAdmin
  producer: KafkaProducer
  /** The dead-letter topic's max.message.bytes, as the broker says (undefined: unknown). */
  dlqMaxMessageBytes?: number
  worker: Backpressure
  send: (message: ControlMessage) => Promise<void>
  logger: Logger
  metrics: FloeMetrics
  signal: AbortSignal
  /** The worker's encoder threads, shared by its datasets; none: the main thread encodes. */
  encoders?: RowGroupEncoders
  onFatal: (error: FloeError, dataset: string) => void
  /** Backpressure of this dataset changed: the worker's gauges look again. */
  onPressure: () => void
  /** The worker's round work, which every dataset's record loop lets go first. */
  roundFirst: RoundFirst
}

/** How long a start waits for its dataset's table to load (or be created) before it gives up. */
const tableAnswerMs = 60_000

export async function buildDatasetRuntime(dataset: DatasetConfig, deps: DatasetRuntimeDeps): Promise<DatasetRuntime> {
  const { config, logger, metrics } = deps
  const storage = storageOf(config, dataset)
  const routeNames = dataset.route && ((table: string) => routeCanName(dataset.route!, dataset.table, table))
  const catalog = withVendedCredentials(deps.catalog, tableIdentifier(dataset), storage, routeNames)
  // The table's metadata may sit on a storage that hangs (the SQL catalog's warehouse on a frozen
  // S3): a start that cannot load it says so rather than stay silent through the client's retries.
  const loaded = await answerWithin(
    `catalog ${catalogLabel(config.catalog)}, table ${dataset.table}`,
    'CATALOG_UNAVAILABLE',
    tableAnswerMs,
    () =>
      ensureDatasetTable(catalog, dataset, {
        onSchemaChange: (change) =>
          logger.info(
            { dataset: dataset.name, table: dataset.table, added: change.added, promoted: change.promoted },
            'the table evolved to the configured schema (schemaEvolution: addColumns)',
          ),
      }),
  )
  const group = datasetGroup(config, dataset.name)
  const identifier = tableIdentifier(dataset)
  const limits = config.ingestion.wal
  const log = logger.child({ dataset: dataset.name })
  const uploads = new UploadQueue({
    uploader: new Uploader({
      storage,
      log: (event) => {
        if (event.kind === 'retrying')
          log.warn(
            { location: event.location, attempt: event.attempt, waitMs: event.waitMs, err: event.error.message },
            'upload failed; retrying',
          )
        else if (event.kind === 'failed' && isFloeError(event.error, 'STORAGE_NOT_FOUND'))
          // mostly a revoke or resync that dropped the segment while its upload waited; when the
          // segment is still the partition's, the partition warns of it itself
          log.info(
            { location: event.location, err: messageOf(event.error) },
            'upload skipped: the local segment is gone',
          )
        else if (event.kind === 'failed')
          log.error({ location: event.location, err: messageOf(event.error) }, 'upload failed')
      },
    }),
    signal: deps.signal,
  })
  const backpressure = new DatasetBackpressure(deps.worker, {
    reporter: `${dataset.name}/${group}`,
    maxPendingUploadBytes: limits.maxPendingUploadBytes,
  })
  backpressure.on('change', (reasons) => {
    deps.onPressure()
    log.info({ reasons }, reasons.length ? 'pausing consumers' : 'resuming consumers')
  })
  const fatal = (error: FloeError) => deps.onFatal(error, dataset.name)
  const phases = new PhaseClock()
  // vended credentials last an hour or more (a catalog's SAS or session): a reload every ten
  // minutes renews them well before, one catalog read per table in use
  const vended = config.catalog.type === 'rest' && config.catalog.accessDelegation === 'vended-credentials'
  const routed = dataset.route
    ? new RoutedTables(catalog, dataset, vended ? { reloadAfterMs: 10 * 60_000 } : {})
    : undefined
  const route = dataset.route ? { ...routeIdentity(dataset.route), earlier: new EarlierRoutes() } : undefined
  const participant = new DatasetParticipant({
    dataset,
    group,
    workerId: deps.workerId,
    connection: deps.connection,
    autoOffsetReset: config.kafka.autoOffsetReset,
    sessionTimeoutMs: config.kafka.sessionTimeoutMs,
    wal: { ...limits, dir: limits.dir, encoders: deps.encoders },
    maxRecordBytes: config.ingestion.maxRecordBytes,
    table: {
      schema: currentSchema(loaded.metadata),
      spec: defaultSpec(loaded.metadata),
      dataLocation: dataDirectory(loaded.metadata),
      offsets: async (topic) => {
        const { metadata } = await catalog.loadTable(identifier)
        if (route) positionUnderRoute(metadata, group, route)
        return readProgress(metadata, group).get(topic) ?? new Map()
      },
      current: async () => {
        const { metadata } = await catalog.loadTable(identifier)
        return { schema: currentSchema(metadata), spec: defaultSpec(metadata) }
      },
      widen: async (requests) => {
        const { metadata } = await widenTable(catalog, dataset, requests, (change) => {
          metrics.schemaChanges.inc({ dataset: dataset.name })
          log.info(
            { added: change.added, promoted: change.promoted },
            'the table widened for the fields records brought',
          )
        })
        return { schema: currentSchema(metadata), spec: defaultSpec(metadata) }
      },
      ...(routed ? { routedDataLocation: (table: string) => routed.ensure(table) } : {}),
      ...(route ? { earlierRoutes: route.earlier } : {}),
    },
    admin: deps.admin,
    producer: deps.producer,
    ...(deps.dlqMaxMessageBytes === undefined ? {} : { dlqMaxMessageBytes: deps.dlqMaxMessageBytes }),
    uploads,
    backpressure,
    send: deps.send,
    logger: log.child({ component: 'participant' }),
    metrics,
    phases,
    roundFirst: deps.roundFirst,
    // A WRITE-STATUS too large for the control topic puts its file list in the table's storage.
    statusSpill: { storage, tableLocation: loaded.metadata.location },
    onFatal: fatal,
  })
  const coordinator = new DatasetCoordinator({
    dataset: {
      name: dataset.name,
      topics: () => participant.topics,
      ...(dataset.route ? { route: routeIdentity(dataset.route) } : {}),
    },
    group,
    workerId: deps.workerId,
    commitIntervalMs: config.ingestion.commitIntervalSeconds * 1000,
    commitTimeoutMs: config.ingestion.commitTimeoutSeconds * 1000,
    catalog,
    storage,
    table: identifier,
    admin: deps.admin,
    send: deps.send,
    logger: log.child({ component: 'coordinator' }),
    metrics,
    membership: () => participant.membership(),
    rebalance: (reason) => participant.rebalance(reason),
    sessionTimeoutMs: config.kafka.sessionTimeoutMs,
    onFatal: fatal,
    roundFirst: deps.roundFirst,
    ...maintenanceOf(config, dataset, () => routedTablesOf(catalog, dataset, group)),
  })
  // Two commit intervals without a control message of the dataset: no round started, so maybe no
  // coordinator (its partition 0 held by no member); the guard then waits two session timeouts.
  const guards = new UnheldPartitionGuards({
    dataset: dataset.name,
    group,
    admin: deps.admin,
    logger: log.child({ component: 'participant' }),
    metrics,
    rebalance: (reason) => participant.rebalance(reason),
    sessionTimeoutMs: config.kafka.sessionTimeoutMs,
    now: Date.now,
  })
  const silence = new CoordinatorSilence((topic) => guards.of(topic), 2 * config.ingestion.commitIntervalSeconds * 1000)
  // In topic order within the dataset; another dataset's queue runs beside it.
  let tail: Promise<void> = Promise.resolve()
  const runtime: DatasetRuntime = {
    name: dataset.name,
    get topics() {
      return participant.topics
    },
    followTopics(matched) {
      const topics = participant.topics
      const added = matched.filter((topic) => !topics.includes(topic))
      const removed = topics.filter((topic) => !matched.includes(topic))
      if (added.length > 0 || removed.length > 0) {
        log.info({ added, removed, topics: matched }, 'the topics the dataset reads changed (topicPattern)')
      }
      // every time: a topic the group has not assigned yet (just made) is asked for again
      participant.follow(matched)
    },
    group,
    participant,
    coordinator,
    backpressure,
    phases,
    coordinating: false,
    restartAt: 0,
    restartDelayMs: RESTART_FIRST_DELAY_MS,
    membership: () => participant.membership(),
    dispatch(message) {
      if (message.dataset !== dataset.name || message.group !== group) return
      silence.heard()
      tail = tail.then(async () => {
        try {
          await participant.receive(message)
          if (runtime.coordinating) await runtime.coordinator.receive(message)
        } catch (error) {
          log.error(
            { body: message.body.type, commitId: message.commitId, err: messageOf(error) },
            'a control message failed',
          )
        }
      })
    },
    settled: () => tail,
    listenForCoordinator() {
      void silence.tick(participant.topics[0], runtime.coordinating)
    },
  }
  return runtime
}

/**
 * Maintenance between rounds, when `maintenance.enabled`. Compaction writes its files on the WAL
 * volume, not in the system's temporary directory: the volume is sized for files of the target size
 * (the manifests give /tmp 256 MiB), and its disk watermark then counts them.
 */
function maintenanceOf(
  config: FloeConfig,
  dataset: DatasetConfig,
  routedTables: () => Promise<TableIdentifier[]>,
): Pick<DatasetCoordinatorOptions, 'maintenance'> {
  const settings = config.maintenance
  if (!settings.enabled) return {}
  return {
    maintenance: {
      // a routed dataset's tables are maintained after its ledger, in the same run
      ...(dataset.route === undefined ? {} : { routedTables }),
      intervalMs: settings.intervalMinutes * 60_000,
      policy: maintenancePolicyOf(settings),
      workDirectory: join(config.ingestion.wal.dir, dataset.name, 'maintenance'),
      // Iceberg's metadata does not name a data file's bloom-filter sidecar: kept while its file is referenced.
      companionsOf: (location) => [bloomSidecarLocation(location)],
    },
  }
}

/**
 * A routed dataset's partitions read only under the ledger's route (docs/architecture.md, "A route
 * changed while the fleet runs"), skipping what its earlier generations' tables hold above the
 * ledger: refreshes those floors, or refuses (the partition asks again) while the ledger is at
 * another route or switching to this one.
 */
function positionUnderRoute(
  ledger: TableMetadata,
  group: string,
  route: { fingerprint: string; earlier: EarlierRoutes },
): void {
  const record = readRouteRecord(ledger, group)
  const gate = routeGate(record, route.fingerprint)
  if (!gate.open || !record) {
    throw new FloeError(
      'ROUTE_SWITCH_PENDING',
      `this worker's route ${route.fingerprint} is not the ledger's yet (${gate.open ? 'no route recorded' : gate.why}): its partitions wait for the switch`,
      { details: { route: route.fingerprint, ledgerRoute: record?.fingerprint } },
    )
  }
  route.earlier.update(record.earlier)
}
