// The coordinator of one dataset on the worker that owns partition 0 of its topic: the round
// machine (coordinator.machine.ts) with its effects on the real table, topic and control channel,
// and the control messages turned into machine events; round-log.ts turns every round into one
// log line and its metrics; maintenance-runner.ts runs table maintenance between rounds when the
// worker asks for it; unheld-partitions.ts makes the group rebalance when partitions missing from
// rounds are held by no member. The worker registers it on its ControlChannel and stops it when
// partition 0 goes.
import { randomUUID } from 'node:crypto'
import { type Actor, createActor, fromPromise } from 'xstate'
import type { ControlBody, ControlLogger, ControlMessage, WriteStatus, WriteStatusReport } from '../protocol/index.ts'
import { commitAckedBody, endCommitBody, startCommitBody } from '../protocol/index.ts'
import type { Catalog, TableIdentifier } from '../shared/catalog/index.ts'
import type { RetryPolicy } from '../shared/iceberg/commit/index.ts'
import { refSnapshotId } from '../shared/iceberg/metadata/index.ts'
import {
  type ErrorCode,
  FloeError,
  isFatal,
  isFatalCode,
  isFloeError,
  messageOf,
  type RoundFirst,
} from '../shared/index.ts'
import type { KafkaAdmin } from '../shared/kafka/index.ts'
import { findProgress } from '../shared/progress/index.ts'
import type { ObjectStorage } from '../shared/storage/index.ts'
import type { FloeMetrics } from '../shared/telemetry/index.ts'
import { commitRoundLogic } from './commit-round.ts'
import { coordinatorMachine } from './coordinator.machine.ts'
import type {
  AckRoundInput,
  AckRoundOutput,
  CoordinatorEmitted,
  EndRoundInput,
  EndRoundOutput,
  StartRoundInput,
  StartRoundOutput,
} from './machine-types.ts'
import { type CoordinatorMaintenance, type MaintenanceRunner, tableMaintenance } from './maintenance-runner.ts'
import { RoundLog } from './round-log.ts'
import type { ExpectedPartitions } from './round-tracker.ts'
import { type RoundResult, RoundWaiters } from './round-waiters.ts'
import { readRouteRecord, switchDue } from './route-record.ts'
import { type RouteSwitchRequest, switchRoute } from './route-switch.ts'
import { logRoutedTrouble, routedCommitRoundLogic } from './routed-commit-logic.ts'
import { mainSnapshot, TableGauges } from './table-gauges.ts'
import { partitionCountOf, updateLag } from './topic-reads.ts'
import { UnheldPartitionGuards } from './unheld-partitions.ts'
import { rememberCommit, resolveCommits, type UnresolvedCommit } from './unresolved-commits.ts'
import { type RoundTable, readWriteStatus, unreadableWriteStatus, unreadWriteStatus } from './write-status-reader.ts'

export interface DatasetCoordinatorOptions {
  /**
   * The dataset and its topics (name order), asked at every round's start (a topicPattern's set
   * changes): every round expects each topic's partitions.
   */
  dataset: {
    name: string
    topics: () => readonly string[]
    /**
     * The dataset routes into many tables: `table` is its ledger, each round commits per table, and
     * a round starts by switching the ledger to this route when it is at another.
     */
    route?: RouteSwitchRequest
  }
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
  /** Makes the dataset's group rebalance (unheld-partitions.ts); never when absent. */
  rebalance?: (reason: string) => void
  /** The group's session timeout: how long a member that died still holds its partitions. */
  sessionTimeoutMs?: number
  /** Overrides the table's commit.retry.* policy. */
  retry?: Partial<RetryPolicy>
  /** When this worker started (ms since the epoch; the process's start by default): a routed ledger switched after it is not switched back. */
  workerStartedAtMs?: number
  /**
   * A fatal error (a damaged progress marker, a broken invariant): retrying cannot help and
   * committing on a guess could lose or duplicate data, so the worker stops. Without it, such a
   * round fails and the next one tries again.
   */
  onFatal?: (error: FloeError) => void
  /** Table maintenance between rounds; none when absent. */
  maintenance?: CoordinatorMaintenance
  /** The worker's round work: the commit and its ACK go ahead of the record loops. */
  roundFirst?: RoundFirst
  now?: () => number
}

/** The round in flight, as the starting actor left it. */
interface OpenRound extends RoundTable {
  expected: ExpectedPartitions
}

type CoordinatorActor = Actor<typeof coordinatorMachine>

