// Table maintenance that runs beside a writer: snapshot expiry with the deletion of what only the
// expired snapshots reached. Files not re-exported here are internal to shared/iceberg/maintenance.
export {
  type ExpireRequest,
  type ExpireResult,
  expireSnapshots,
  type UnreachableFiles,
  unreachableFiles,
} from './expire.ts'
export { type ExpiryPlan, planSnapshotExpiry, type SnapshotRetention } from './expiry-plan.ts'
