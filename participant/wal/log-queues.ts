// The two queues and the state both WAL layouts run on (PartitionLog, SharedLog). Operations on
// open segments run one at a time in call order (`write`); operations on ready files have a queue
// of their own (`ready`), so an upload's bookkeeping never waits behind a row group being
// written. A failure inside `guard` leaves the log `failed`: which rows reached which file is then
// unknown, so only a `reset` (the layout's way back to a known state) or a `close` go on.
import { FloeError, isFloeError } from '../../shared/index.ts'

export type LogState = 'open' | 'failed' | 'closed'

export class LogQueues {
  #state: LogState = 'open'
  #failure: unknown
  #writeTail: Promise<unknown> = Promise.resolve()
  #readyTail: Promise<unknown> = Promise.resolve()
  readonly #dir: string
  readonly #owner: Readonly<Record<string, unknown>>

  /** `owner` names the log in the error of a call after close (its topic, its partition). */
  constructor(dir: string, owner: Readonly<Record<string, unknown>>) {
    this.#dir = dir
    this.#owner = owner
  }

  get state(): LogState {
    return this.#state
  }

  /** Runs an operation on open segments after the ones before it; refused unless the log is open. */
  write<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.#writeTail.then(() => {
      this.#assertOpen()
      return operation()
    })
    this.#writeTail = result.catch(() => {})
    return result
  }

  /** Runs an operation on ready files after the ones before it; refused once closed. */
  ready<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.#readyTail.then(() => {
      if (this.#state === 'closed') throw this.#closedError()
      return operation()
    })
    this.#readyTail = result.catch(() => {})
    return result
  }

  /** A failure here leaves open segments in an unknown state: the log fails. */
  async guard<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation()
    } catch (error) {
      this.#state = 'failed'
      this.#failure = isFloeError(error)
        ? error
        : new FloeError('STORAGE_UNAVAILABLE', 'WAL write failed', { cause: error, details: { dir: this.#dir } })
      throw this.#failure
    }
  }

  /**
   * After both queues: `operation` (under guard) brings the log back to a known state, which opens
   * it again, also out of `failed`. Refused once closed.
   */
  reset<T>(operation: () => Promise<T>): Promise<T> {
    if (this.#state === 'closed') return Promise.reject(this.#closedError())
    return this.#barrier(async () => {
      if (this.#state === 'closed') throw this.#closedError()
      const result = await this.guard(operation)
      this.#state = 'open'
      this.#failure = undefined
      return result
    })
  }

  /** After both queues, the log is closed and `operation` ends it (open segments discarded). */
  close(operation: () => Promise<void>): Promise<void> {
    if (this.#state === 'closed') return Promise.resolve()
    return this.#barrier(() => {
      this.#state = 'closed'
      return operation()
    })
  }

  /** Closed now: queued operations fail; resolves once what was running has settled. */
  async abort(): Promise<boolean> {
    if (this.#state === 'closed') return false
    this.#state = 'closed'
    await Promise.all([this.#writeTail, this.#readyTail])
    return true
  }

  #barrier<T>(operation: () => Promise<T>): Promise<T> {
    const done = Promise.all([this.#writeTail, this.#readyTail]).then(operation)
    this.#writeTail = done.catch(() => {})
    this.#readyTail = this.#writeTail
    return done
  }

  #closedError(): FloeError {
    return new FloeError('INVARIANT_BROKEN', 'WAL used after it was closed', { details: { ...this.#owner } })
  }

  #assertOpen(): void {
    if (this.#state === 'open') return
    if (this.#state === 'failed') throw this.#failure
    throw this.#closedError()
  }
}
