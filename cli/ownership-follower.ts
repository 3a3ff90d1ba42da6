// The worker's half of leader following: on every tick it looks, per dataset, whether this worker
// holds partition 0 of the dataset's topic, and starts, stops or restarts that dataset's
// coordinator to match (the decision itself is ownershipStep, a pure function).
import { messageOf } from '../shared/index.ts'
import { nextRestartDelay, ownershipStep, RESTART_FIRST_DELAY_MS, RESTART_MAX_DELAY_MS } from './ownership.ts'

/** What the follower needs of a dataset this worker runs; it keeps its bookkeeping on it. */
export interface FollowedDataset {
  name: string
  participant: { readonly assigned: readonly number[] }
  coordinator: { readonly running: boolean; start(): Promise<void>; stop(): Promise<void> }
  /** The follower started the coordinator and has not stopped it. */
  coordinating: boolean
  /** When a crashed coordinator may be started again (backs off while it keeps crashing). */
  restartAt: number
  restartDelayMs: number
}

export interface OwnershipFollowerDeps {
  logger: {
    info(fields: object, message: string): void
    warn(fields: object, message: string): void
    error(fields: object, message: string): void
  }
  /** The coordinator-active gauge of a dataset. */
  coordinating(dataset: string, active: boolean): void
  /** The worker stops for a fatal error: nothing is started again. */
  halted(): boolean
  now?: () => number
}

export class OwnershipFollower {
  readonly #datasets: readonly FollowedDataset[]
  readonly #deps: OwnershipFollowerDeps
  readonly #now: () => number
  #following = false

  constructor(datasets: readonly FollowedDataset[], deps: OwnershipFollowerDeps) {
    this.#datasets = datasets
    this.#deps = deps
    this.#now = deps.now ?? Date.now
  }

  /** One tick; a tick while the last one still runs does nothing. */
  async tick(): Promise<void> {
    // A coordinator start or stop can outlast the 1 s tick: never run two passes at once.
    if (this.#following) return
    this.#following = true
    try {
      for (const dataset of this.#datasets) await this.#follow(dataset)
    } finally {
      this.#following = false
    }
  }

  async #follow(dataset: FollowedDataset): Promise<void> {
    const { logger } = this.#deps
    const owns = dataset.participant.assigned.includes(0)
    const running = dataset.coordinator.running
    const now = this.#now()
    // A coordinator that has run a while since its last restart starts over from the first delay.
    if (running && now - dataset.restartAt > RESTART_MAX_DELAY_MS) dataset.restartDelayMs = RESTART_FIRST_DELAY_MS
    const step = ownershipStep({
      owns,
      coordinating: dataset.coordinating,
      running,
      halted: this.#deps.halted(),
      now,
      restartAt: dataset.restartAt,
    })
    if (step === 'none') return
    if (step === 'restart') {
      dataset.restartAt = now + dataset.restartDelayMs
      dataset.restartDelayMs = nextRestartDelay(dataset.restartDelayMs)
    }
    dataset.coordinating = owns
    this.#deps.coordinating(dataset.name, owns)
    try {
      if (owns) await dataset.coordinator.start()
      else await dataset.coordinator.stop()
      if (step === 'restart')
        logger.warn({ dataset: dataset.name }, 'restarted the coordinator after it stopped unasked')
      else logger.info({ dataset: dataset.name }, owns ? 'coordinating' : 'no longer coordinating')
    } catch (error) {
      logger.error({ dataset: dataset.name, err: messageOf(error) }, `coordinator ${step} failed`)
    }
  }
}
