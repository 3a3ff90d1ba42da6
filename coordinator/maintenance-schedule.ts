// When the coordinator of a dataset runs table maintenance: a pure decision over what it knows of
// the runs before. A run is due one interval after the latest run known (the end of this worker's
// own last run, or the start the table's property records, whoever made it), and one interval
// after the coordinator started when none is known. Never at start: a coordinator that restarts
// again and again (ownership moving on every rebalance, a crash loop) must not run maintenance on
// each start. The property is what lets those restarts run it at all: kept in memory only, a run
// would be due one interval after each start, and a coordinator restarted more often than that
// would never run one.

/**
 * The table property that records when the last maintenance run began (epoch milliseconds), written
 * before the run does anything, so a run that brings its worker down still counts.
 */
export const lastRunProperty = 'floe.maintenance.last-run-ms'

export interface MaintenanceClock {
  intervalMs: number
  /** When this coordinator started. */
  startedAt: number
  /** When this worker's last run of the dataset ended (kept across restarts of its coordinator). */
  lastEndedAt: number | undefined
  /** When the last run began as the table's property records it. */
  recordedStartAt: number | undefined
  /** A run of this worker is still going (or still settling after its abort). */
  running: boolean
}

/** When the next run is due: the time after which the first round to complete starts it. */
export function maintenanceDueAt(clock: MaintenanceClock, now: number): number {
  // A time ahead of this worker's clock (another worker's clock, a hand-edited property) would
  // put the next run off by as much; it is taken as unknown instead.
  const recorded =
    clock.recordedStartAt !== undefined && clock.recordedStartAt <= now ? clock.recordedStartAt : undefined
  const known = [clock.lastEndedAt, recorded].filter((t) => t !== undefined)
  const since = known.length > 0 ? Math.max(...known) : clock.startedAt
  return since + clock.intervalMs
}

export function isMaintenanceDue(clock: MaintenanceClock, now: number): boolean {
  return !clock.running && now >= maintenanceDueAt(clock, now)
}

/** The run start a table's properties record, or undefined when they record none (or garbage). */
export function recordedRunStart(properties: Readonly<Record<string, string>>): number | undefined {
  const text = properties[lastRunProperty]
  if (text === undefined || !/^\d{1,16}$/.test(text)) return undefined
  return Number(text)
}
