// A commit round's work goes ahead of the record loops of the worker.
//
// Node runs a worker's JavaScript on one thread. While a loop reads a backlog, each turn (fetch,
// decode, append) holds the thread for up to a second or more, and every await of a round's work
// (a file's copy, an upload, a catalog request, a control message) waits behind a whole turn. A
// round that takes 0.1 s on an idle worker then took 4-16 s (docs/benchmarks.md, "A round while
// the backlog is read"). So the round's work is held here, and each loop, before its next fetch,
// waits for the work held since it last looked.
//
// A loop waits for a piece of work once, and never longer than its bound: a round held up by a
// storage or catalog outage must not stop reading (the backpressure decides when reading stops).

/** How long a record loop waits, at most, for the round work held since it last looked. */
export const ROUND_FIRST_MS = 2_000

export class RoundFirst {
  readonly #held = new Set<Promise<unknown>>()

  /** Round work under way (it leaves when it settles); returns `work`. */
  hold<T>(work: Promise<T>): Promise<T> {
    this.#held.add(work)
    const forget = () => this.#held.delete(work)
    work.then(forget, forget)
    return work
  }

  /**
   * Round work known by the states it spans rather than by one promise (the coordinator's commit
   * and ACK): call the returned function with `true` as it begins, `false` as it ends.
   */
  span(): (inside: boolean) => void {
    let end: (() => void) | undefined
    return (inside) => {
      if (inside && !end) {
        void this.hold(
          new Promise<void>((resolve) => {
            end = resolve
          }),
        )
      } else if (!inside && end) {
        end()
        end = undefined
      }
    }
  }

  /**
   * A record loop's turn: before its next fetch, it calls the returned function, which waits for
   * the work held that this loop has not waited for yet, at most `maxWaitMs`, and resolves to
   * whether it waited. Each loop has its own, so two datasets' loops both let a round pass.
   */
  turn(maxWaitMs: number = ROUND_FIRST_MS): () => Promise<boolean> {
    const waited = new WeakSet<Promise<unknown>>()
    return async () => {
      const fresh = [...this.#held].filter((work) => !waited.has(work))
      if (fresh.length === 0) return false
      for (const work of fresh) waited.add(work)
      let timer: NodeJS.Timeout | undefined
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxWaitMs)
      })
      await Promise.race([Promise.allSettled(fresh), bound])
      clearTimeout(timer)
      return true
    }
  }
}
