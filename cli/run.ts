// `floe run`: one worker until SIGTERM or SIGINT (with ingestion.threads >= 2, its members on
// threads: members.ts, which keeps what follows). The first signal drains (a last round, its ACK
// within drainTimeoutSeconds, then the groups are left so partitions move at once); a second
// signal exits at once — whatever is left over is safe by recovery. Exit codes: 0 after a drain,
// 1 when the worker could not start (a WAL directory in use, a server out of reach) or stop,
// 2 for a bad configuration, 3 after a fatal error, 130 on a second signal.
import { redact } from '../shared/config/index.ts'
import { messageOf } from '../shared/index.ts'
import { createLogger } from '../shared/telemetry/index.ts'
import { drainOnSignal } from './drain.ts'
import { runMembers, warnOfUnreadFolders } from './members.ts'
import { configFor } from './servers.ts'
import { Worker, workerIdOf } from './worker.ts'

export async function runWorker(configPath: string | undefined): Promise<number> {
  const config = configFor('run', configPath)
  if (!config) return 2
  const workerId = workerIdOf()
  const logger = createLogger({ level: config.log.level, base: { worker: workerId } })
  logger.info({ config: redact(config) }, 'configuration loaded')
  if (config.ingestion.threads >= 2) return runMembers(configPath, config, { logger, workerId })
  await warnOfUnreadFolders(config.ingestion.wal.dir, 1, logger)
  const worker = new Worker(config, { logger, workerId })

  const stopped = drainOnSignal(logger, (signal) => {
    logger.info({ signal, drainTimeoutSeconds: config.ingestion.drainTimeoutSeconds }, 'draining')
    return worker
      .drain(config.ingestion.drainTimeoutSeconds * 1000)
      .then(() => worker.stop({ leave: true }))
      .then(
        () => 0,
        (error: unknown) => {
          logger.error({ err: messageOf(error) }, 'stop failed')
          return 1
        },
      )
  })

  try {
    await worker.start()
  } catch (error) {
    logger.fatal({ err: messageOf(error), code: (error as { code?: string }).code }, 'worker could not start')
    console.error(`floe run: ${messageOf(error)}`)
    await worker.stop({ leave: true }).catch(() => {})
    logger.flush()
    return 1
  }
  // A fatal error stops the worker at once, without the drain's last round (the error may be what
  // that round would run into), with one line on stderr and a non-zero exit.
  const failed = worker.failed.then(async (error) => {
    console.error(`floe run: fatal: ${error.message} (${error.code})`)
    await worker.stop({ leave: true }).catch(() => {})
    return 3
  })
  const code = await Promise.race([stopped, failed])
  logger.info({ code }, 'worker stopped')
  logger.flush()
  return code
}
