// The worker's backpressure: when to stop consuming so that a storage or catalog outage turns into
// consumer lag instead of a full disk or an out-of-memory crash (docs/design.md, "The record path").
//
// Three inputs, each with its own latch (pause at the limit, resume only well below it, so a
// value hovering at the limit does not flap the consumers):
//   disk            the WAL volume's used %, measured every 5 s: pause at diskHighWatermarkPct,
//                   resume at 5 points below it (80 -> 75)
//   upload-backlog  bytes of ready segments waiting for upload (the uploader reports them):
//                   pause at maxPendingUploadBytes, resume below 95% of it
//   memory          bytes held by open segments (the WAL reports them): pause at
//                   maxOpenSegmentMemoryBytes, resume below 95% of it. Participants free memory
//                   before it comes to that (memory-relief.ts); the pause is the backstop
// The worker is paused while any latch is set.
import { EventEmitter } from 'node:events'
import { FloeError } from '../../shared/index.ts'
import type { DiskUsageProbe } from './disk.ts'

/** Why the worker is paused; also the metric label. Always listed in this order. */
export const backpressureReasons = ['disk', 'upload-backlog', 'memory'] as const
export type BackpressureReason = (typeof backpressureReasons)[number]

/** The `ingestion.wal` settings the monitor enforces. */
export interface BackpressureLimits {
  diskHighWatermarkPct: number
  maxPendingUploadBytes: number
  maxOpenSegmentMemoryBytes: number
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
}

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

export const systemClock: Clock = { now: () => Date.now() }
export const systemTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
}

export interface BackpressureOptions {
  limits: BackpressureLimits
  /** The WAL volume's used % (walDiskUsage, or a fake in tests). */
  measureDisk: DiskUsageProbe
  clock: Clock
  timers: Timers
  /** Default 5000. */
  diskCheckIntervalMs?: number
}

export interface BackpressureEvents {
  /** Running -> paused, with why. */
  pause: [reasons: readonly BackpressureReason[]]
  /** Paused -> running. */
  resume: []
  /** The set of reasons changed (every pause and resume, and e.g. ['disk'] -> ['disk', 'memory']). */
  change: [reasons: readonly BackpressureReason[]]
  /** A disk measurement failed; the last known percentage stays in force until one succeeds. */
  'disk-check-failed': [error: unknown]
}

/** Points below the disk watermark at which the disk latch releases. */
export const DISK_RESUME_POINTS = 5
/** Fraction of a byte limit below which its latch releases. */
export const BYTES_RESUME_FRACTION = 0.95
export const DEFAULT_DISK_CHECK_INTERVAL_MS = 5000

const none: readonly BackpressureReason[] = Object.freeze([])

export class Backpressure extends EventEmitter<BackpressureEvents> {
  readonly #limits: BackpressureLimits
  readonly #measureDisk: DiskUsageProbe
  readonly #clock: Clock
  readonly #timers: Timers
  readonly #intervalMs: number
  #diskUsedPct = 0
  // By reporter: every participant of the worker (one per dataset) reports its own share, and the
  // limits apply to the sum.
  readonly #pendingUploadBytes = new Map<string, number>()
  readonly #openSegmentMemoryBytes = new Map<string, number>()
  #disk = false
  #uploadBacklog = false
  #memory = false
  #reasons: readonly BackpressureReason[] = none
  #pausedSince: number | undefined
  #timer: unknown
  #running = false

  constructor(options: BackpressureOptions) {
    super()
    const { diskHighWatermarkPct, maxPendingUploadBytes, maxOpenSegmentMemoryBytes } = options.limits
    if (!(diskHighWatermarkPct > DISK_RESUME_POINTS && diskHighWatermarkPct <= 100)) {
      throw new FloeError(
        'CONFIG_INVALID',
        `diskHighWatermarkPct must be above 5 and at most 100, got ${diskHighWatermarkPct}`,
      )
    }
    if (!(maxPendingUploadBytes > 0) || !(maxOpenSegmentMemoryBytes > 0)) {
      throw new FloeError('CONFIG_INVALID', 'maxPendingUploadBytes and maxOpenSegmentMemoryBytes must be positive')
    }
    this.#limits = { ...options.limits }
    this.#measureDisk = options.measureDisk
    this.#clock = options.clock
    this.#timers = options.timers
    this.#intervalMs = options.diskCheckIntervalMs ?? DEFAULT_DISK_CHECK_INTERVAL_MS
  }

  /** Whether consumers should be paused now. */
  get paused(): boolean {
    return this.#reasons.length > 0
  }

  /** Why, in backpressureReasons order; empty while running. */
  get reasons(): readonly BackpressureReason[] {
    return this.#reasons
  }