export class DatasetCoordinator {
  readonly #o: DatasetCoordinatorOptions
  readonly #now: () => number
  readonly #labels: { dataset: string }
  #actor: CoordinatorActor | undefined
  #round: OpenRound | undefined
  readonly #log: RoundLog
  readonly #gauges: TableGauges
  readonly #maintenance: MaintenanceRunner | undefined
  readonly #waiters = new RoundWaiters()
  readonly #inflight = new Set<Promise<unknown>>()
  #stopping: Promise<void> | undefined
  #stopReason = ''
  /** Holds the commit and ACK while the machine is in them (shared/round-first.ts). */
  readonly #committing: (inside: boolean) => void
  /** Rounds that gave up with their outcome unknown, looked for in every later round's table. */
  #unresolved: UnresolvedCommit[] = []
  /** Per topic: partitions that stop answering because no member holds them (unheld-partitions.ts). */
  readonly #unheld: UnheldPartitionGuards

  constructor(options: DatasetCoordinatorOptions) {
    this.#o = options
    this.#now = options.now ?? Date.now
    this.#committing = options.roundFirst?.span() ?? (() => {})
    this.#labels = { dataset: options.dataset.name }
    this.#gauges = new TableGauges(options.metrics, options.dataset.name)
    const { catalog, storage, table, logger, metrics, maintenance } = options
    this.#log = new RoundLog({ dataset: options.dataset.name, logger, metrics, now: this.#now, gauges: this.#gauges })
    const target = { catalog, storage, table, logger, metrics, now: this.#now, gauges: this.#gauges }
    this.#maintenance = maintenance && tableMaintenance({ ...maintenance, ...target, dataset: options.dataset.name })
    const { group, admin, rebalance, sessionTimeoutMs } = options
    this.#unheld = new UnheldPartitionGuards({
      dataset: options.dataset.name,
      ...{ group, admin, logger, metrics, rebalance, sessionTimeoutMs },
      now: this.#now,
    })
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
        commitRound: this.#o.dataset.route
          ? routedCommitRoundLogic(
              {
                catalog,
                storage,
                ledger: table,
                group,
                route: this.#o.dataset.route.fingerprint,
                now: this.#now,
                ...(retry ? { retry } : {}),
              },
              this.#now,
              (trouble) => logRoutedTrouble(this.#o.logger, this.dataset, trouble),
            )
          : commitRoundLogic(
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
        commitIntervalMs: this.#o.commitIntervalMs,
        commitTimeoutMs: this.#o.commitTimeoutMs,
        ...(this.#o.failureBackoffMs === undefined ? {} : { failureBackoffMs: this.#o.failureBackoffMs }),
      },
    })
    actor.on('*', (event) => this.#onEmitted(event))
    actor.subscribe({
      next: (snapshot) => {
        this.#committing(inCommit(snapshot.value))
        this.#log.commitOutput(snapshot.context.commit)
      },
      error: (error) => {
        this.#committing(false)
        this.#onCrash(error)
      },
    })
    this.#actor = actor
    this.#o.metrics.coordinatorActive.set(this.#labels, 1)
    this.#o.logger.info({ dataset: this.dataset, group, topics: this.#o.dataset.topics() }, 'coordinator started')
    this.#maintenance?.started()
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
    this.#maintenance?.stop(reason)
    const actor = this.#actor
    if (actor && actor.getSnapshot().status === 'active') {
      if (inCommit(actor.getSnapshot().value)) await this.#waiters.wait(false)
      actor.send({ type: 'coordinator.stop', reason })
    }
    await Promise.allSettled([...this.#inflight])
    this.#committing(false)
    this.#o.metrics.coordinatorActive.set(this.#labels, 0)
    this.#gauges.clear()
    this.#waiters.stopped(this.#round?.commitId, reason)
    this.#actor = undefined
    this.#round = undefined
    this.#log.reset()
    this.#unheld.reset()
    this.#stopping = undefined
  }

  // ---- the machine's actors ------------------------------------------------------------------

  async #startRound(signal: AbortSignal): Promise<StartRoundOutput> {
    const topics = this.#o.dataset.topics()
    let { metadata } = await this.#o.catalog.loadTable(this.#o.table)
    const route = this.#o.dataset.route
    if (route) {
      const startedAt = this.#o.workerStartedAtMs ?? performance.timeOrigin
      const { due, newer } = switchDue(readRouteRecord(metadata, this.#o.group), route.fingerprint, startedAt)
      if (newer) {
        throw new FloeError(
          'COMMIT_REJECTED',
          `the ledger was switched to route ${newer.fingerprint} at ${new Date(newer.markedAtMs).toISOString()}, after this worker started with route ${route.fingerprint}: restart it with the dataset's new route`,
          { details: { ledgerRoute: newer.fingerprint, route: route.fingerprint } },
        )
      }
      if (due) {
        await this.#switchRoute(route, signal)
        ;({ metadata } = await this.#o.catalog.loadTable(this.#o.table))
      }
    }
    this.#gauges.set(mainSnapshot(metadata))
    this.#maintenance?.tableRead(metadata.properties)
    // Before START-COMMIT: a late round's participants still wait for its ACK, and are in line
    // with the table's offsets once they have it.
    await this.#resolveUnknownOutcomes(metadata)
    const { progress } = findProgress(metadata, this.#o.group)
    const counts = await Promise.all(topics.map((topic) => partitionCountOf(this.#o.admin, this.dataset, topic)))
    const expected: ExpectedPartitions = new Map(topics.map((topic, i) => [topic, counts[i] ?? 0]))
    signal.throwIfAborted()
    const commitId = randomUUID()
    this.#round = { commitId, expected, metadata, partitionTypes: new Map() }
    const startedAt = this.#now()
    await this.#send(commitId, startedAt, startCommitBody(progress, refSnapshotId(metadata)))
    for (const [topic, count] of expected) this.#track(updateLag(this.#o, this.dataset, topic, progress, count))
    return { commitId, expected, tableOffsets: progress, startedAt, ...(route ? { route: route.fingerprint } : {}) }
  }

  /** The ledger switched to this coordinator's route (docs/architecture.md, "A route changed while the fleet runs"). */
  async #switchRoute(route: RouteSwitchRequest, signal: AbortSignal): Promise<void> {
    const { catalog, storage, table, group, retry, logger } = this.#o
    const started = this.#now()
    logger.info({ dataset: this.dataset, route: route.fingerprint }, 'switching the ledger to this route')
    const result = await switchRoute(
      { catalog, storage, ledger: table, group, signal, ...(retry ? { retry } : {}) },
      route,
    )
    logger.info(
      {
        dataset: this.dataset,
        route: route.fingerprint,
        generation: result.record.generation,
        fencedTables: result.fenced.length,
        floors: result.floors,
        durationMs: this.#now() - started,
      },
      result.switched ? 'switched the ledger to this route' : 'the ledger is at this route already',
    )
  }

  async #endRound(input: EndRoundInput, signal: AbortSignal): Promise<EndRoundOutput> {
    const round = this.#round
    if (round?.commitId !== input.commitId) {
      throw new FloeError('INVARIANT_BROKEN', `round ${input.commitId} ends, but ${round?.commitId} is open`)
    }
    this.#waiters.ending(round.commitId)
    signal.throwIfAborted()
    const endedAt = this.#now()
    await this.#send(round.commitId, endedAt, endCommitBody(round.expected))
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
      if (resolution.kind === 'landed') {
        await this.#send(resolution.commit.commitId, this.#now(), commitAckedBody(resolution.ack))
        this.#log.committedLate(resolution)
      } else this.#log.neverLanded(resolution.commit.commitId)
      this.#unresolved = this.#unresolved.filter((c) => c.commitId !== resolution.commit.commitId)
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
    this.#log.emitted(event)
    if (event.type === 'round.collected') {
      for (const topic of new Set([...this.#unheld.topics(), ...event.missing.map((p) => p.topic)])) {
        const missing = event.missing.filter((p) => p.topic === topic).map((p) => p.partition)
        const looking = this.#unheld.of(topic).roundCollected(missing)
        if (looking) void this.#track(looking)
      }
    } else if (event.type === 'round.completed') {
      this.#waiters.completed(event.commitId, event.outcome)
      // Between rounds: the next one starts beside the run, whose commits assert main.
      void this.#maintenance?.roundCompleted()
    } else if (event.type === 'round.failed') {
      const unknown = event.phase === 'committing' && event.error.code === 'COMMIT_STATE_UNKNOWN'
      if (!unknown && isFatalCode(event.error.code)) {
        this.#o.onFatal?.(
          new FloeError(event.error.code as ErrorCode, event.error.message, {
            details: { dataset: this.dataset, commitId: event.commitId, phase: event.phase },
          }),
        )
      }
      this.#waiters.failed(event.commitId, event.phase, {
        kind: 'failed',
        commitId: event.commitId,
        phase: event.phase,
        error: event.error,
      })
    }
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

/** The machine is committing a round or acknowledging it: work that runs to its end once begun. */
function inCommit(state: unknown): boolean {
  return state === 'committing' || state === 'acking'
}
