// Table maintenance that runs beside a writer: compaction of small files, snapshot expiry with the
// deletion of what only the expired snapshots reached, orphan cleanup, and one run of all three,
// of one table or of several.
// Files not re-exported here are internal to shared/iceberg/maintenance.
export { type CompactionProgress, type CompactRequest, type CompactResult, compactTable } from './compact.ts'
export { type CompactionGroup, type CompactionPlan, type CompactionPolicy, planCompaction } from './compaction-plan.ts'
export {
  type ExpireRequest,
  type ExpireResult,
  expireSnapshots,
  type UnreachableFiles,
  unreachableFiles,
} from './expire.ts'
export { type ExpiryPlan, planSnapshotExpiry, type SnapshotRetention } from './expiry-plan.ts'
export {
  type MaintainRequest,
  type MaintenancePolicy,
  type MaintenanceReport,
  type MaintenanceSettings,
  maintainTable,
  maintenancePolicyOf,
} from './maintain.ts'
export { type OrphanRequest, type OrphanResult, removeOrphanFiles } from './orphans.ts'
export { maintainTables, type SeveralTablesReport, sumReports } from './several.ts'