  /** When the current pause began (clock ms), or undefined while running. */
  get pausedSince(): number | undefined {
    return this.#pausedSince
  }

  /** The last measured used % of the WAL volume (0 before the first measurement). */
  get diskUsedPct(): number {
    return this.#diskUsedPct
  }

  /** Bytes of ready segments not yet uploaded, summed over every reporter. */
  get pendingUploadBytes(): number {
    return sum(this.#pendingUploadBytes)
  }

  /** Bytes open segments hold in memory, summed over every reporter. */
  get openSegmentMemoryBytes(): number {
    return sum(this.#openSegmentMemoryBytes)
  }

  /** The cap on what open segments hold. */
  get maxOpenSegmentMemoryBytes(): number {
    return this.#limits.maxOpenSegmentMemoryBytes
  }

  /** Bytes of ready segments not yet uploaded: `reporter`'s total (e.g. one dataset's participant). */
  setPendingUploadBytes(bytes: number, reporter = ''): void {
    this.#pendingUploadBytes.set(reporter, checkedBytes(bytes, 'pending upload bytes'))
    this.#evaluate()
  }

  /** Bytes open segments hold in memory: `reporter`'s total. */
  setOpenSegmentMemoryBytes(bytes: number, reporter = ''): void {
    this.#openSegmentMemoryBytes.set(reporter, checkedBytes(bytes, 'open segment memory bytes'))
    this.#evaluate()
  }

  /** Measures the disk now and every interval after the previous measurement ends. */
  start(): void {
    if (this.#running) return
    this.#running = true
    void this.#tick()
  }

  /** Stops measuring; a measurement in flight still updates the state but schedules no next one. */
  stop(): void {
    this.#running = false
    if (this.#timer !== undefined) this.#timers.clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** One disk measurement, applied. Resolves false (after emitting disk-check-failed) if it failed. */
  async checkDisk(): Promise<boolean> {
    let pct: number
    try {
      pct = await this.#measureDisk()
      if (!Number.isFinite(pct)) throw new FloeError('INVARIANT_BROKEN', `disk probe returned ${pct}`)
    } catch (error) {
      this.emit('disk-check-failed', error)
      return false
    }
    this.#diskUsedPct = pct
    this.#evaluate()
    return true
  }

  async #tick(): Promise<void> {
    await this.checkDisk()
    // Scheduled after the measurement ends, so a slow filesystem never stacks measurements.
    if (this.#running) this.#timer = this.#timers.setTimeout(() => void this.#tick(), this.#intervalMs)
  }

  #evaluate(): void {
    const { diskHighWatermarkPct, maxPendingUploadBytes, maxOpenSegmentMemoryBytes } = this.#limits
    this.#disk = this.#disk
      ? this.#diskUsedPct > diskHighWatermarkPct - DISK_RESUME_POINTS
      : this.#diskUsedPct >= diskHighWatermarkPct
    const pendingUploadBytes = this.pendingUploadBytes
    const openSegmentMemoryBytes = this.openSegmentMemoryBytes
    this.#uploadBacklog = this.#uploadBacklog
      ? pendingUploadBytes >= maxPendingUploadBytes * BYTES_RESUME_FRACTION
      : pendingUploadBytes >= maxPendingUploadBytes
    this.#memory = this.#memory
      ? openSegmentMemoryBytes >= maxOpenSegmentMemoryBytes * BYTES_RESUME_FRACTION
      : openSegmentMemoryBytes >= maxOpenSegmentMemoryBytes

    const previous = this.#reasons
    if (
      this.#disk === previous.includes('disk') &&
      this.#uploadBacklog === previous.includes('upload-backlog') &&
      this.#memory === previous.includes('memory')
    ) {
      return
    }
    const reasons: BackpressureReason[] = []
    if (this.#disk) reasons.push('disk')
    if (this.#uploadBacklog) reasons.push('upload-backlog')
    if (this.#memory) reasons.push('memory')
    this.#reasons = reasons.length ? Object.freeze(reasons) : none
    if (previous.length === 0) {
      this.#pausedSince = this.#clock.now()
      this.emit('change', this.#reasons)
      this.emit('pause', this.#reasons)
    } else if (reasons.length === 0) {
      this.#pausedSince = undefined
      this.emit('change', this.#reasons)
      this.emit('resume')
    } else {
      this.emit('change', this.#reasons)
    }
  }
}

function sum(values: ReadonlyMap<string, number>): number {
  let total = 0
  for (const value of values.values()) total += value
  return total
}

function checkedBytes(bytes: number, what: string): number {
  if (Number.isFinite(bytes) && bytes >= 0) return bytes
  throw new FloeError('INVARIANT_BROKEN', `${what} must be a non-negative number, got ${bytes}`)
}
