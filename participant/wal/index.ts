// Public surface of the participant's write-ahead log: one PartitionLog per assigned
// Kafka partition (append, rotation triggers, rotate, upload bookkeeping, deletes, memory and
// disk accounting), the recovery of a partition's WAL folder at start, and the file names; and
// the shared-segment layout (docs/architecture.md, "Shared segments"): one SharedLog per dataset,
// its recovery, and the rotation walk that recovery, ACKs, rejections and revocations apply.
// Files not re-exported here are internal: open-segments.ts (routing rows to one segment per
// Iceberg partition, and per table when the dataset routes, under the table they follow, with
// segment-types.ts for what they are made of, whose WalRoute type alone is public, and
// table-runs.ts for a batch grouped by table), log-queues.ts (what both layouts run on; log-options.ts gives only the
// LogOptions type), make-ready.ts and shared-cut.ts (a rotation's durable steps in each layout),
// ready-rotations.ts (a SharedLog's ready files), table-claims.ts (a routed log's claims per table
// and skip floors), durable.ts (fsync, atomic replace, ordered deletes; only its listWalDirectory
// is public), sidecar.ts (the ready_*.json codec), test-support.ts and testdata/ (tests only), and
// wal.bench.ts (a benchmark, outside `npm test`).

export { listWalDirectory } from './durable.ts'
export { recordJump } from './jump-marker.ts'
export type { LogOptions } from './log-options.ts'
export {
  activeFileName,
  jumpFileName,
  parseWalFileName,
  partitionLogDirectory,
  partitionOfFolder,
  readyFileName,
  type WalFileKind,
  type WalFileName,
} from './names.ts'
export { PartitionLog, type PartitionLogOptions, type PartitionLogState } from './partition-log.ts'
export {
  pruneBehindTable,
  type RecoveredDeletion,
  type RecoveredDeletionReason,
  type RecoveredPartition,
  type RecoverPartitionOptions,
  recoverPartition,
} from './recovery.ts'
export {
  type KeptRotation,
  planRecovery,
  type RecoveryDeletion,
  type RecoveryDeletionReason,
  type RecoveryPlan,
  type RecoveryScope,
} from './recovery-plan.ts'
export {
  decodeRotationManifest,
  encodeRotationManifest,
  type RotationManifest,
  rotationFooter,
  type SharedRotation,
  type SharedSegment,
  type TableClaims,
} from './rotation-manifest.ts'
export {
  partitionKey,
  partitionOfKey,
  recordedJumps,
  type WalkDropReason,
  type WalkInput,
  type WalkRange,
  type WalkResult,
  type WalkRotation,
  walkRotations,
} from './rotation-walk.ts'
export type { WalRoute } from './segment-types.ts'
export {
  type FetchedRows,
  SharedLog,
  type SharedLogOptions,
  type SharedLogState,
  type SharedWalkInput,
  type SharedWalkResult,
} from './shared-log.ts'
export {
  parseSharedFileName,
  rotationManifestName,
  type SharedFileName,
  sharedActiveName,
  sharedLogDirectory,
} from './shared-names.ts'
export {
  type RecoveredSharedLog,
  type RecoverSharedOptions,
  recoverSharedLog,
  type SharedDeletion,
  type SharedDeletionReason,
} from './shared-recovery.ts'
export {
  type Clock,
  defaultWalLimits,
  type ReadySegment,
  type Rotation,
  type RotationReason,
  type WalLimits,
} from './types.ts'
