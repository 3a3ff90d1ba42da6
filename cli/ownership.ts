// What the worker does about a dataset's coordinator on each ownership tick, as a pure function:
// it follows the ownership of partition 0 of the dataset's topic, and a coordinator that stopped
// unasked (its machine crashed, or its start failed) while this worker still owns partition 0 is
// started again — after a wait that doubles while it keeps stopping — instead of staying dead.

export type OwnershipStep = 'start' | 'stop' | 'restart' | 'none'

export interface OwnershipFacts {
  /** This worker's participant holds partition 0. */
  owns: boolean
  /** The worker started the coordinator and has not stopped it. */
  coordinating: boolean
  /** The coordinator runs (not stopped, not stopping). */
  running: boolean
  /** The worker is stopping for a fatal error: nothing is started again. */
  halted: boolean
  now: number
  /** Not before this time may a stopped coordinator be started again. */
  restartAt: number
}

export const RESTART_FIRST_DELAY_MS = 1000
export const RESTART_MAX_DELAY_MS = 60_000

export function ownershipStep(facts: OwnershipFacts): OwnershipStep {
  if (facts.owns && facts.coordinating && !facts.running) {
    return facts.halted || facts.now < facts.restartAt ? 'none' : 'restart'
  }
  if (facts.owns === facts.coordinating) return 'none'
  return facts.owns ? 'start' : 'stop'
}

/** The wait before the next restart, after one now: doubled, up to a minute. */
export function nextRestartDelay(delayMs: number): number {
  return Math.min(RESTART_MAX_DELAY_MS, Math.max(RESTART_FIRST_DELAY_MS, delayMs * 2))
}
