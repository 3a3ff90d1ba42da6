// Public surface of the participant's write-ahead log: one PartitionLog per assigned
// Kafka partition (append, rotation triggers, rotate, upload bookkeeping, deletes, memory and
// disk accounting), the recovery of a partition's WAL folder at start, and the file names.
// Files not re-exported here are internal: open-segments.ts (routing rows to one segment per
// Iceberg partition), make-ready.ts (a rotation's durable steps), durable.ts (fsync, atomic
// replace, ordered deletes), sidecar.ts (the ready_*.json codec), test-support.ts and testdata/
// (tests only), and wal.bench.ts (a benchmark, outside `npm test`).
export {
  activeFileName,
  parseWalFileName,
  partitionLogDirectory,
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
  type Clock,
  defaultWalLimits,
  type ReadySegment,
  type Rotation,
  type RotationReason,
  type WalLimits,
} from './types.ts'
