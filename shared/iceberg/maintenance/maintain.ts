// One maintenance run of one table, the steps in the order that frees the most: compaction first
// (the small files it replaces leave main), then snapshot expiry (the snapshots that still list
// them go, and with them the files only they reached), then orphan cleanup (what no snapshot and
// no metadata file references, once old). Each step commits on its own and asserts `main`, so a
// writer committing between them, or during one, costs a re-plan and never a row.
import type { Catalog, TableIdentifier } from '../../catalog/index.ts'
import type { ObjectStorage } from '../../storage/index.ts'
import type { TableMetadata } from '../metadata/index.ts'
import { type CompactionProgress, type CompactResult, compactTable } from './compact.ts'
import type { CompactionPolicy } from './compaction-plan.ts'
import { type ExpireResult, expireSnapshots } from './expire.ts'
import type { SnapshotRetention } from './expiry-plan.ts'
import { type OrphanResult, removeOrphanFiles } from './orphans.ts'

export interface MaintenancePolicy {
  compaction: CompactionPolicy
  retention: SnapshotRetention
  /** An object under the table's location that nothing references is deleted once this old. */
  orphanAgeMs: number
}

/** The operator's settings (the `maintenance` section of the configuration), in its units. */
export interface MaintenanceSettings {
  maxSnapshotAgeHours: number
  minSnapshotsToKeep: number
  targetFileSizeBytes: number
  minInputFiles: number
  orphanAgeHours: number
}

export function maintenancePolicyOf(settings: MaintenanceSettings): MaintenancePolicy {
  return {
    compaction: { targetFileSizeBytes: settings.targetFileSizeBytes, minInputFiles: settings.minInputFiles },
    retention: {
      maxSnapshotAgeMs: settings.maxSnapshotAgeHours * 3_600_000,
      minSnapshotsToKeep: settings.minSnapshotsToKeep,
    },
    orphanAgeMs: settings.orphanAgeHours * 3_600_000,
  }
}

export interface MaintainRequest {
  catalog: Catalog
  storage: ObjectStorage
  table: TableIdentifier
  policy: MaintenancePolicy
  /** Snapshots expiry keeps whatever their age, chosen on each fresh read of the table. */
  keep?: (metadata: TableMetadata) => ReadonlySet<bigint>
  /** Plan and count; commit, write and delete nothing. */
  dryRun?: boolean
  now?: () => number
  signal?: AbortSignal
  /** Where compaction writes files before their upload. */
  workDirectory?: string
  onProgress?: (progress: CompactionProgress) => void
  /** Objects orphan cleanup keeps while the file beside them is referenced (a writer's sidecar). */
  companionsOf?: (location: string) => readonly string[]
}

export interface MaintenanceReport {
  compaction: CompactResult
  expiry: ExpireResult
  orphans: OrphanResult
  durationMs: number
  /** How many tables the report adds up, when a run maintained several (several.ts). */
  tables?: number
}

export async function maintainTable(request: MaintainRequest): Promise<MaintenanceReport> {
  const started = performance.now()
  request.signal?.throwIfAborted()
  const { catalog, storage, table, policy, keep, dryRun, now } = request
  const compaction = await compactTable({
    catalog,
    storage,
    table,
    policy: policy.compaction,
    ...(dryRun ? { dryRun } : {}),
    ...(request.workDirectory ? { workDirectory: request.workDirectory } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.onProgress ? { onProgress: request.onProgress } : {}),
  })
  request.signal?.throwIfAborted()
  const expiry = await expireSnapshots({
    catalog,
    storage,
    table,
    retention: policy.retention,
    ...(keep ? { keep } : {}),
    ...(dryRun ? { dryRun } : {}),
    ...(now ? { now } : {}),
  })
  request.signal?.throwIfAborted()
  const orphans = await removeOrphanFiles({
    catalog,
    storage,
    table,
    olderThanMs: policy.orphanAgeMs,
    ...(dryRun ? { dryRun } : {}),
    ...(now ? { now } : {}),
    ...(request.companionsOf ? { companionsOf: request.companionsOf } : {}),
  })
  return { compaction, expiry, orphans, durationMs: performance.now() - started }
}
