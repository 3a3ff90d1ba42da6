// The participant's backpressure: the WAL volume's disk watermark, the bytes
// waiting for upload and the memory of open segments -> pause / resume of the worker's consumers,
// with hysteresis. Files not re-exported here are internal.
export { DatasetBackpressure, type DatasetBackpressureOptions, type PressureSource } from './dataset.ts'
export { bytesUnder, type DiskUsageProbe, type WalVolumeOptions, walDiskUsage } from './disk.ts'
export {
  type MemoryHolder,
  type MemoryReliefLimits,
  type MemoryReliefPlan,
  MIN_ROW_GROUP_HELD_BYTES,
  memoryReliefDue,
  planMemoryRelief,
  RELIEF_START_FRACTION,
  RELIEF_TARGET_FRACTION,
} from './memory-relief.ts'
export {
  Backpressure,
  type BackpressureEvents,
  type BackpressureLimits,
  type BackpressureOptions,
  type BackpressureReason,
  BYTES_RESUME_FRACTION,
  backpressureReasons,
  type Clock,
  DEFAULT_DISK_CHECK_INTERVAL_MS,
  DISK_RESUME_POINTS,
  systemClock,
  systemTimers,
  type Timers,
} from './monitor.ts'
