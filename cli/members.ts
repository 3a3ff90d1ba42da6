// `floe run` with `ingestion.threads` K >= 2: K members on threads of their own (member-thread.ts),
// each what a one-thread worker is to the groups and the control topic (docs/architecture.md,
// "Members on threads"). The main thread holds the WAL directory's lock, serves /metrics (the
// members' registries merged, as prom-client merges a cluster's) and /readyz (ready when every
// member is), turns the first SIGTERM into a drain of every member, and exits as a worker does:
// 0 after a drain, 1 when a member could not start or stop, 3 after a member's fatal error.
import { readdir } from 'node:fs/promises'
import { Worker } from 'node:worker_threads'
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client'
import { lockWalDir } from '../participant/index.ts'
import type { FloeConfig } from '../shared/config/index.ts'
import { deferred, messageOf } from '../shared/index.ts'
import { type Logger, serveEndpoints } from '../shared/telemetry/index.ts'
import { drainOnSignal } from './drain.ts'
import { memberOfFolder } from './member-config.ts'

type MetricsJson = MetricObjectWithValues<MetricValue<string>>[]

/** What a member's thread is started with. */
export interface MemberData {
  configPath: string | undefined
  workerId: string
  member: number
  members: number
}

export type ToMember = { type: 'metrics'; id: number } | { type: 'drain'; timeoutMs: number } | { type: 'stop' }

export type FromMember =
  | { type: 'started' }
  | { type: 'start-failed'; message: string; code?: string }
  | { type: 'readiness'; ready: boolean; reason?: string }
  | { type: 'metrics'; id: number; metrics: MetricsJson }
  | { type: 'fatal'; message: string; code: string }
  | { type: 'drained' }
  | { type: 'stopped'; code: number }

type Started = { ok: true } | { ok: false; message: string; code?: string }

/** One member's thread, as the main thread sees it. */
class MemberThread {
  readonly member: number
  readonly started: Promise<Started>
  readonly stopped: Promise<number>
  /** Its drain ended (acknowledged or timed out), or it stopped. */
  readonly drained: Promise<void>
  readonly fatal: Promise<{ message: string; code: string }>
  readiness: { ready: boolean; reason?: string } = { ready: false, reason: 'starting' }
  readonly #thread: Worker
  readonly #requests = new Map<number, (metrics: MetricsJson) => void>()
  #lastMetrics: MetricsJson = []
  #requestId = 0

  constructor(data: MemberData, logger: Logger) {
    this.member = data.member
    const started = deferred<Started>()
    const stopped = deferred<number>()
    const drained = deferred<void>()
    const fatal = deferred<{ message: string; code: string }>()
    this.started = started.promise
    this.stopped = stopped.promise
    this.drained = drained.promise
    this.fatal = fatal.promise
    this.#thread = new Worker(new URL('./member-thread.ts', import.meta.url), {
      workerData: data,
      name: `floe-member-${data.member}`,
    })
    let reportedStop = false
    this.#thread.on('message', (message: FromMember) => {
      if (message.type === 'started') started.resolve({ ok: true })
      else if (message.type === 'start-failed')
        started.resolve({ ok: false, message: message.message, code: message.code })
      else if (message.type === 'readiness') this.readiness = { ready: message.ready, reason: message.reason }
      else if (message.type === 'metrics') {
        this.#lastMetrics = message.metrics
        this.#requests.get(message.id)?.(message.metrics)
        this.#requests.delete(message.id)
      } else if (message.type === 'fatal') fatal.resolve(message)
      else if (message.type === 'drained') drained.resolve()
      else {
        reportedStop = true
        drained.resolve()
        stopped.resolve(message.code)
      }
    })
    // An exception nothing caught ends the member's thread: fatal, as it is for a worker's process.
    this.#thread.on('error', (error) => {
      logger.fatal({ member: this.member, err: messageOf(error) }, 'member thread failed')
      started.resolve({ ok: false, message: messageOf(error) })
      fatal.resolve({ message: messageOf(error), code: 'INTERNAL_ERROR' })
    })
    this.#thread.on('exit', (code) => {
      const exited = `member ${this.member}'s thread exited (code ${code})`
      started.resolve({ ok: false, message: exited })
      // A thread that ends without having stopped took its member with it: fatal, as for an error.
      if (!reportedStop) fatal.resolve({ message: exited, code: 'INTERNAL_ERROR' })
      drained.resolve()
      stopped.resolve(code === 0 ? 1 : code)
      this.readiness = { ready: false, reason: `member ${this.member} stopped` }
      for (const answer of this.#requests.values()) answer(this.#lastMetrics)
      this.#requests.clear()
    })
  }

  send(message: ToMember): void {
    try {
      this.#thread.postMessage(message)
    } catch {
      // a thread that exited stopped already
    }
  }

  /**
   * The member's metrics, or its last ones when it does not answer within a second (a record loop's
   * turn may hold its thread that long): a scrape that left a member out would read as a reset of
   * every counter it adds to, and one that waited would time out.
   */
  metrics(): Promise<MetricsJson> {
    const id = ++this.#requestId
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#requests.delete(id)
        resolve(this.#lastMetrics)
      }, 1000)
      this.#requests.set(id, (metrics) => {
        clearTimeout(timer)
        resolve(metrics)
      })
      this.send({ type: 'metrics', id })
    })
  }
}

