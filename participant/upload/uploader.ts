// Uploads one ready WAL segment as an Iceberg data file, then its bloom-filter sidecar.
//
// Retry policy (STYLE 11): a FloeError that says `retryable` (STORAGE_UNAVAILABLE: network,
// throttling, a full disk, a size check that failed) is retried with exponential backoff and
// jitter, without a limit, until the caller's signal aborts — a storage outage must become
// consumer lag, never lost data, and Kafka retention is the real limit. Fatal at once: anything
// not retryable, i.e. CONFIG_INVALID (a location no storage serves), STORAGE_NOT_FOUND (the local
// segment is gone), INVARIANT_BROKEN (the segment disagrees with its own metadata), and errors
// that are not FloeErrors at all (bugs).
import { setTimeout as sleepFor } from 'node:timers/promises'
import { backoffMs, type RetryPolicy } from '../../shared/iceberg/commit/index.ts'
import type { DataFile } from '../../shared/iceberg/index.ts'
import { FloeError, isFloeError } from '../../shared/index.ts'
import type { ObjectStorage } from '../../shared/storage/index.ts'
import { writeBloomSidecar } from './bloom-sidecar.ts'
import { localFileSize } from './local-file.ts'
import { bloomSidecarLocation, dataObjectLocation, type ReadySegment } from './segment.ts'

export interface UploadClock {
  /** Milliseconds on a monotonic clock, for durations in the log. */
  now(): number
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
}

export const systemClock: UploadClock = {
  now: () => performance.now(),
  sleep: (ms, signal) => sleepFor(ms, undefined, signal ? { signal } : undefined),
}

export interface UploadRetryOptions {
  /** The first wait; default 200 ms. */
  minWaitMs?: number
  /** The longest wait; default 30 s. */
  maxWaitMs?: number
}

export type UploadedObject = 'data file' | 'bloom sidecar'

/** One line per attempt that failed, and one for the outcome. */
export type UploadLogEvent =
  | { kind: 'retrying'; object: UploadedObject; location: string; attempt: number; waitMs: number; error: FloeError }
  | { kind: 'failed'; object: UploadedObject; location: string; attempt: number; error: unknown }
  | { kind: 'uploaded'; object: UploadedObject; location: string; bytes: number; attempts: number; elapsedMs: number }

export interface UploaderOptions {
  storage: ObjectStorage
  clock?: UploadClock
  /** Uniform in [0, 1): the jitter of the backoff. Default Math.random. */
  random?: () => number
  log?: (event: UploadLogEvent) => void
  retry?: UploadRetryOptions
}

export interface UploadCallOptions {
  /** Stops the upload and its retries; the promise rejects with the signal's reason. */
  signal?: AbortSignal
}

function retryPolicyOf(options: UploadRetryOptions = {}): RetryPolicy {
  const minWaitMs = options.minWaitMs ?? 200
  const maxWaitMs = options.maxWaitMs ?? 30_000
  if (!(Number.isFinite(minWaitMs) && minWaitMs > 0 && Number.isFinite(maxWaitMs) && maxWaitMs >= minWaitMs)) {
    throw new FloeError('CONFIG_INVALID', 'upload retry waits need 0 < minWaitMs <= maxWaitMs', {
      details: { minWaitMs, maxWaitMs },
    })
  }
  // no retry count or deadline: only the caller's signal ends the retries
  return { retries: Number.POSITIVE_INFINITY, minWaitMs, maxWaitMs, totalTimeoutMs: Number.POSITIVE_INFINITY }
}

const isAbort = (error: unknown) => (error as Error | undefined)?.name === 'AbortError'

/** `ABFS://` and `abfs://` name the same object; storages answer in their own case. */
function sameLocation(a: string, b: string): boolean {
  if (a === b) return true
  const scheme = /^[a-z][a-z0-9+.-]*:/i
  return a.replace(scheme, (s) => s.toLowerCase()) === b.replace(scheme, (s) => s.toLowerCase())
}

export class Uploader {
  readonly #storage: ObjectStorage
  readonly #clock: UploadClock
  readonly #random: () => number
  readonly #log: (event: UploadLogEvent) => void
  readonly #policy: RetryPolicy

