// What a dataset's partitions hold in their WALs, told to the backpressure monitor (its share of
// open-segment memory and of the upload backlog) and to the gauges.
import type { FloeMetrics } from '../shared/telemetry/index.ts'
import type { PressureSource } from './backpressure/index.ts'
import type { WalHolder } from './partition-slot.ts'
import type { UploadQueue } from './upload/index.ts'

export interface WalGaugeTargets {
  backpressure: PressureSource
  /** Names this dataset's share in the worker's sums. */
  reporter: string
  labels: { dataset: string }
  metrics: FloeMetrics
  uploads: UploadQueue
}

export function reportWalPressure(slots: Iterable<WalHolder>, to: WalGaugeTargets): void {
  let memory = 0
  let ready = 0
  let openFiles = 0
  let readyFiles = 0
  for (const slot of slots) {
    memory += slot.heldBytes
    ready += slot.readyBytes
    openFiles += slot.openSegmentCount
    readyFiles += slot.readySegmentCount
  }
  const { backpressure, reporter, labels, metrics, uploads } = to
  backpressure.setOpenSegmentMemoryBytes(memory, reporter)
  backpressure.setPendingUploadBytes(ready, reporter)
  metrics.walBytes.set({ ...labels, state: 'open' }, memory)
  metrics.walBytes.set({ ...labels, state: 'ready' }, ready)
  metrics.walFiles.set({ ...labels, state: 'open' }, openFiles)
  metrics.walFiles.set({ ...labels, state: 'ready' }, readyFiles)
  metrics.uploadsPending.set(labels, uploads.pendingCount)
  metrics.uploadPendingBytes.set(labels, uploads.pendingBytes)
}
