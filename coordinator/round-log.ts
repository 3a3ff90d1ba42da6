// What a dataset's coordinator tells the operator about its rounds: one log line per round (and
// per retry, ignored status, lost records), and the round metrics. It folds the round machine's
// emitted events into the round's report (round-report.ts) and counts a commit once, from the
// commit's own plan. No I/O beyond the logger and the metrics; the coordinator feeds it.
import type { ControlLogger } from '../protocol/index.ts'
import type { FloeMetrics } from '../shared/telemetry/index.ts'
import { acceptedFiles } from './contiguity.ts'
import type { CommitRoundActorOutput, CoordinatorEmitted } from './machine-types.ts'
import {
  completedRoundFields,
  failedRoundFields,
  foldRoundEvent,
  lateRoundFields,
  newRoundReport,
  phaseSeconds,
  type RoundReport,
} from './round-report.ts'
import type { TableGauges } from './table-gauges.ts'
import type { Resolution } from './unresolved-commits.ts'

export interface RoundLogOptions {
  dataset: string
  logger: ControlLogger
  metrics: FloeMetrics
  now: () => number
  /** Set from each committed snapshot's totals. */
  gauges?: TableGauges
}

export class RoundLog {
  readonly #o: RoundLogOptions
  readonly #labels: { dataset: string }
  #report: RoundReport = newRoundReport()
  #countedCommit: CommitRoundActorOutput | undefined

  constructor(options: RoundLogOptions) {
    this.#o = options
    this.#labels = { dataset: options.dataset }
  }

  /** The coordinator stopped: the round in flight is dropped, the next report starts empty. */
  reset(): void {
    this.#report = newRoundReport()
  }

  /** One event the round machine emitted. */
  emitted(event: CoordinatorEmitted): void {
    this.#report = foldRoundEvent(this.#report, event)
    const { logger, metrics, dataset } = this.#o
    switch (event.type) {
      case 'round.completed': {
        const fields = completedRoundFields(dataset, this.#report, event)
        metrics.rounds.inc({ ...this.#labels, outcome: event.outcome.kind })
        if (this.#report.partial) metrics.roundsTimedOut.inc(this.#labels)
        for (const { phase, seconds } of phaseSeconds(event.phases)) {
          metrics.roundPhaseSeconds.observe({ ...this.#labels, phase }, seconds)
        }
        logger.info(fields, `round ${event.outcome.kind}`)
        break
      }
      case 'round.failed':
        if (event.phase === 'committing' && event.error.code === 'COMMIT_STATE_UNKNOWN') {
          // Not a failure yet: the commit may still land, and later rounds look for it.
          metrics.rounds.inc({ ...this.#labels, outcome: 'unknown' })
          logger.warn(
            { ...failedRoundFields(dataset, this.#report, event), outcome: 'unknown' },
            'round outcome unknown; later rounds look for its commit',
          )
        } else {
          metrics.rounds.inc({ ...this.#labels, outcome: 'failed' })
          logger.error(failedRoundFields(dataset, this.#report, event), 'round failed')
        }
        break
      case 'round.committed':
        if (event.lost.length > 0) {
          logger.warn(
            {
              dataset,
              commitId: event.commitId,
              lost: event.lost.map(({ partition, from, to, count }) => ({
                partition,
                from: from.toString(),
                to: to.toString(),
                count: count.toString(),
              })),
            },
            'records deleted by retention before they were committed',
          )
        }
        break
      case 'round.status-ignored':
        logger.info(
          { dataset, commitId: event.commitId, sender: event.sender.workerId, ignored: event.ignored },
          'write status not counted',
        )
        break
      case 'commit.retrying':
        logger.warn(
          {
            dataset,
            commitId: event.commitId,
            attempt: event.attempt,
            reason: event.reason,
            waitMs: event.waitMs,
          },
          'commit attempt lost, retrying',
        )
        break
      case 'coordinator.stopped':
        logger.info({ dataset, reason: event.reason, commitId: event.commitId }, 'coordinator stopped')
        break
      default:
        break
    }
  }

  /**
   * The commit actor's output, as the machine's context holds it (the committed and lost records
   * come from the commit's own plan, which only the context has); counted once per output.
   */
  commitOutput(commit: CommitRoundActorOutput | undefined): void {
    if (commit === undefined || commit === this.#countedCommit) return
    this.#countedCommit = commit
    if (commit.kind !== 'committed') return
    if (commit.summary) this.#o.gauges?.set({ summary: commit.summary })
    const { accepted, lost } = commit.plan.check
    const { metrics } = this.#o
    let records = 0n
    let files = 0
    let bytes = 0n
    const now = this.#o.now()
    for (const file of acceptedFiles(commit.plan.check)) {
      records += file.recordCount
      files += 1
      bytes += file.fileSizeInBytes
    }
    for (const partition of accepted) {
      // From the oldest record's Kafka timestamp to the commit that made it visible.
      if (partition.oldestTimestampMs !== undefined) {
        metrics.commitVisibilitySeconds.observe(this.#labels, Math.max(0, now - partition.oldestTimestampMs) / 1000)
      }
    }
    this.#report = { ...this.#report, recordsCommitted: records }
    metrics.recordsCommitted.inc(this.#labels, Number(records))
    metrics.dataFilesCommitted.inc(this.#labels, files)
    metrics.dataBytesCommitted.inc(this.#labels, Number(bytes))
    const lostCount = lost.reduce((sum, l) => sum + l.count, 0n)
    if (lostCount > 0n) metrics.lostRecords.inc(this.#labels, Number(lostCount))
  }

  /** A round that gave up with its outcome unknown was found committed, and acknowledged now. */
  committedLate(landed: Extract<Resolution, { kind: 'landed' }>): void {
    const fields = lateRoundFields(this.#o.dataset, landed, this.#o.now())
    this.#o.metrics.rounds.inc({ ...this.#labels, outcome: 'committed-late' })
    this.#o.metrics.recordsCommitted.inc(this.#labels, Number(fields.records))
    this.#o.logger.info(fields, 'round committed late: its commit landed after the round gave up; acknowledged now')
  }

  /** A round whose outcome was unknown can no longer land. */
  neverLanded(commitId: string): void {
    this.#o.logger.info(
      { dataset: this.#o.dataset, commitId, outcome: 'never-landed' },
      'round with an unknown outcome did not land; its files went into later rounds',
    )
  }
}
