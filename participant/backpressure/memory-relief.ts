// What to do before the worker's open segments reach their memory cap (maxOpenSegmentMemoryBytes)
// and consuming pauses: free memory from the holders that hold the most. Pure: the participant
// hands in what each holder (today a Kafka partition's open segments, whatever groups open
// segments tomorrow) holds, and carries the plan out.
//
// From RELIEF_START_FRACTION of the cap on, holders are taken largest buffered rows first:
// - one whose buffered rows are worth a row group (at least minRowGroupHeldBytes) flushes them as
//   a row group, which frees the rows and keeps the file open;
// - one whose rows are fewer would write a row group too small to be worth its footer metadata
//   and page overhead, so it rotates instead, which frees everything it holds, writer included
//   (a rotation also ends the file, so it is the last resort: taken after every worthwhile flush)
// until the total would be back at RELIEF_TARGET_FRACTION of the cap. The backpressure monitor's
// pause at the cap stays as the backstop, for when nothing can be freed (no rows buffered).

/** Relief starts when the worker's open segments hold this fraction of the cap... */
export const RELIEF_START_FRACTION = 0.8
/** ...and frees until they would hold this fraction. */
export const RELIEF_TARGET_FRACTION = 0.6
/**
 * A row group smaller than this (held in memory, see shared/parquet/memory.ts; about 2,700 rows of
 * 1 KB JSON events, 350 KB of Parquet before compression) is not worth writing: rotate instead.
 */
export const MIN_ROW_GROUP_HELD_BYTES = 1024 * 1024

export interface MemoryHolder<K> {
  readonly key: K
  /** Everything it holds: buffered rows, open writers, metadata of the row groups written. */
  readonly heldBytes: number
  /** What flushing its rows as row groups would free. */
  readonly bufferedHeldBytes: number
}

export interface MemoryReliefLimits {
  capBytes: number
  minRowGroupHeldBytes?: number
}

export interface MemoryReliefPlan<K> {
  /** Flush these holders' buffered rows as row groups, in this order. */
  readonly flush: K[]
  /** Rotate these holders' open segments, in this order. */
  readonly rotate: K[]
}

/** Whether the worker's open segments hold enough of the cap for relief to start. */
export function memoryReliefDue(totalBytes: number, capBytes: number): boolean {
  return totalBytes >= capBytes * RELIEF_START_FRACTION
}

/**
 * `totalBytes` is the worker's total (every dataset's holders), `holders` those this caller can
 * act on. Empty below the start fraction.
 */
export function planMemoryRelief<K>(
  holders: Iterable<MemoryHolder<K>>,
  totalBytes: number,
  limits: MemoryReliefLimits,
): MemoryReliefPlan<K> {
  const plan: MemoryReliefPlan<K> = { flush: [], rotate: [] }
  const { capBytes } = limits
  if (!memoryReliefDue(totalBytes, capBytes)) return plan
  const minRowGroup = limits.minRowGroupHeldBytes ?? MIN_ROW_GROUP_HELD_BYTES
  let excess = totalBytes - capBytes * RELIEF_TARGET_FRACTION
  const byBuffered = [...holders].sort((a, b) => b.bufferedHeldBytes - a.bufferedHeldBytes)
  const small: MemoryHolder<K>[] = []
  for (const holder of byBuffered) {
    if (excess <= 0) return plan
    if (holder.bufferedHeldBytes >= minRowGroup) {
      plan.flush.push(holder.key)
      excess -= holder.bufferedHeldBytes
    } else if (holder.heldBytes > 0) {
      small.push(holder)
    }
  }
  small.sort((a, b) => b.heldBytes - a.heldBytes)
  for (const holder of small) {
    if (excess <= 0) break
    plan.rotate.push(holder.key)
    excess -= holder.heldBytes
  }
  return plan
}
