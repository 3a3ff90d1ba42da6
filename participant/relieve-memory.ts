// Near the worker's cap on open-segment memory: flush the largest buffers as row groups on disk
// (or rotate what is too small for a row group) rather than pause until the next rotation (the
// round's END may be a commit interval away). Decided on the worker's total: with one dataset
// per participant each frees from its own partitions, the largest first.
import type { FloeMetrics } from '../shared/telemetry/index.ts'
import { memoryReliefDue, type PressureSource, planMemoryRelief } from './backpressure/index.ts'
import type { WalHolder } from './partition-slot.ts'

/** Relieves memory when due; true when it flushed or rotated something. */
export async function relieveMemory(
  slots: Iterable<WalHolder>,
  backpressure: PressureSource,
  metrics: FloeMetrics,
  labels: { dataset: string },
): Promise<boolean> {
  // Called after every poll: below the start of relief, nothing to plan, and no pass over the slots.
  if (!memoryReliefDue(backpressure.openSegmentMemoryBytes, backpressure.maxOpenSegmentMemoryBytes)) return false
  const plan = planMemoryRelief(
    [...slots].map((slot) => ({ key: slot, heldBytes: slot.heldBytes, bufferedHeldBytes: slot.bufferedHeldBytes })),
    backpressure.openSegmentMemoryBytes,
    { capBytes: backpressure.maxOpenSegmentMemoryBytes },
  )
  if (plan.flush.length === 0 && plan.rotate.length === 0) return false
  for (const slot of plan.flush) await slot.flushRowGroups()
  for (const slot of plan.rotate) await slot.rotateForMemory()
  metrics.memoryReliefs.inc({ ...labels, action: 'flush' }, plan.flush.length)
  metrics.memoryReliefs.inc({ ...labels, action: 'rotate' }, plan.rotate.length)
  return true
}
