// The maintenance runs of a dataset's coordinator (maintenance-schedule.ts decides when). At most
// one at a time per dataset on a worker. A run starts between rounds, when a round has been
// acknowledged, never inside a commit, and then runs beside the rounds that follow. That cannot
// hold up ingest or lose a row: each of its commits asserts `main` and plans again when a round
// committed in between. Stopping the coordinator (ownership lost, a drain) aborts the run and
// does not wait for it, so a drain waits for its last round only. A run that fails is logged in
// one line with its error code and counted, and the next one is due an interval later; it never
// stops the coordinator or the worker, because ingest does not need it.
import { rm } from 'node:fs/promises'
import type { ControlLogger } from '../protocol/index.ts'
import { type Catalog, formatTableIdentifier, type TableIdentifier } from '../shared/catalog/index.ts'
import {
  type MaintainRequest,
  type MaintenancePolicy,
  type MaintenanceReport,
  maintainTable,
  maintainTables,
  sumReports,
} from '../shared/iceberg/maintenance/index.ts'
import { FloeError, isFloeError, messageOf } from '../shared/index.ts'
import { markerSnapshots } from '../shared/progress/index.ts'
import type { ObjectStorage } from '../shared/storage/index.ts'
import type { FloeMetrics } from '../shared/telemetry/index.ts'
import { isMaintenanceDue, lastRunProperty, type MaintenanceClock, recordedRunStart } from './maintenance-schedule.ts'
import { mainSnapshot, type TableGauges } from './table-gauges.ts'

export type MaintenanceOutcome = 'ok' | 'failed' | 'aborted'

export interface MaintenanceRunnerOptions {
  dataset: string
  intervalMs: number
  /** One run (maintainTable on the dataset's table), stopping when `signal` aborts. */
  run: (signal: AbortSignal) => Promise<MaintenanceReport>
  /** Records in the table that a run begins at `at`; the run starts only once that is written. */
  record: (at: number) => Promise<void>
  /** After a run that was not aborted: the table read again, for its gauges. */
  afterRun?: () => Promise<void>
  logger: ControlLogger
  metrics: FloeMetrics
  now?: () => number
}

interface Run {
  controller: AbortController
  /** Why it was aborted, for its log line. */
  reason: string
}

export class MaintenanceRunner {
  readonly #o: MaintenanceRunnerOptions
  readonly #now: () => number
  readonly #labels: { dataset: string }
  #active = false
  #startedAt = 0
  #lastEndedAt: number | undefined
  #recordedStartAt: number | undefined
  #run: Run | undefined
  #done: Promise<MaintenanceOutcome> | undefined

  constructor(options: MaintenanceRunnerOptions) {
    this.#o = options
    this.#now = options.now ?? Date.now
    this.#labels = { dataset: options.dataset }
  }

  /** A run is going, or still settling after its abort. */
  get running(): boolean {
    return this.#run !== undefined
  }

  /** The coordinator started: a first run is due an interval from now unless the table says otherwise. */
  started(): void {
    this.#active = true
    this.#startedAt = this.#now()
    this.#recordedStartAt = undefined
  }

  /** The table's properties as a round just read them: the run they record, whoever made it. */
  tableRead(properties: Readonly<Record<string, string>>): void {
    this.#recordedStartAt = recordedRunStart(properties)
  }

  /** A round completed: starts a run when one is due, and resolves with its outcome; else undefined. */
  roundCompleted(): Promise<MaintenanceOutcome> | undefined {
    if (!this.#active || !isMaintenanceDue(this.#clock(), this.#now())) return undefined
    const run: Run = { controller: new AbortController(), reason: '' }
    this.#run = run
    const done = this.#execute(run).finally(() => {
      if (this.#run !== run) return
      this.#run = undefined
      this.#done = undefined
    })
    this.#done = done
    return done
  }

  /** The coordinator stops: the run in flight is aborted, and not waited for. */
  stop(reason: string): void {
    this.#active = false
    const run = this.#run
    if (run && !run.controller.signal.aborted) {
      run.reason = reason
      run.controller.abort()
    }
  }

