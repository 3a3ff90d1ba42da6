// Who has answered a round: the coordinator's bookkeeping between END-COMMIT and the commit, as
// Iceberg's CommitState keeps it, but as immutable values so the machine's context can hold them
// (every change returns a new tracker; an ignored status returns the same one). Pure.
import { isDeepStrictEqual } from 'node:util'
import type { PartitionWriteStatus, Sender, TopicPartition, WriteStatusReport } from '../protocol/index.ts'
import { advancesTable } from './contiguity.ts'
import { type RotationReport, reportAdvances, topicPartitionKey } from './rotation-check.ts'

export interface RecordedStatus {
  status: PartitionWriteStatus
  sender: Sender
}

/** Topic -> its partition count when the round started: partitions 0 .. count-1 of each must answer. */
export type ExpectedPartitions = ReadonlyMap<string, number>

export interface RoundTracker {
  readonly commitId: string
  readonly expected: ExpectedPartitions
  /** The status that counts, per partition (the per-partition layout), keyed by topicPartitionKey. */
  readonly statuses: ReadonlyMap<string, RecordedStatus>
  /**
   * The shared-segment layout: the newest status of each sender (by member id, and topic when
   * its dataset reads several). A partition may sit in two senders' rotations (a zombie and the
   * new owner), and a rotation cannot be taken apart between them, so the check decides between
   * whole statuses.
   */
  readonly reports: ReadonlyMap<string, RotationReport>
  /**
   * A routed dataset's: the fingerprint of the coordinator's route. A status of another route
   * claims by other tables, so it is ignored (its partitions answer once their worker runs this
   * route).
   */
  readonly route?: string
}

export type IgnoredReason =
  /** A status of another round: a late answer, a zombie coordinator's round, a replay. */
  | 'other-commit'
  | 'other-topic'
  | 'invalid-partition'
  /** The partition already answered from a newer consumer-group generation: this sender is a zombie. */
  | 'older-generation'
  /** A routed status of another route than the coordinator's (or of none: a sender older than routes' fingerprints). */
  | 'other-route'
  /** The very same status from the very same sender again (a redelivered control message). */
  | 'duplicate'
  /** Arrived after the round stopped collecting (the machine decides this, not the tracker). */
  | 'late'

export interface IgnoredStatus {
  topic?: string
  partition: number
  reason: IgnoredReason
}

export interface Recorded {
  tracker: RoundTracker
  /** Partitions whose status this report set or replaced. */
  recorded: TopicPartition[]
  ignored: IgnoredStatus[]
}

export function openRound(commitId: string, expected: ExpectedPartitions, route?: string): RoundTracker {
  return { commitId, expected, statuses: new Map(), reports: new Map(), ...(route === undefined ? {} : { route }) }
}

function sameSender(a: Sender, b: Sender): boolean {
  return a.workerId === b.workerId && a.memberId === b.memberId && a.generation === b.generation
}

/**
 * Records one WRITE-STATUS. The newest status of a partition wins, but only from a sender of the
 * same or a newer consumer-group generation: after a rebalance the old owner of a partition may
 * still answer, and its range is the stale one. (The contiguity check would reject a stale range
 * anyway; keeping the newer owner's answer means its files are the ones checked.) A partition
 * beyond its topic's expected count is kept: partitions added to a topic during the round answer
 * too, they just are not waited for.
 */
export function recordWriteStatus(tracker: RoundTracker, report: WriteStatusReport): Recorded {
  if (report.rotations !== undefined) return recordRotationReport(tracker, report, report.rotations)
  const recorded: TopicPartition[] = []
  const ignored: IgnoredStatus[] = []
  let statuses: Map<string, RecordedStatus> | undefined
  for (const status of report.statuses) {
    const { topic, partition } = status
    if (report.commitId !== tracker.commitId) ignored.push({ topic, partition, reason: 'other-commit' })
    else if (!tracker.expected.has(topic)) ignored.push({ topic, partition, reason: 'other-topic' })
    else if (!Number.isInteger(partition) || partition < 0) {
      ignored.push({ topic, partition, reason: 'invalid-partition' })
    } else {
      const key = topicPartitionKey(topic, partition)
      const current = (statuses ?? tracker.statuses).get(key)
      if (current && report.sender.generation < current.sender.generation) {
        ignored.push({ topic, partition, reason: 'older-generation' })
      } else if (current && sameSender(current.sender, report.sender) && isDeepStrictEqual(current.status, status)) {
        ignored.push({ topic, partition, reason: 'duplicate' })
      } else {
        statuses ??= new Map(tracker.statuses)
        statuses.set(key, { status, sender: report.sender })
        recorded.push({ topic, partition })
      }
    }
  }
  return { tracker: statuses ? { ...tracker, statuses } : tracker, recorded, ignored }
}

/**
 * A shared-segment status: kept whole as its sender's newest, replacing the sender's earlier one
 * unless it comes from an older generation of the same member. One partition of another topic or
 * out of range and the whole status is ignored: its rotations cannot be taken apart.
 */
