// One WRITE-STATUS per worker, dataset and round: each partition's machine flushes on its own and
// hands its status here (its sendStatus actor); the statuses of one round go out together once no
// partition of this participant is still flushing that round. A worker with 50 partitions then
// sends one message a round, not 50, and the coordinator decodes one.
//
// Only partitions that are flushing are waited for: a partition still syncing answers when it can,
// in a message of its own. A flush that takes long (a large upload, a storage outage under retry)
// holds the others back for at most `windowMs` from the first status, so a coordinator that times
// out a round still commits what was ready (its commit timeout, 30 s by default, is longer).
//
// In the shared-segment layout (`cumulative`), the coordinator keeps only a sender's newest status
// of a round, so a status sent after the round's first message carries every status of the round
// sent before it as well; `compose` turns the statuses into the message (summaries and rotations).
import type { PartitionWriteStatus, RotationStatus } from '../protocol/index.ts'

/** What one WRITE-STATUS carries. */
export interface RoundMessage {
  statuses: readonly PartitionWriteStatus[]
  /** The shared-segment layout's rotations; absent in the per-partition layout. */
  rotations?: readonly RotationStatus[]
}

export interface RoundReportsOptions {
  /** Sends one WRITE-STATUS. */
  send(commitId: string, message: RoundMessage): Promise<void>
  /** Builds the message from the round's statuses; default: the statuses alone. */
  compose?(commitId: string, statuses: readonly PartitionWriteStatus[]): RoundMessage
  /** Each message of a round repeats the statuses sent before it in that round. */
  cumulative?: boolean
  /** Whether some partition of this participant is flushing round `commitId` now. */
  flushing(commitId: string): boolean
  /** The longest wait for flushes still running, from the first status of the round. */
  windowMs: number
}

interface Waiter {
  resolve: () => void
  reject: (error: unknown) => void
}

interface PendingRound {
  statuses: PartitionWriteStatus[]
  waiters: Waiter[]
  timer: NodeJS.Timeout
}

export class RoundReports {
  readonly #options: RoundReportsOptions
  readonly #rounds = new Map<string, PendingRound>()
  /** The statuses sent for the newest round (cumulative only). */
  #sent: { commitId: string; statuses: PartitionWriteStatus[] } | undefined
  #scheduled = false
  #closed: unknown

  constructor(options: RoundReportsOptions) {
    this.#options = options
  }

  /** Adds a partition's status to its round's message; resolves once that message is sent. */
  submit(commitId: string, status: PartitionWriteStatus): Promise<void> {
    if (this.#closed !== undefined) return Promise.reject(this.#closed)
    let round = this.#rounds.get(commitId)
    if (!round) {
      const timer = setTimeout(() => this.#dispatch(commitId), this.#options.windowMs)
      timer.unref()
      const before = this.#sent?.commitId === commitId ? this.#sent.statuses : []
      round = { statuses: [...before], waiters: [], timer }
      this.#rounds.set(commitId, round)
    }
    // a newer status of the same partition (a repeated flush) replaces the older one
    round.statuses = round.statuses.filter((s) => s.partition !== status.partition)
    round.statuses.push(status)
    const sent = new Promise<void>((resolve, reject) => round.waiters.push({ resolve, reject }))
    this.poke()
    return sent
  }

  /**
   * Something changed (a machine moved on, a partition went away): sends every round nobody is
   * flushing any more. Deferred to the next turn of the event loop, so a machine that just
   * finished flushing has entered its next state before it is asked.
   */
  poke(): void {
    if (this.#scheduled || this.#rounds.size === 0) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      for (const commitId of [...this.#rounds.keys()]) {
        if (!this.#options.flushing(commitId)) this.#dispatch(commitId)
      }
    })
  }

  /** Fails every status not yet sent (shutdown). */
  close(reason: unknown): void {
    this.#closed = reason
    for (const [commitId, round] of this.#rounds) {
      clearTimeout(round.timer)
      this.#rounds.delete(commitId)
      for (const waiter of round.waiters) waiter.reject(reason)
    }
  }

  #dispatch(commitId: string): void {
    const round = this.#rounds.get(commitId)
    if (!round) return
    this.#rounds.delete(commitId)
    clearTimeout(round.timer)
    const statuses = [...round.statuses].sort((a, b) => a.partition - b.partition)
    if (this.#options.cumulative) this.#sent = { commitId, statuses }
    const message = this.#options.compose ? this.#options.compose(commitId, statuses) : { statuses }
    this.#options.send(commitId, message).then(
      () => {
        for (const waiter of round.waiters) waiter.resolve()
      },
      (error: unknown) => {
        for (const waiter of round.waiters) waiter.reject(error)
      },
    )
  }
}
