// A worker's drain on shutdown (docs/design.md, "The protocol"): it asks for a last round of every
// dataset and waits, within the drain timeout, for the ACK of a round that started after the
// request — such a round includes everything this worker wrote before it. What is left when the
// time is up is safe by recovery; the drain only saves the next owner from reading it again.
import { setTimeout as sleep } from 'node:timers/promises'
import type { ControlMessage, ControlReceiver } from '../protocol/index.ts'
import { messageOf } from '../shared/index.ts'
import type { Logger } from '../shared/telemetry/index.ts'

/** What the drain needs of a dataset this worker runs. */
export interface DrainedDataset {
  name: string
  group: string
  /** This worker runs the dataset's coordinator: it asks it directly. */
  coordinating: boolean
  coordinator: { requestRound(reason: string): Promise<unknown> }
  /** This worker's member id and generation in the dataset's group, for the sender of the request. */
  membership(): { memberId: string; generation: number }
}

export interface DrainDeps {
  channel: {
    send(message: ControlMessage): Promise<void>
    register(receiver: ControlReceiver): () => void
  }
  workerId: string
  logger: { info(fields: object, message: string): void; warn(fields: object, message: string): void }
  now?: () => number
  /** Resolves after `ms` (a test's clock); default a real timer. */
  wait?: (ms: number) => Promise<unknown>
  /** How often a request no round has answered yet is sent again; default 5 s. */
  askAgainMs?: number
}

/**
 * Asks for a last round of each dataset and resolves true once every one is acknowledged, false
 * when `timeoutMs` passes first. A dataset this worker coordinates says itself when its
 * requested round ended; for any other, a COMMIT-REQUESTED goes over the control topic to its
 * coordinator (again every `askAgainMs` until a round ends its collecting) and the drain watches
 * for the ACK of a round whose START-COMMIT came after it.
 */
export async function drain(datasets: readonly DrainedDataset[], timeoutMs: number, deps: DrainDeps): Promise<boolean> {
  const { channel, logger } = deps
  const now = deps.now ?? Date.now
  const wait = deps.wait ?? sleep
  const requestedAt = now()
  const pending = new Set(datasets.filter((d) => !d.coordinating).map((d) => d.name))
  // Per dataset: the rounds that started after the request (their ACK ends its wait), and whether
  // one of them has ended its collecting (then the request was heard, or did not need to be).
  const rounds = new Map<string, { started: Set<string>; ending: boolean }>()
  let unregister = () => {}
  const remote = new Promise<void>((resolve) => {
    if (pending.size === 0) return resolve()
    unregister = channel.register({
      receive: (message) => {
        if (message.timeMs < requestedAt || !pending.has(message.dataset)) return
        const seen = rounds.get(message.dataset) ?? { started: new Set<string>(), ending: false }
        rounds.set(message.dataset, seen)
        const { type } = message.body
        if (type === 'StartCommit') seen.started.add(message.commitId)
        else if (type === 'EndCommit' && seen.started.has(message.commitId)) seen.ending = true
        else if (type === 'CommitAcked' && seen.started.has(message.commitId)) {
          pending.delete(message.dataset)
          if (pending.size === 0) resolve()
        }
      },
    })
  })
  const ask = async (dataset: DrainedDataset, warn: boolean) => {
    await channel
      .send({
        dataset: dataset.name,
        group: dataset.group,
        commitId: '',
        sender: { workerId: deps.workerId, ...dataset.membership() },
        timeMs: now(),
        body: { type: 'CommitRequested', reason: 'shutdown', partitions: [] },
      })
      .catch((error: unknown) => {
        if (warn) logger.warn({ dataset: dataset.name, err: messageOf(error) }, 'could not ask for a last round')
      })
  }
  const local: Promise<unknown>[] = []
  for (const dataset of datasets) {
    if (dataset.coordinating) local.push(dataset.coordinator.requestRound('shutdown'))
    else await ask(dataset, true)
  }
  // Asked again until a round that started since ends its collecting: a request that reached no
  // coordinator (partition 0 was moving between members, or its new owner had not started
  // coordinating yet) is lost, and that owner's first round would stay open a whole interval.
  const again = setInterval(() => {
    for (const dataset of datasets) {
      if (pending.has(dataset.name) && !rounds.get(dataset.name)?.ending) void ask(dataset, false)
    }
  }, deps.askAgainMs ?? 5000)
  const all = Promise.all([remote, ...local])
  const finished = await Promise.race([all.then(() => true), wait(timeoutMs).then(() => false)])
  clearInterval(again)
  unregister()
  logger.info(
    { finished, waitedMs: now() - requestedAt },
    finished ? 'last round acknowledged' : 'drain timed out; leftovers are safe by recovery',
  )
  return finished
}

/**
 * `floe run`'s signals: the first SIGTERM or SIGINT runs `drain`, whose exit code the promise
 * resolves to; a second exits at once with 130 (whatever is left over is safe by recovery).
 */
export function drainOnSignal(logger: Logger, drain: (signal: NodeJS.Signals) => Promise<number>): Promise<number> {
  let signals = 0
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      signals++
      if (signals > 1) {
        logger.warn({ signal }, 'second signal: exiting now')
        logger.flush()
        process.exit(130)
      }
      void drain(signal).then(resolve)
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  })
}
