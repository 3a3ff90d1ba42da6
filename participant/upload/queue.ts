// Ready segments waiting for upload, at most `concurrency` in flight (default 2: two streamed puts
// already keep a disk or a network link busy, and the rest waits as files, not memory).
// pendingBytes / pendingCount cover queued and in-flight segments: the backpressure byte cap and
// the upload-lag gauges read them.

import type { DataFile } from '../../shared/iceberg/index.ts'
import { type Deferred, deferred, FloeError } from '../../shared/index.ts'
import type { ReadySegment } from './segment.ts'
import type { UploadCallOptions, Uploader } from './uploader.ts'

export interface UploadQueueOptions {
  uploader: Pick<Uploader, 'upload'>
  /** Uploads in flight at once; default 2. */
  concurrency?: number
  /** Aborts every queued and in-flight upload (shutdown). */
  signal?: AbortSignal
}

interface Job {
  segment: ReadySegment
  tableDataLocation: string
  signal: AbortSignal | undefined
  result: Deferred<DataFile>
  onAbort: (() => void) | undefined
}

export class UploadQueue {
  readonly #uploader: Pick<Uploader, 'upload'>
  readonly #concurrency: number
  readonly #signal: AbortSignal | undefined
  readonly #waiting: Job[] = []
  /** By segment UUID: queued or in flight. */
  readonly #pending = new Map<string, Job>()
  #running = 0
  #pendingBytes = 0
  #idle: Deferred<void> | undefined

  constructor(options: UploadQueueOptions) {
    const concurrency = options.concurrency ?? 2
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new FloeError('CONFIG_INVALID', 'upload concurrency must be a positive integer', {
        details: { concurrency },
      })
    }
    this.#uploader = options.uploader
    this.#concurrency = concurrency
    this.#signal = options.signal
  }

  /** Bytes of the segments queued or in flight. */
  get pendingBytes(): number {
    return this.#pendingBytes
  }

  /** Segments queued or in flight. */
  get pendingCount(): number {
    return this.#pending.size
  }

  /**
   * Uploads the segment when a slot is free; resolves to its DataFile. A segment already queued
   * or in flight (same UUID) is not uploaded twice: the caller gets the same promise.
   */
  enqueue(segment: ReadySegment, tableDataLocation: string, options: UploadCallOptions = {}): Promise<DataFile> {
    const existing = this.#pending.get(segment.uuid)
    if (existing !== undefined) return existing.result.promise
    const signals = [this.#signal, options.signal].filter((s): s is AbortSignal => s !== undefined)
    const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals)
    const job: Job = { segment, tableDataLocation, signal, result: deferred<DataFile>(), onAbort: undefined }
    if (signal?.aborted) return Promise.reject(signal.reason)
    this.#pending.set(segment.uuid, job)
    this.#pendingBytes += segment.sizeBytes
    this.#waiting.push(job)
    // a queued job that is aborted leaves the queue at once instead of waiting for a slot
    job.onAbort = () => {
      const index = this.#waiting.indexOf(job)
      if (index === -1) return
      this.#waiting.splice(index, 1)
      this.#settle(job)
      job.result.reject(signal?.reason)
    }
    signal?.addEventListener('abort', job.onAbort, { once: true })
    this.#pump()
    return job.result.promise
  }

  /** Resolves once nothing is queued or in flight (whatever the outcomes). */
  drain(): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve()
    this.#idle ??= deferred<void>()
    return this.#idle.promise
  }

  #pump(): void {
    while (this.#running < this.#concurrency) {
      const job = this.#waiting.shift()
      if (job === undefined) return
      this.#running++
      const options = job.signal === undefined ? {} : { signal: job.signal }
      const upload = async () => this.#uploader.upload(job.segment, job.tableDataLocation, options)
      // the counts drop before the caller hears the outcome, so it never sees itself as pending
      const finish = () => {
        this.#running--
        this.#settle(job)
        this.#pump()
      }
      upload().then(
        (dataFile) => {
          finish()
          job.result.resolve(dataFile)
        },
        (error: unknown) => {
          finish()
          job.result.reject(error)
        },
      )
    }
  }

  #settle(job: Job): void {
    if (job.onAbort !== undefined) job.signal?.removeEventListener('abort', job.onAbort)
    this.#pending.delete(job.segment.uuid)
    this.#pendingBytes -= job.segment.sizeBytes
    if (this.#pending.size === 0 && this.#idle !== undefined) {
      this.#idle.resolve()
      this.#idle = undefined
    }
  }
}
