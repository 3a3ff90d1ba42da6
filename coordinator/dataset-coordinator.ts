// The coordinator of one dataset on the worker that owns partition 0 of its topic: the round
// machine (coordinator.machine.ts) with its effects on the real table, topic and control channel,
// the control messages turned into machine events, and every round turned into one log line and
// its metrics. The worker registers it on its ControlChannel and stops it when partition 0 goes.
import { randomUUID } from 'node:crypto'
import { type Actor, createActor, fromPromise } from 'xstate'
import type { ControlBody, ControlLogger, ControlMessage, WriteStatus, WriteStatusReport } from '../protocol/index.ts'
import { commitAckedBody, endCommitBody, startCommitBody } from '../protocol/index.ts'
import type { Catalog, TableIdentifier } from '../shared/catalog/index.ts'
import type { RetryPolicy } from '../shared/iceberg/commit/index.ts'
import { refSnapshotId } from '../shared/iceberg/metadata/index.ts'
import { type ErrorCode, FloeError, isFatal, isFatalCode, isFloeError, messageOf } from '../shared/index.ts'
import type { KafkaAdmin } from '../shared/kafka/index.ts'
import type { Progress } from '../shared/progress/index.ts'
import { findProgress } from '../shared/progress/index.ts'
import type { ObjectStorage } from '../shared/storage/index.ts'
import type { FloeMetrics } from '../shared/telemetry/index.ts'
import { commitRoundLogic } from './commit-round.ts'
import { coordinatorMachine } from './coordinator.machine.ts'
import type {
  AckRoundInput,
  AckRoundOutput,
  CommitRoundActorOutput,
  CoordinatorEmitted,
  EndRoundInput,
  EndRoundOutput,
  StartRoundInput,
  StartRoundOutput,
} from './machine-types.ts'
import {
  completedRoundFields,
  failedRoundFields,
  foldRoundEvent,
  lateRoundFields,
  newRoundReport,
  phaseSeconds,
  type RoundReport,
} from './round-report.ts'
import { type RoundResult, RoundWaiters } from './round-waiters.ts'
import { type Resolution, rememberCommit, resolveCommits, type UnresolvedCommit } from './unresolved-commits.ts'
import { type RoundTable, readWriteStatus, unreadableWriteStatus, unreadWriteStatus } from './write-status-reader.ts'

export interface DatasetCoordinatorOptions {
  dataset: { name: string; topic: string }
  /** The dataset's consumer group: names the progress marker. */
  group: string
  /** This worker: the sender of the coordinator's messages. */
  workerId: string
  commitIntervalMs: number
  commitTimeoutMs: number
  /** Wait after a failed round, doubled per consecutive failure (default 1 s, capped at the interval). */
  failureBackoffMs?: number
  catalog: Catalog
  /** Manifests and manifest lists are written here, and spilled file lists read from here. */
  storage: ObjectStorage
  table: TableIdentifier
  /** The topic's partition count and end offsets (for the lag gauge). */
  admin: KafkaAdmin
  /** The worker's ControlChannel.send. */
  send: (message: ControlMessage) => Promise<void>
  logger: ControlLogger
  metrics: FloeMetrics
  /** The worker's member id and generation in the dataset's group, for the sender of each message. */
  membership?: () => { memberId: string; generation: number }
  /** Overrides the table's commit.retry.* policy. */
  retry?: Partial<RetryPolicy>
  /**
   * A fatal error (a damaged progress marker, a broken invariant): retrying cannot help and
   * committing on a guess could lose or duplicate data, so the worker stops. Without it, such a
   * round fails and the next one tries again.
   */
  onFatal?: (error: FloeError) => void
  now?: () => number
}

/** The round in flight, as the starting actor left it. */
interface OpenRound extends RoundTable {
  partitionCount: number
}

type CoordinatorActor = Actor<typeof coordinatorMachine>