export async function runMembers(
  configPath: string | undefined,
  config: FloeConfig,
  options: { logger: Logger; workerId: string },
): Promise<number> {
  const { logger, workerId } = options
  // From the start, as a worker's: the CPU counter counts from the registry's making.
  const processRegistry = new Registry()
  collectDefaultMetrics({ register: processRegistry, prefix: 'floe_process_' })
  const walDir = config.ingestion.wal.dir
  const count = config.ingestion.threads
  let lock: Awaited<ReturnType<typeof lockWalDir>>
  try {
    // The directory's own lock: no one-thread worker (nor another process of members) shares it.
    lock = await lockWalDir(walDir, { workerId, logger })
  } catch (error) {
    logger.fatal({ err: messageOf(error) }, 'worker could not start')
    console.error(`floe run: ${messageOf(error)}`)
    return 1
  }
  await warnOfUnreadFolders(walDir, count, logger)
  const members = Array.from(
    { length: count },
    (_, member) => new MemberThread({ configPath, workerId, member, members: count }, logger),
  )
  let stopping: Promise<number[]> | undefined
  // The first request wins: a drain, or a stop after a failure; a signal after a fatal error waits.
  const allStopped = (message: ToMember): Promise<number[]> => {
    stopping ??= (async () => {
      for (const member of members) member.send(message)
      const codes = await Promise.all(members.map((m) => m.stopped))
      await lock.release()
      return codes
    })()
    return stopping
  }

  const drained = drainOnSignal(logger, async (signal) => {
    const { drainTimeoutSeconds } = config.ingestion
    logger.info({ signal, drainTimeoutSeconds, members: count }, 'draining')
    // Every member asks for its last rounds, and none leaves its groups before all of them are
    // done: a member that stopped after its own round would take a dataset's coordinator with it
    // while another member still waits for the round it asked for.
    for (const member of members) member.send({ type: 'drain', timeoutMs: drainTimeoutSeconds * 1000 })
    await Promise.all(members.map((m) => m.drained))
    const codes = await allStopped({ type: 'stop' })
    return codes.every((code) => code === 0) ? 0 : 1
  })

  // The first member that cannot start stops the others: the worker could not start.
  const failedStart = new Promise<Started>((resolve) => {
    for (const member of members) void member.started.then((started) => started.ok || resolve(started))
  })
  const start = await Promise.race([
    failedStart,
    Promise.all(members.map((m) => m.started)).then(() => ({ ok: true }) as const),
  ])
  let endpoints: Awaited<ReturnType<typeof serveEndpoints>> | undefined
  try {
    if (!start.ok) throw new Error(start.message)
    endpoints = await serveEndpoints({
      port: config.metrics.port,
      registry: mergedRegistry(processRegistry, members),
      ready: () => {
        const waiting = members.filter((m) => !m.readiness.ready)
        if (waiting.length === 0) return { ready: true }
        return { ready: false, reason: waiting.map((m) => `member ${m.member}: ${m.readiness.reason}`).join('; ') }
      },
    })
  } catch (error) {
    const code = start.ok ? undefined : start.code
    logger.fatal({ err: messageOf(error), code }, 'worker could not start')
    console.error(`floe run: ${messageOf(error)}`)
    await allStopped({ type: 'stop' })
    logger.flush()
    return 1
  }
  logger.info({ worker: workerId, members: count, metricsPort: endpoints.port }, 'worker started')

  // A member's fatal error stops every member at once, without a drain's last round.
  const failed = Promise.race(members.map((m) => m.fatal)).then(async (error) => {
    console.error(`floe run: fatal: ${error.message} (${error.code})`)
    await allStopped({ type: 'stop' })
    return 3
  })
  const code = await Promise.race([drained, failed])
  await endpoints.close()
  logger.info({ code }, 'worker stopped')
  logger.flush()
  return code
}

/** /metrics of every member at once, and the process's own figures (CPU, RSS, heap) once. */
function mergedRegistry(
  processRegistry: Registry,
  members: readonly MemberThread[],
): Pick<Registry, 'metrics' | 'contentType'> {
  return {
    contentType: processRegistry.contentType,
    metrics: async () => {
      const all = await Promise.all([processRegistry.getMetricsAsJSON(), ...members.map((m) => m.metrics())])
      return AggregatorRegistry.aggregate(all).metrics()
    },
  }
}

/**
 * WAL folders a worker does not read: with members, a one-thread worker's dataset folders and the
 * folders of members past its count; without, every member folder. They are left by a run with
 * another `ingestion.threads`. What their files hold that the table lacks is read from Kafka again
 * by whichever member owns the partitions now, so it is never committed twice, and the folders
 * only take disk: said once at the start, for the operator to delete after a drain.
 */
export async function warnOfUnreadFolders(walDir: string, members: number, logger: Logger): Promise<void> {
  const entries = await readdir(walDir, { withFileTypes: true }).catch(() => [])
  const unread = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .filter((name) => {
      const member = memberOfFolder(name)
      if (members === 1) return member !== undefined
      return member === undefined ? /^[A-Za-z0-9]/.test(name) : member >= members
    })
    .sort()
  if (unread.length === 0) return
  logger.warn(
    { walDir, folders: unread, threads: members },
    'WAL folders this worker does not read, left by a run with another ingestion.threads: their rows ' +
      'the table lacks are read from Kafka again; delete them after a drain',
  )
}