  /** Resolves once no run is going (tests; nothing in the worker waits for it). */
  async settled(): Promise<void> {
    await this.#done
  }

  #clock(): MaintenanceClock {
    return {
      intervalMs: this.#o.intervalMs,
      startedAt: this.#startedAt,
      lastEndedAt: this.#lastEndedAt,
      recordedStartAt: this.#recordedStartAt,
      running: this.#run !== undefined,
    }
  }

  async #execute(run: Run): Promise<MaintenanceOutcome> {
    const { logger, metrics, dataset } = this.#o
    const { signal } = run.controller
    const started = this.#now()
    let step: 'record' | 'run' = 'record'
    let outcome: MaintenanceOutcome
    try {
      await this.#o.record(started)
      this.#recordedStartAt = started
      signal.throwIfAborted()
      step = 'run'
      const report = await this.#o.run(signal)
      outcome = 'ok'
      metrics.maintenanceSeconds.observe(this.#labels, report.durationMs / 1000)
      logger.info(maintenanceFields(dataset, report), 'maintenance run finished')
    } catch (error) {
      const durationMs = this.#now() - started
      if (signal.aborted) {
        outcome = 'aborted'
        logger.info({ dataset, reason: run.reason, step, durationMs }, 'maintenance run aborted')
      } else {
        outcome = 'failed'
        metrics.maintenanceSeconds.observe(this.#labels, durationMs / 1000)
        logger.error(
          {
            dataset,
            step,
            code: isFloeError(error) ? error.code : 'INTERNAL_ERROR',
            error: messageOf(error),
            durationMs,
            nextInMs: this.#o.intervalMs,
          },
          'maintenance run failed',
        )
      }
    }
    this.#lastEndedAt = this.#now()
    metrics.maintenanceRuns.inc({ ...this.#labels, outcome })
    // A stopped coordinator's gauges are cleared; a run that ended after the stop leaves them so.
    if (outcome !== 'aborted' && this.#active) {
      await this.#o
        .afterRun?.()
        .catch((error: unknown) =>
          logger.warn({ dataset, error: messageOf(error) }, 'could not read the table after maintenance'),
        )
    }
    return outcome
  }
}

/** The facts of a run for its log line: what `floe maintain` prints, as fields. */
export function maintenanceFields(dataset: string, report: MaintenanceReport): Record<string, unknown> {
  const { compaction, expiry, orphans } = report
  const deleted = expiry.files
  return {
    dataset,
    ...(report.tables === undefined ? {} : { tables: report.tables }),
    durationMs: Math.round(report.durationMs),
    compaction: {
      filesBefore: compaction.filesBefore,
      filesAfter: compaction.filesAfter,
      bytesBefore: compaction.bytesBefore.toString(),
      bytesAfter: compaction.bytesAfter.toString(),
      partitionsRewritten: compaction.partitionsRewritten,
      filesRewritten: compaction.filesRewritten,
      filesWritten: compaction.filesWritten,
      // partitions left alone and why (a file unreadable as the schema, a lost race)
      skipped: compaction.skipped,
    },
    expiry: {
      snapshotsBefore: expiry.snapshotsBefore,
      snapshotsAfter: expiry.snapshotsAfter,
      expired: expiry.expired.length,
      deletedManifestLists: deleted.manifestLists.length,
      deletedManifests: deleted.manifests.length,
      deletedDataFiles: deleted.dataFiles.length,
      deletedDataBytes: deleted.dataBytes.toString(),
      failedDeletes: expiry.failedDeletes,
    },
    orphans: {
      listed: orphans.listed,
      referenced: orphans.referenced,
      young: orphans.young,
      found: orphans.orphans.length,
      bytes: orphans.orphanBytes,
      deleted: orphans.deleted,
      failedDeletes: orphans.failedDeletes,
    },
  }
}

/** What a worker asks of a dataset's coordinator for maintenance (DatasetCoordinatorOptions.maintenance). */
export interface CoordinatorMaintenance {
  /** From the end of one run to the next (and from the coordinator's start to the first). */
  intervalMs: number
  policy: MaintenancePolicy
  /** Where compaction writes its files before upload; emptied before each run. */
  workDirectory?: string
  /** Objects orphan cleanup keeps while the data file they sit beside is referenced (the participant's sidecars). */
  companionsOf?: (location: string) => readonly string[]
  /** maintainTable, unless a test gives another. */
  maintain?: (request: MaintainRequest) => Promise<MaintenanceReport>
  /**
   * A routed dataset: the tables its route made, looked up at each run. Each is maintained after
   * the ledger, as the ledger is; one failing fails the run once the others are done.
   */
  routedTables?: () => Promise<TableIdentifier[]>
}

export interface TableMaintenanceOptions extends CoordinatorMaintenance {
  dataset: string
  catalog: Catalog
  storage: ObjectStorage
  table: TableIdentifier
  gauges: TableGauges
  logger: ControlLogger
  metrics: FloeMetrics
  now?: () => number
}

/** The runner on the dataset's real table: maintainTable keeping each group's marker snapshot. */
export function tableMaintenance(options: TableMaintenanceOptions): MaintenanceRunner {
  const { catalog, storage, table, policy, workDirectory, companionsOf, now } = options
  const maintain = options.maintain ?? maintainTable
  return new MaintenanceRunner({
    dataset: options.dataset,
    intervalMs: options.intervalMs,
    logger: options.logger,
    metrics: options.metrics,
    ...(now ? { now } : {}),
    record: (at) => recordRunStart(catalog, table, at),
    run: async (signal) => {
      // What a run left there when its worker died mid-compaction; no other run uses it.
      if (workDirectory) await rm(workDirectory, { recursive: true, force: true })
      const request = {
        catalog,
        storage,
        policy,
        // Progress stays where Floe's own snapshots put it (docs/design.md invariant 8); a routed
        // table's marker is kept the same way.
        keep: markerSnapshots,
        signal,
        ...(workDirectory ? { workDirectory } : {}),
        ...(companionsOf ? { companionsOf } : {}),
        ...(now ? { now } : {}),
      }
      const ledger = await maintain({ ...request, table })
      if (!options.routedTables) return ledger
      const routed = await maintainTables(request, await options.routedTables(), { maintain })
      for (const { table: failed, error } of routed.failed) {
        options.logger.warn(
          {
            dataset: options.dataset,
            table: formatTableIdentifier(failed),
            code: isFloeError(error) ? error.code : 'INTERNAL_ERROR',
            error: messageOf(error),
          },
          'maintenance of a routed table failed',
        )
      }
      const first = routed.failed[0]
      if (first) {
        throw new FloeError(
          isFloeError(first.error) ? first.error.code : 'INTERNAL_ERROR',
          `maintenance failed for ${routed.failed.length} of ${routed.tables} routed tables (the first, ${formatTableIdentifier(first.table)}: ${messageOf(first.error)})`,
        )
      }
      return { ...sumReports([ledger, routed.report]), tables: 1 + routed.tables }
    },
    afterRun: async () => options.gauges.set(mainSnapshot((await catalog.loadTable(table)).metadata)),
  })
}

/**
 * Sets the last-run property: a metadata-only commit that asserts the table's identity, not `main`,
 * so a round committing beside it costs one side a retry of its request and neither a re-plan.
 */
export async function recordRunStart(catalog: Catalog, table: TableIdentifier, at: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const { metadata } = await catalog.loadTable(table)
    try {
      await catalog.commitTable(
        table,
        [{ type: 'assert-table-uuid', uuid: metadata['table-uuid'] }],
        [{ action: 'set-properties', updates: { [lastRunProperty]: String(at) } }],
      )
      return
    } catch (error) {
      if (attempt < 3 && isFloeError(error, 'COMMIT_CONFLICT')) continue
      throw error
    }
  }
}
