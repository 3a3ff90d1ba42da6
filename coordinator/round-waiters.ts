// Callers waiting for a round's outcome: a draining worker ("ask for a last round, wait for its
// ACK") and tests. No I/O: the runner tells it when an END-COMMIT begins and how rounds end.
import type { Phase, RoundOutcome } from './machine-types.ts'

/** How a round the caller waited for ended; `stopped`: the coordinator stopped before it did. */
export type RoundResult = RoundOutcome | { kind: 'stopped'; commitId: string | undefined; reason: string }

interface Waiter {
  /** Requested rounds: the first round whose END-COMMIT began after the request. */
  requested: boolean
  commitId: string | undefined
  resolve: (result: RoundResult) => void
}

export class RoundWaiters {
  #waiters: Waiter[] = []

  /** `requested`: the outcome of the first round that ends after now; else of the next round to finish. */
  wait(requested: boolean): Promise<RoundResult> {
    return new Promise((resolve) => this.#waiters.push({ requested, commitId: undefined, resolve }))
  }

  /** An END-COMMIT begins: every request made before it is answered by this round. */
  ending(commitId: string): void {
    for (const waiter of this.#waiters) if (waiter.requested) waiter.commitId ??= commitId
  }

  completed(commitId: string, outcome: RoundOutcome): void {
    this.#settle((w) => !w.requested || w.commitId === commitId, outcome)
  }

  /**
   * A round failed. A requested round that could not even start has failed too: the caller
   * decides whether to ask again.
   */
  failed(commitId: string | undefined, phase: Phase, outcome: RoundOutcome): void {
    this.#settle(
      (w) =>
        !w.requested ||
        (w.commitId !== undefined && w.commitId === commitId) ||
        (w.commitId === undefined && phase === 'starting'),
      outcome,
    )
  }

  /** Everyone still waiting learns that no round will come. */
  stopped(commitId: string | undefined, reason: string): void {
    this.#settle(() => true, { kind: 'stopped', commitId, reason })
  }

  #settle(matches: (waiter: Waiter) => boolean, result: RoundResult): void {
    const settled = this.#waiters.filter(matches)
    this.#waiters = this.#waiters.filter((waiter) => !matches(waiter))
    for (const waiter of settled) waiter.resolve(result)
  }
}
