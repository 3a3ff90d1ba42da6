// One member of a worker with `ingestion.threads` >= 2, on a thread of its own: a Worker as
// `floe run` runs one, with the member's configuration (member-config.ts) and without endpoints.
// It tells the main thread (members.ts) when it started or could not, its readiness every half
// second, a fatal error, when its drain ended and when it stopped; it answers requests for its
// metrics, and drains or stops when asked. Every other thread's worker is another member of the
// same groups.
import { type MessagePort, parentPort, workerData } from 'node:worker_threads'
import { loadConfig } from '../shared/config/index.ts'
import { messageOf } from '../shared/index.ts'
import { createLogger, createMetrics, type Logger } from '../shared/telemetry/index.ts'
import { memberConfigOf, memberId } from './member-config.ts'
import type { FromMember, MemberData, ToMember } from './members.ts'
import { Worker } from './worker.ts'

if (parentPort === null) throw new Error('member-thread.ts runs on a worker thread (members.ts starts it)')
const port: MessagePort = parentPort
const post = (message: FromMember) => port.postMessage(message)
const data = workerData as MemberData

const flushed = (logger: Logger) => new Promise<void>((resolve) => logger.flush(() => resolve()))

// The main thread loaded the same file a moment ago: a failure now is one it names too.
let config: ReturnType<typeof loadConfig>
try {
  config = memberConfigOf(loadConfig(data.configPath), data.member, data.members)
} catch (error) {
  post({ type: 'start-failed', message: messageOf(error) })
  post({ type: 'stopped', code: 2 })
  // on a worker thread, this ends the thread alone
  process.exit(2)
}
const id = memberId(data.workerId, data.member)
const logger = createLogger({ level: config.log.level, base: { worker: id } })
const worker = new Worker(config, {
  logger,
  workerId: id,
  // the process's own figures (CPU, RSS) are the main thread's to report, once
  metrics: createMetrics({ defaultMetrics: false, commitIntervalSeconds: config.ingestion.commitIntervalSeconds }),
  serveEndpoints: false,
})

let readinessTimer: NodeJS.Timeout | undefined
const startup = worker.start().then(
  () => {
    post({ type: 'started' })
    readinessTimer = setInterval(() => post({ type: 'readiness', ...worker.readiness() }), 500)
    return true
  },
  (error: unknown) => {
    const code = (error as { code?: unknown }).code
    logger.fatal({ err: messageOf(error), code }, 'worker could not start')
    post({ type: 'start-failed', message: messageOf(error), ...(typeof code === 'string' ? { code } : {}) })
    return false
  },
)

let stopping = false
/** Stops the worker once the start settled, and reports `code`. */
function stopWith(code: number): void {
  if (stopping) return
  stopping = true
  void startup
    .then(() => worker.stop({ leave: true }))
    .then(
      () => code,
      (error: unknown) => {
        logger.error({ err: messageOf(error) }, 'stop failed')
        return 1
      },
    )
    .then(async (stopped) => {
      clearInterval(readinessTimer)
      await flushed(logger)
      post({ type: 'stopped', code: stopped })
      port.close()
    })
}

let draining = false
port.on('message', (message: ToMember) => {
  if (message.type === 'metrics') {
    void worker.metrics.registry
      .getMetricsAsJSON()
      .then((metrics) => post({ type: 'metrics', id: message.id, metrics }))
  } else if (message.type === 'drain') {
    // The member stays in its groups until the main thread says stop: the member that coordinates
    // a dataset runs the last rounds the other members wait for.
    if (draining) return
    draining = true
    void startup
      .then((started) => started && worker.drain(message.timeoutMs))
      .catch((error: unknown) => logger.warn({ err: messageOf(error) }, 'drain failed'))
      .then(() => post({ type: 'drained' }))
  } else {
    stopWith(0)
  }
})

void startup.then((started) => {
  if (!started) return stopWith(1)
  // A fatal error stops the member at once, without a drain's last round, as it stops a worker.
  void worker.failed.then((error) => {
    post({ type: 'fatal', message: error.message, code: error.code })
    stopWith(3)
  })
})
