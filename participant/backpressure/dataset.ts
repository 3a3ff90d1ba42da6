// One dataset's view of the worker's backpressure (docs/design.md invariant 10: a dataset's trouble
// stays that dataset's). What is legitimately one per worker stays on the worker's monitor: the
// WAL disk is one disk, and open segments share one heap. The upload backlog is the dataset's own:
// ready files of a dataset whose storage is down pile up for that dataset alone, and pausing every
// other dataset for them would turn one storage outage into lag everywhere.
import { EventEmitter } from 'node:events'
import { FloeError } from '../../shared/index.ts'
import {
  type Backpressure,
  type BackpressureEvents,
  type BackpressureReason,
  BYTES_RESUME_FRACTION,
  backpressureReasons,
} from './monitor.ts'

/** What a participant needs of backpressure: the worker's monitor, or a dataset's view of it. */
export interface PressureSource {
  readonly paused: boolean
  readonly reasons: readonly BackpressureReason[]
  /** What the worker's open segments hold now (every reporter's share) and the cap on it. */
  readonly openSegmentMemoryBytes: number
  readonly maxOpenSegmentMemoryBytes: number
  setPendingUploadBytes(bytes: number, reporter?: string): void
  setOpenSegmentMemoryBytes(bytes: number, reporter?: string): void
  on(event: 'pause' | 'resume', listener: () => void): unknown
  off(event: 'pause' | 'resume', listener: () => void): unknown
}

export interface DatasetBackpressureOptions {
  /** Names this dataset's share in the worker's memory sum. */
  reporter: string
  /** This dataset's cap on bytes of ready segments waiting for upload. */
  maxPendingUploadBytes: number
}

const none: readonly BackpressureReason[] = Object.freeze([])

export class DatasetBackpressure extends EventEmitter<BackpressureEvents> implements PressureSource {
  readonly #worker: Backpressure
  readonly #reporter: string
  readonly #maxPendingUploadBytes: number
  #pendingUploadBytes = 0
  #uploadBacklog = false
  #reasons: readonly BackpressureReason[] = none
  readonly #onWorkerChange = () => this.#evaluate()

  constructor(worker: Backpressure, options: DatasetBackpressureOptions) {
    super()
    if (!(options.maxPendingUploadBytes > 0)) {
      throw new FloeError('CONFIG_INVALID', 'maxPendingUploadBytes must be positive')
    }
    this.#worker = worker
    this.#reporter = options.reporter
    this.#maxPendingUploadBytes = options.maxPendingUploadBytes
    worker.on('change', this.#onWorkerChange)
    this.#evaluate()
  }

  get paused(): boolean {
    return this.#reasons.length > 0
  }

  /** The worker's disk and memory reasons and this dataset's upload backlog, in backpressureReasons order. */
  get reasons(): readonly BackpressureReason[] {
    return this.#reasons
  }

  get pendingUploadBytes(): number {
    return this.#pendingUploadBytes
  }

  get openSegmentMemoryBytes(): number {
    return this.#worker.openSegmentMemoryBytes
  }

  get maxOpenSegmentMemoryBytes(): number {
    return this.#worker.maxOpenSegmentMemoryBytes
  }

  /** This dataset's bytes of ready segments not yet uploaded (the reporter is this view's own). */
  setPendingUploadBytes(bytes: number): void {
    if (!(Number.isFinite(bytes) && bytes >= 0)) {
      throw new FloeError('INVARIANT_BROKEN', `pending upload bytes must be a non-negative number, got ${bytes}`)
    }
    this.#pendingUploadBytes = bytes
    this.#evaluate()
  }

  /** Open segments' memory counts against the worker's one heap. */
  setOpenSegmentMemoryBytes(bytes: number): void {
    this.#worker.setOpenSegmentMemoryBytes(bytes, this.#reporter)
  }

  /** Stops following the worker's monitor and takes this dataset's share out of it. */
  close(): void {
    this.#worker.off('change', this.#onWorkerChange)
    this.#worker.setOpenSegmentMemoryBytes(0, this.#reporter)
  }

  #evaluate(): void {
    const max = this.#maxPendingUploadBytes
    this.#uploadBacklog = this.#uploadBacklog
      ? this.#pendingUploadBytes >= max * BYTES_RESUME_FRACTION
      : this.#pendingUploadBytes >= max
    const worker = this.#worker.reasons
    const reasons = backpressureReasons.filter((reason) =>
      reason === 'upload-backlog' ? this.#uploadBacklog : worker.includes(reason),
    )
    const previous = this.#reasons
    if (reasons.length === previous.length && reasons.every((r, i) => r === previous[i])) return
    this.#reasons = reasons.length ? Object.freeze(reasons) : none
    this.emit('change', this.#reasons)
    if (previous.length === 0) this.emit('pause', this.#reasons)
    else if (reasons.length === 0) this.emit('resume')
  }
}
