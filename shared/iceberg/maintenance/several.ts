// Maintenance of several tables in one run (a routed dataset's ledger and the tables its route
// made): one table after another, each as maintainTable does it alone, so each step of each table
// asserts that table's `main` and a writer's commit between costs a re-plan, never a row. A table
// that fails does not stop the others: its error is kept and the run goes on. An abort stops the
// run between two tables, or inside one as maintainTable stops.
import { formatTableIdentifier, type TableIdentifier } from '../../catalog/index.ts'
import { type MaintainRequest, type MaintenanceReport, maintainTable } from './maintain.ts'

export interface SeveralTablesReport {
  /** Every table's report that finished, added up (sumReports). */
  report: MaintenanceReport
  /** How many tables it maintained, the failed ones included. */
  tables: number
  failed: { table: TableIdentifier; error: unknown }[]
}

export interface SeveralTablesOptions {
  /** maintainTable, unless a test gives another. */
  maintain?: (request: MaintainRequest) => Promise<MaintenanceReport>
  /** Each table's own report, as it finishes. */
  onTable?: (table: TableIdentifier, report: MaintenanceReport) => void
}

export async function maintainTables(
  request: Omit<MaintainRequest, 'table'>,
  tables: readonly TableIdentifier[],
  options: SeveralTablesOptions = {},
): Promise<SeveralTablesReport> {
  const maintain = options.maintain ?? maintainTable
  const reports: MaintenanceReport[] = []
  const failed: SeveralTablesReport['failed'] = []
  for (const table of tables) {
    request.signal?.throwIfAborted()
    try {
      const report = await maintain({ ...request, table })
      options.onTable?.(table, report)
      // a skipped partition says which table it is in
      const name = formatTableIdentifier(table)
      const skipped = report.compaction.skipped.map((s) => ({ ...s, partition: `${name}: ${s.partition}` }))
      reports.push({ ...report, compaction: { ...report.compaction, skipped } })
    } catch (error) {
      if (request.signal?.aborted) throw error
      failed.push({ table, error })
    }
  }
  return { report: sumReports(reports), tables: tables.length, failed }
}

/**
 * Reports of several tables as one: counts and bytes added, lists joined. The orphans' location
 * is empty (several were listed) and no compaction snapshot is named (each table has its own).
 */
export function sumReports(reports: readonly MaintenanceReport[]): MaintenanceReport {
  const sum: MaintenanceReport = {
    compaction: {
      filesBefore: 0,
      bytesBefore: 0n,
      filesAfter: 0,
      bytesAfter: 0n,
      partitionsRewritten: 0,
      filesRewritten: 0,
      filesWritten: 0,
      skipped: [],
      snapshotId: undefined,
    },
    expiry: {
      snapshotsBefore: 0,
      snapshotsAfter: 0,
      expired: [],
      files: { manifestLists: [], manifests: [], dataFiles: [], dataBytes: 0n },
      failedDeletes: 0,
      attempts: 0,
    },
    orphans: {
      location: '',
      listed: 0,
      referenced: 0,
      orphans: [],
      orphanBytes: 0,
      deleted: 0,
      failedDeletes: 0,
      young: 0,
    },
    durationMs: 0,
  }
  const { compaction: c, expiry: e, orphans: o } = sum
  for (const report of reports) {
    const { compaction, expiry, orphans } = report
    c.filesBefore += compaction.filesBefore
    c.bytesBefore += compaction.bytesBefore
    c.filesAfter += compaction.filesAfter
    c.bytesAfter += compaction.bytesAfter
    c.partitionsRewritten += compaction.partitionsRewritten
    c.filesRewritten += compaction.filesRewritten
    c.filesWritten += compaction.filesWritten
    c.skipped.push(...compaction.skipped)
    e.snapshotsBefore += expiry.snapshotsBefore
    e.snapshotsAfter += expiry.snapshotsAfter
    e.expired.push(...expiry.expired)
    e.files.manifestLists.push(...expiry.files.manifestLists)
    e.files.manifests.push(...expiry.files.manifests)
    e.files.dataFiles.push(...expiry.files.dataFiles)
    e.files.dataBytes += expiry.files.dataBytes
    e.failedDeletes += expiry.failedDeletes
    e.attempts += expiry.attempts
    o.listed += orphans.listed
    o.referenced += orphans.referenced
    o.orphans.push(...orphans.orphans)
    o.orphanBytes += orphans.orphanBytes
    o.deleted += orphans.deleted
    o.failedDeletes += orphans.failedDeletes
    o.young += orphans.young
    sum.durationMs += report.durationMs
  }
  if (reports.length === 1) {
    o.location = (reports[0] as MaintenanceReport).orphans.location
    c.snapshotId = (reports[0] as MaintenanceReport).compaction.snapshotId
  }
  return sum
}