function recordRotationReport(
  tracker: RoundTracker,
  report: WriteStatusReport,
  rotations: NonNullable<WriteStatusReport['rotations']>,
): Recorded {
  const partitions = report.statuses.map(({ topic, partition }) => ({ topic, partition }))
  const ignoreAll = (reason: IgnoredReason): Recorded => ({
    tracker,
    recorded: [],
    ignored: partitions.map((p) => ({ ...p, reason })),
  })
  if (report.commitId !== tracker.commitId) return ignoreAll('other-commit')
  if (tracker.route !== undefined && report.route !== tracker.route) return ignoreAll('other-route')
  const named = [...report.statuses, ...rotations.flatMap((r) => r.ranges)]
  if (named.some((s) => !tracker.expected.has(s.topic) || (report.topic !== undefined && s.topic !== report.topic)))
    return ignoreAll('other-topic')
  if (named.some((s) => !Number.isInteger(s.partition) || s.partition < 0)) return ignoreAll('invalid-partition')
  const member = report.sender.memberId === '' ? `worker:${report.sender.workerId}` : report.sender.memberId
  // A member of a dataset that reads several topics answers once per topic: each is its own report.
  const key = report.topic === undefined ? member : `${member}\u0000${report.topic}`
  const current = tracker.reports.get(key)
  const next: RotationReport = { sender: report.sender, statuses: report.statuses, rotations }
  if (current && report.sender.generation < current.sender.generation) return ignoreAll('older-generation')
  if (current && sameSender(current.sender, report.sender) && isDeepStrictEqual(current, next)) {
    return ignoreAll('duplicate')
  }
  const reports = new Map(tracker.reports)
  reports.set(key, next)
  return { tracker: { ...tracker, reports }, recorded: partitions, ignored: [] }
}

/** Every partition that answered, in either layout (an `error` answer counts), by topicPartitionKey. */
function answered(tracker: RoundTracker): Map<string, TopicPartition> {
  const partitions = new Map<string, TopicPartition>()
  for (const [key, { status }] of tracker.statuses) partitions.set(key, status)
  for (const report of tracker.reports.values()) {
    for (const status of report.statuses) partitions.set(topicPartitionKey(status.topic, status.partition), status)
  }
  return partitions
}

/** The partitions that answered, in either layout (an `error` answer counts as answered). */
export function answeredPartitions(tracker: RoundTracker): TopicPartition[] {
  return [...answered(tracker).values()].map(({ topic, partition }) => ({ topic, partition })).sort(byTopicPartition)
}

function byTopicPartition(a: TopicPartition, b: TopicPartition): number {
  return a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1
}

/** Expected partitions that have not answered (an `error` answer counts as answered), by topic and partition. */
export function missingPartitions(tracker: RoundTracker): TopicPartition[] {
  const keys = answered(tracker)
  const missing: TopicPartition[] = []
  for (const [topic, count] of tracker.expected) {
    for (let partition = 0; partition < count; partition++) {
      if (!keys.has(topicPartitionKey(topic, partition))) missing.push({ topic, partition })
    }
  }
  return missing
}

/**
 * Every expected partition answered. An `error` answer counts: waiting for the timeout would not
 * change it, and its partition goes into the next round anyway.
 */
export function isRoundComplete(tracker: RoundTracker): boolean {
  return missingPartitions(tracker).length === 0
}

/** The statuses that count, by partition (the per-partition layout). */
export function answeredStatuses(tracker: RoundTracker): PartitionWriteStatus[] {
  return [...tracker.statuses.values()].map((recorded) => recorded.status).sort(byTopicPartition)
}

/** The senders' shared-segment statuses that count, in the order they arrived. */
export function answeredReports(tracker: RoundTracker): RotationReport[] {
  return [...tracker.reports.values()]
}

/** Some answer would change the table: files, an advanced range or a log-start jump. */
export function hasDataToCommit(tracker: RoundTracker): boolean {
  for (const { status } of tracker.statuses.values()) if (advancesTable(status)) return true
  for (const report of tracker.reports.values()) if (reportAdvances(report)) return true
  return false
}

export type RoundDecision =
  /** Not everyone answered and there is time left. */
  | { kind: 'wait'; missing: TopicPartition[] }
  /** Commit the answers; `partial` when the timeout cut the round short (`missing` go next round). */
  | { kind: 'commit'; partial: boolean; missing: TopicPartition[] }
  /** Nothing to commit: acknowledge the round without a snapshot (no empty Iceberg commits). */
  | { kind: 'close-empty'; partial: boolean; missing: TopicPartition[] }

/**
 * What to do with a round `elapsedMs` after END-COMMIT went out. The timeout counts from END, not
 * from START: the interval between them is for writing, the timeout for answering.
 */
export function decideRound(tracker: RoundTracker, elapsedMs: number, commitTimeoutMs: number): RoundDecision {
  const missing = missingPartitions(tracker)
  const partial = missing.length > 0
  if (partial && elapsedMs < commitTimeoutMs) return { kind: 'wait', missing }
  return hasDataToCommit(tracker) ? { kind: 'commit', partial, missing } : { kind: 'close-empty', partial, missing }
}