  constructor(options: UploaderOptions) {
    this.#storage = options.storage
    this.#clock = options.clock ?? systemClock
    this.#random = options.random ?? Math.random
    this.#log = options.log ?? (() => {})
    this.#policy = retryPolicyOf(options.retry)
  }

  /**
   * Puts the segment at `<tableDataLocation>/<partitionPath>/<uuid>.parquet` (streamed), checks
   * the stored size, then puts its bloom-filter sidecar beside it when it has filters. Returns
   * the segment's DataFile with that location and the stored size. Idempotent: a repeat replaces
   * the same objects.
   */
  async upload(segment: ReadySegment, tableDataLocation: string, options: UploadCallOptions = {}): Promise<DataFile> {
    const { signal } = options
    signal?.throwIfAborted()
    const location = dataObjectLocation(tableDataLocation, segment)
    const size = await localFileSize(segment.localPath)
    if (size !== segment.sizeBytes || BigInt(size) !== segment.dataFile.fileSizeInBytes) {
      throw new FloeError('INVARIANT_BROKEN', `segment ${segment.uuid} is ${size} bytes on disk, not as recorded`, {
        details: {
          localPath: segment.localPath,
          onDisk: size,
          sizeBytes: segment.sizeBytes,
          fileSizeInBytes: String(segment.dataFile.fileSizeInBytes),
        },
      })
    }
    // built before the data file goes up, so a segment that cannot yield one fails before any put
    const sidecar =
      segment.bloomFilters.length === 0 ? undefined : await writeBloomSidecar(segment.localPath, segment.bloomFilters)

    await this.#withRetries('data file', location, size, signal, segment.localPath, async () => {
      await this.#storage.putFile(location, segment.localPath, { signal })
      await this.#checkStoredSize(location, size)
    })
    if (sidecar !== undefined) {
      const sidecarLocation = bloomSidecarLocation(location)
      await this.#withRetries('bloom sidecar', sidecarLocation, sidecar.byteLength, signal, undefined, async () => {
        await this.#storage.put(sidecarLocation, sidecar, { signal })
        await this.#checkStoredSize(sidecarLocation, sidecar.byteLength)
      })
    }
    return { ...segment.dataFile, filePath: location, fileSizeInBytes: BigInt(size) }
  }

  /** The cheapest size check ObjectStorage offers: a listing of exactly this object's name. */
  async #checkStoredSize(location: string, expected: number): Promise<void> {
    let stored: number | undefined
    for await (const object of this.#storage.list(location)) {
      if (sameLocation(object.location, location)) stored = object.size
    }
    if (stored !== expected) {
      // retryable: the next attempt puts the whole object again over whatever is there
      throw new FloeError(
        'STORAGE_UNAVAILABLE',
        stored === undefined
          ? `${location} is not listed after its upload`
          : `${location} holds ${stored} bytes after its upload, not ${expected}`,
        { details: { location, expected, stored } },
      )
    }
  }

  async #withRetries(
    object: UploadedObject,
    location: string,
    bytes: number,
    signal: AbortSignal | undefined,
    localPath: string | undefined,
    attemptOnce: () => Promise<void>,
  ): Promise<void> {
    const started = this.#clock.now()
    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted()
      try {
        await attemptOnce()
        this.#log({
          kind: 'uploaded',
          object,
          location,
          bytes,
          attempts: attempt,
          elapsedMs: this.#clock.now() - started,
        })
        return
      } catch (caught) {
        if (signal?.aborted) throw signal.reason
        let error = caught
        // a storage may report a vanished source file as unavailable; it will not come back
        if (localPath !== undefined && isFloeError(error) && error.retryable) {
          error = await localFileSize(localPath).then(
            () => error,
            (local: unknown) => (isFloeError(local, 'STORAGE_NOT_FOUND') ? local : error),
          )
        }
        if (isAbort(error) || !isFloeError(error) || !error.retryable) {
          this.#log({ kind: 'failed', object, location, attempt, error })
          throw error
        }
        const waitMs = backoffMs(this.#policy, attempt, this.#random)
        this.#log({ kind: 'retrying', object, location, attempt, waitMs, error })
        await this.#clock.sleep(waitMs, signal)
      }
    }
  }
}