export class DatasetCoordinator {
  readonly #o: DatasetCoordinatorOptions
  readonly #now: () => number
  readonly #labels: { dataset: string }
  #actor: CoordinatorActor | undefined
  #round: OpenRound | undefined
  #report: RoundReport = newRoundReport()
  #countedCommit: CommitRoundActorOutput | undefined
  readonly #waiters = new RoundWaiters()
  readonly #inflight = new Set<Promise<unknown>>()
  #stopping: Promise<void> | undefined
  #stopReason = ''
  /** Rounds that gave up with their outcome unknown, looked for in every later round's table. */
  #unresolved: UnresolvedCommit[] = []

  constructor(options: DatasetCoordinatorOptions) {
    this.#o = options
    this.#now = options.now ?? Date.now
    this.#labels = { dataset: options.dataset.name }
  }

  get dataset(): string {
    return this.#o.dataset.name
  }

  /** Started and neither stopping nor stopped (a crash stops it). */
  get running(): boolean {
    return this.#actor !== undefined && this.#stopping === undefined
  }

  /**
   * Starts coordinating (again, after a stop: the worker follows the ownership of partition 0);
   * the first round begins at once. Starting a running coordinator does nothing.
   */
  async start(): Promise<void> {
    if (this.#stopping) await this.#stopping
    if (this.#actor) return
    const { catalog, storage, table, group, retry } = this.#o
    const machine = coordinatorMachine.provide({
      actors: {
        startRound: fromPromise<StartRoundOutput, StartRoundInput>(({ signal }) =>
          this.#track(this.#startRound(signal)),
        ),
        endRound: fromPromise<EndRoundOutput, EndRoundInput>(({ input, signal }) =>
          this.#track(this.#endRound(input, signal)),
        ),
        commitRound: commitRoundLogic(
          {
            catalog,
            storage,
            table,
            group,
            now: this.#now,
            unresolved: () => this.#unresolved,
            ...(retry ? { retry } : {}),
          },
          this.#now,
          (commit) => {
            this.#unresolved = rememberCommit(this.#unresolved, commit)
          },
        ),
        ackRound: fromPromise<AckRoundOutput, AckRoundInput>(({ input }) => this.#track(this.#ackRound(input))),
      },
    })
    const actor = createActor(machine, {
      input: {
        dataset: this.dataset,
        group,
        topic: this.#o.dataset.topic,
        commitIntervalMs: this.#o.commitIntervalMs,
        commitTimeoutMs: this.#o.commitTimeoutMs,
        ...(this.#o.failureBackoffMs === undefined ? {} : { failureBackoffMs: this.#o.failureBackoffMs }),
      },
    })
    actor.on('*', (event) => this.#onEmitted(event))
    actor.subscribe({
      next: (snapshot) => this.#countCommit(snapshot.context.commit),
      error: (error) => this.#onCrash(error),
    })
    this.#actor = actor
    this.#o.metrics.coordinatorActive.set(this.#labels, 1)
    this.#o.logger.info({ dataset: this.dataset, group, topic: this.#o.dataset.topic }, 'coordinator started')
    actor.start()
  }

  /**
   * A control message (every message of the topic comes here; this one takes its dataset's and
   * group's). WRITE-STATUS feeds the round; COMMIT-REQUESTED asks for a round now.
   */
  async receive(message: ControlMessage): Promise<void> {
    if (message.dataset !== this.dataset || message.group !== this.#o.group) return
    const actor = this.#actor
    if (!actor || this.#stopping) return
    const body = message.body
    if (body.type === 'WriteStatus') {
      const report = await this.#statusReport({ ...message, body })
      actor.send({ type: 'control.write-status', report, receivedAt: this.#now() })
    } else if (body.type === 'CommitRequested') {
      actor.send({ type: 'control.commit-requested', requestedBy: message.sender.workerId, receivedAt: this.#now() })
    } else if (body.type === 'StartCommit' && message.sender.workerId !== this.#o.workerId) {
      // Harmless (the catalog's compare-and-set and the contiguity check decide), but an operator
      // should know: a rebalance overlap, or a zombie worker.
      this.#o.logger.warn(
        { dataset: this.dataset, commitId: message.commitId, otherWorker: message.sender.workerId },
        'another coordinator started a round of this dataset',
      )
    }
  }

  /**
   * Asks for a round now (a draining worker): the open round ends at once, or the next one does.
   * Resolves with the outcome of the first round whose END-COMMIT goes out after this call.
   */
  requestRound(reason: string): Promise<RoundResult> {
    const result = this.#wait(true)
    this.#actor?.send({ type: 'control.commit-requested', requestedBy: reason, receivedAt: this.#now() })
    return result
  }

  /** Resolves with the outcome of the next round to complete or fail. */
  nextRound(): Promise<RoundResult> {
    return this.#wait(false)
  }

  /**
   * Stops rounds. A commit in flight runs to its end and is acknowledged first (its participants
   * can then let their files go); a round still collecting is dropped, and its files go into the
   * next coordinator's first round. Resolves once nothing this coordinator started is running.
   */
  stop(reason = 'stopped'): Promise<void> {
    if (!this.#actor) return Promise.resolve()
    this.#stopping ??= this.#stop(reason)
    return this.#stopping
  }

  async #stop(reason: string): Promise<void> {
    this.#stopReason = reason
    const actor = this.#actor
    if (actor && actor.getSnapshot().status === 'active') {
      const state = actor.getSnapshot().value
      if (state === 'committing' || state === 'acking') await this.#waiters.wait(false)
      actor.send({ type: 'coordinator.stop', reason })
    }
    await Promise.allSettled([...this.#inflight])
    this.#o.metrics.coordinatorActive.set(this.#labels, 0)
    this.#waiters.stopped(this.#round?.commitId, reason)
    this.#actor = undefined
    this.#round = undefined
    this.#report = newRoundReport()
    this.#stopping = undefined
  }

  // ---- the machine's actors ------------------------------------------------------------------

  async #startRound(signal: AbortSignal): Promise<StartRoundOutput> {
    const { topic } = this.#o.dataset
    const { metadata } = await this.#o.catalog.loadTable(this.#o.table)
    // Before START-COMMIT: a late round's participants still wait for its ACK, and are in line
    // with the table's offsets once they have it.
    await this.#resolveUnknownOutcomes(metadata)
    const { progress } = findProgress(metadata, this.#o.group)
    const partitionCount = await this.#partitionCount(topic)
    signal.throwIfAborted()
    const commitId = randomUUID()
    this.#round = { commitId, partitionCount, metadata, partitionTypes: new Map() }
    const startedAt = this.#now()
    await this.#send(commitId, startedAt, startCommitBody(progress, refSnapshotId(metadata)))
    this.#track(this.#updateLag(progress, partitionCount))
    return { commitId, partitionCount, tableOffsets: progress, startedAt }
  }

  async #endRound(input: EndRoundInput, signal: AbortSignal): Promise<EndRoundOutput> {
    const round = this.#round
    if (round?.commitId !== input.commitId) {
      throw new FloeError('INVARIANT_BROKEN', `round ${input.commitId} ends, but ${round?.commitId} is open`)
    }
    this.#waiters.ending(round.commitId)
    signal.throwIfAborted()
    const endedAt = this.#now()
    await this.#send(round.commitId, endedAt, endCommitBody(this.#o.dataset.topic, round.partitionCount))
    return { endedAt }
  }

  async #ackRound(input: AckRoundInput): Promise<AckRoundOutput> {
    const ackedAt = this.#now()
    await this.#send(input.ack.commitId, ackedAt, commitAckedBody(input.ack))
    return { ackedAt }
  }

  /**
   * Looks for the rounds that gave up with their outcome unknown in the table just read: one that
   * landed is committed after all, and gets its ACK now; one that can no longer land is forgotten
   * (its files went into later rounds).
   */
  async #resolveUnknownOutcomes(metadata: RoundTable['metadata']): Promise<void> {
    if (this.#unresolved.length === 0) return
    const { resolved } = resolveCommits(metadata, this.#o.group, this.#unresolved)
    for (const resolution of resolved) {
      if (resolution.kind === 'landed') await this.#ackLate(resolution)
      else {
        this.#o.logger.info(
          { dataset: this.dataset, commitId: resolution.commit.commitId, outcome: 'never-landed' },
          'round with an unknown outcome did not land; its files went into later rounds',
        )
      }
      this.#unresolved = this.#unresolved.filter((c) => c.commitId !== resolution.commit.commitId)
    }
  }

  async #ackLate(landed: Extract<Resolution, { kind: 'landed' }>): Promise<void> {
    await this.#send(landed.commit.commitId, this.#now(), commitAckedBody(landed.ack))
    const fields = lateRoundFields(this.dataset, landed, this.#now())
    this.#o.metrics.rounds.inc({ ...this.#labels, outcome: 'committed-late' })
    this.#o.metrics.recordsCommitted.inc(this.#labels, Number(fields.records))
    this.#o.logger.info(fields, 'round committed late: its commit landed after the round gave up; acknowledged now')
  }

  async #partitionCount(topic: string): Promise<number> {
    let count: number | undefined
    try {
      count = await this.#o.admin.partitionCount(topic)
    } catch (error) {
      if (isFloeError(error)) throw error
      throw new FloeError('KAFKA_UNAVAILABLE', `could not read the partitions of topic ${topic}`, { cause: error })
    }
    if (count === undefined) {
      throw new FloeError('CONFIG_INVALID', `topic ${topic} of dataset ${this.dataset} does not exist`, {
        details: { dataset: this.dataset, topic },
      })
    }
    return count
  }

  // The lag gauge is a by-product of the round's table read; it must never hold a round up.
  async #updateLag(progress: Progress, partitionCount: number): Promise<void> {
    const { topic } = this.#o.dataset
    const offsets = progress.get(topic)
    if (!offsets || offsets.size === 0) return
    try {
      const ends = await this.#o.admin.endOffsets(
        topic,
        [...offsets.keys()].filter((p) => p < partitionCount),
      )
      for (const [partition, end] of ends) {
        const table = offsets.get(partition)
        if (table === undefined) continue
        const lag = end > table ? end - table : 0n
        this.#o.metrics.consumerLag.set({ ...this.#labels, partition: String(partition) }, Number(lag))
      }
    } catch (error) {
      this.#o.logger.warn(
        { dataset: this.dataset, topic, error: messageOf(error) },
        'could not read end offsets for lag',
      )
    }
  }

  #send(commitId: string, timeMs: number, body: ControlBody): Promise<void> {
    const membership = this.#o.membership?.()
    return this.#o.send({
      dataset: this.dataset,
      group: this.#o.group,
      commitId,
      sender: {
        workerId: this.#o.workerId,
        memberId: membership?.memberId ?? '',
        generation: membership?.generation ?? -1,
      },
      timeMs,
      body,
    })
  }

  // ---- WRITE-STATUS --------------------------------------------------------------------------

  /**
   * The status as the round tracker takes it. Only the round in flight gets its files read (a
   * status of another round is only reported as ignored); files that cannot be read make the
   * sender's partitions `error` answers, reported again next round.
   */
  async #statusReport(message: ControlMessage<WriteStatus>): Promise<WriteStatusReport> {
    const round = this.#round
    if (round?.commitId !== message.commitId) return unreadWriteStatus(message)
    try {
      return await readWriteStatus(message, round, this.#o)
    } catch (error) {
      this.#o.logger.warn(
        {
          dataset: this.dataset,
          commitId: message.commitId,
          sender: message.sender.workerId,
          code: isFloeError(error) ? error.code : undefined,
          error: messageOf(error),
        },
        'could not read the files of a write status: its partitions go into the next round',
      )
      return unreadableWriteStatus(message, error)
    }
  }

  // ---- what the machine emits -----------------------------------------------------------------

  #onEmitted(event: CoordinatorEmitted): void {
    this.#report = foldRoundEvent(this.#report, event)
    const { logger, metrics } = this.#o
    switch (event.type) {
      case 'round.completed': {
        const fields = completedRoundFields(this.dataset, this.#report, event)
        metrics.rounds.inc({ ...this.#labels, outcome: event.outcome.kind })
        for (const { phase, seconds } of phaseSeconds(event.phases)) {
          metrics.roundPhaseSeconds.observe({ ...this.#labels, phase }, seconds)
        }
        logger.info(fields, `round ${event.outcome.kind}`)
        this.#waiters.completed(event.commitId, event.outcome)
        break
      }
      case 'round.failed': {
        if (event.phase === 'committing' && event.error.code === 'COMMIT_STATE_UNKNOWN') {
          // Not a failure yet: the commit may still land, and later rounds look for it.
          metrics.rounds.inc({ ...this.#labels, outcome: 'unknown' })
          logger.warn(
            { ...failedRoundFields(this.dataset, this.#report, event), outcome: 'unknown' },
            'round outcome unknown; later rounds look for its commit',
          )
        } else {
          metrics.rounds.inc({ ...this.#labels, outcome: 'failed' })
          logger.error(failedRoundFields(this.dataset, this.#report, event), 'round failed')
          if (isFatalCode(event.error.code)) {
            this.#o.onFatal?.(
              new FloeError(event.error.code as ErrorCode, event.error.message, {
                details: { dataset: this.dataset, commitId: event.commitId, phase: event.phase },
              }),
            )
          }
        }
        this.#waiters.failed(event.commitId, event.phase, {
          kind: 'failed',
          commitId: event.commitId,
          phase: event.phase,
          error: event.error,
        })
        break
      }
      case 'round.committed':
        if (event.lost.length > 0) {
          logger.warn(
            {
              dataset: this.dataset,
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
          { dataset: this.dataset, commitId: event.commitId, sender: event.sender.workerId, ignored: event.ignored },
          'write status not counted',
        )
        break
      case 'commit.retrying':
        logger.warn(
          {
            dataset: this.dataset,
            commitId: event.commitId,
            attempt: event.attempt,
            reason: event.reason,
            waitMs: event.waitMs,
          },
          'commit attempt lost, retrying',
        )
        break
      case 'coordinator.stopped':
        logger.info({ dataset: this.dataset, reason: event.reason, commitId: event.commitId }, 'coordinator stopped')
        break
      default:
        break
    }
  }

  // The committed records and lost records come from the commit's own plan, which only the
  // machine's context holds; counted once per commit output.
  #countCommit(commit: CommitRoundActorOutput | undefined): void {
    if (commit === undefined || commit === this.#countedCommit) return
    this.#countedCommit = commit
    if (commit.kind !== 'committed') return
    const { accepted, lost } = commit.plan.check
    let records = 0n
    const now = this.#now()
    for (const partition of accepted) {
      for (const file of partition.files) records += file.recordCount
      // From the oldest record's Kafka timestamp to the commit that made it visible.
      if (partition.oldestTimestampMs !== undefined) {
        this.#o.metrics.commitVisibilitySeconds.observe(
          this.#labels,
          Math.max(0, now - partition.oldestTimestampMs) / 1000,
        )
      }
    }
    this.#report = { ...this.#report, recordsCommitted: records }
    this.#o.metrics.recordsCommitted.inc(this.#labels, Number(records))
    const lostCount = lost.reduce((sum, l) => sum + l.count, 0n)
    if (lostCount > 0n) this.#o.metrics.lostRecords.inc(this.#labels, Number(lostCount))
  }

  #onCrash(error: unknown): void {
    this.#o.logger.error({ dataset: this.dataset, error: messageOf(error) }, 'coordinator machine crashed')
    // Nothing will settle them now (a stop waiting for a commit's end among them); then cleared
    // so that the worker can start it again.
    this.#waiters.stopped(this.#round?.commitId, 'crashed')
    void this.stop('crashed')
    if (isFatal(error)) this.#o.onFatal?.(error as FloeError)
  }

  // ---- waiting for rounds ----------------------------------------------------------------------

  #wait(requested: boolean): Promise<RoundResult> {
    if (!this.#actor || this.#stopping || this.#actor.getSnapshot().status !== 'active') {
      return Promise.resolve({ kind: 'stopped', commitId: undefined, reason: this.#stopReason || 'not running' })
    }
    return this.#waiters.wait(requested)
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#inflight.add(work)
    const forget = () => this.#inflight.delete(work)
    work.then(forget, forget)
    return work
  }
}
