// The options both WAL layouts (PartitionLog, SharedLog) take alike, and how either refuses a bad
// value: as CONFIG_INVALID, when the log is made, so a wrong limit never reaches a rotation check.
import type { PartitionSpec, Schema } from '../../shared/iceberg/index.ts'
import { FloeError } from '../../shared/index.ts'
import type { SegmentWriterSettings } from './segment-types.ts'
import { type Clock, defaultWalLimits, type WalLimits } from './types.ts'

export interface LogOptions extends SegmentWriterSettings {
  topic: string
  /** The table's schema, with field ids. */
  schema: Schema
  spec: PartitionSpec
  limits?: Partial<WalLimits>
  /** Default performance.now. */
  clock?: Clock
}

export const performanceClock: Clock = { now: () => performance.now() }

/** The limits given over the defaults, every one of them positive. */
export function walLimits(limits: Partial<WalLimits> | undefined): WalLimits {
  const merged = { ...defaultWalLimits, ...limits }
  for (const [name, value] of Object.entries(merged)) {
    if (!(value > 0)) throw configInvalid(`limits.${name} must be positive`, { [name]: value })
  }
  return merged
}

export function configInvalid(message: string, details: Record<string, unknown>): FloeError {
  return new FloeError('CONFIG_INVALID', `WAL: ${message}`, { details })
}
