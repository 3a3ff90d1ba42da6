// Faults on a running stack, for the fault suite and the soak: freeze a service (SIGSTOP of its
// whole process group: it keeps its sockets open and answers nothing, like a hung server or a
// long GC pause), thaw it (SIGCONT), and stop and start a Kafka broker again on the data it has
// (a broker restart, not a fresh cluster). Only services the stack started are signalled.
import { existsSync, readFileSync } from 'node:fs'
import { brokerName, launchBroker, waitBrokerReady } from './kafka.ts'
import { type Endpoints, paths, type StackOptions, stackDir } from './layout.ts'
import { launchPostgres, waitPostgresReady } from './postgres.ts'
import { freeze, killService, stopService, thaw } from './processes.ts'

/**
 * Set by `npm run test:integration` for the files it runs two at a time: a test there that froze
 * or restarted a server would be an outage for the test beside it, so the faults below refuse.
 */
export const sharedStackVariable = 'FLOE_TEST_STACK_SHARED'

function refuseWhenShared(what: string): void {
  if (process.env[sharedStackVariable] !== '1') return
  throw new Error(
    `${what}, while other test files use the stack: add this file to the outages in integration/run.ts, which run alone`,
  )
}

/** Stops `name` (e.g. `kafka`, `iceberg-rest`, `azurite`) where it is, with SIGSTOP of its process group. */
export function freezeService(name: string, dir = stackDir()): void {
  refuseWhenShared(`a test froze ${name}`)
  freeze(name, dir)
}

/** Lets a frozen service run again. Harmless on one that is not frozen, or no longer running. */
export function thawService(name: string, dir = stackDir()): void {
  thaw(name, dir)
}

function written(dir: string): Partial<Endpoints> & { options: StackOptions } {
  const file = paths(dir).endpoints
  if (!existsSync(file)) throw new Error(`the local stack is not up (${file} is missing)`)
  const found = JSON.parse(readFileSync(file, 'utf8')) as Partial<Endpoints> & { options?: StackOptions }
  if (!found.options) throw new Error(`${file} does not say how the stack was started`)
  return { ...found, options: found.options }
}

/** How the running stack was started (`npm run stack -- up` and its options). */
export function stackOptions(dir = stackDir()): StackOptions {
  return written(dir).options
}

export interface BrokerRestart {
  /** kill -9 instead of a clean shutdown (SIGTERM): the broker recovers its logs on start. */
  hard?: boolean
  /** Time between the stop and the start, while clients find no broker at all. */
  downMs?: number
}

/** The names of the stack's brokers, in node order. */
export function brokerNames(dir = stackDir()): string[] {
  const options = stackOptions(dir)
  return Array.from({ length: options.brokers }, (_, i) => brokerName(options, i))
}

/**
 * Stops broker `index` and starts it again on the same data folder: topics, offsets, committed
 * group offsets and transactions survive. Resolves once the cluster answers with every broker.
 */
export async function restartBroker(index = 0, how: BrokerRestart = {}, dir = stackDir()): Promise<void> {
  const options = stackOptions(dir)
  const name = brokerName(options, index)
  refuseWhenShared(`a test restarted ${name}`)
  thawService(name, dir)
  if (how.hard) killService(dir, name)
  await stopService(dir, name)
  if (how.downMs) await new Promise((resolve) => setTimeout(resolve, how.downMs))
  const record = launchBroker(options, dir, index)
  await waitBrokerReady(options, dir, record)
}

/**
 * Stops the stack's PostgreSQL (a clean shutdown, or kill -9 with `hard`) and starts it again on
 * the same cluster: the catalog's tables survive. Resolves once it answers a real connection.
 */
export async function restartPostgres(how: BrokerRestart = {}, dir = stackDir()): Promise<void> {
  refuseWhenShared('a test restarted postgres')
  const { options, postgres } = written(dir)
  if (!postgres) throw new Error('the stack runs without PostgreSQL (stack up --postgres)')
  thawService('postgres', dir)
  if (how.hard) killService(dir, 'postgres')
  await stopService(dir, 'postgres')
  if (how.downMs) await new Promise((resolve) => setTimeout(resolve, how.downMs))
  const record = launchPostgres(options, dir)
  await waitPostgresReady(options, dir, record, postgres.superuser.password)
}
