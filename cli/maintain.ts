// `floe maintain`: table maintenance by hand, once, for each dataset's table: compaction of small
// files into files of `maintenance.targetFileSizeBytes` (one replace commit), then expiry of the
// snapshots older than `maintenance.maxSnapshotAgeHours` beyond `maintenance.minSnapshotsToKeep`,
// with the files only they reached. The newest snapshot carrying each group's progress marker is
// kept whatever its age (docs/design.md invariant 8), and the table's properties are never
// touched, so Floe's progress stays where its own snapshots put it. Last, the objects under the
// table's location that nothing references and that are older than `maintenance.orphanAgeHours`
// are deleted; a bloom-filter sidecar stays while its data file is referenced. Safe beside running
// workers: every step asserts `main` and plans again when a round commits in between, and an
// upload awaiting its round's commit is younger than the orphan age. Progress goes to stderr as it
// happens, one line per dataset and step to stdout at the end. A routed dataset's tables (those
// its route made and committed to, routedTablesOf) are maintained after its ledger, the same way,
// with one line per table and step; one failing is reported and the others go on.
import { parseArgs } from 'node:util'
import { bloomSidecarLocation } from '../participant/upload/index.ts'
import { formatTableIdentifier, openCatalog } from '../shared/catalog/index.ts'
import { catalogLabel, type DatasetConfig, type FloeConfig } from '../shared/config/index.ts'
import {
  type CompactionProgress,
  type CompactResult,
  type ExpireResult,
  type MaintenanceReport,
  maintainTable,
  maintainTables,
  maintenancePolicyOf,
  type OrphanResult,
} from '../shared/iceberg/maintenance/index.ts'
import { isFloeError } from '../shared/index.ts'
import { markerSnapshots } from '../shared/progress/index.ts'
import { catalogConfigOf, configFor, datasetGroup, type Output, reach, reasonOf, storageOf } from './servers.ts'
import { routedTablesOf, tableIdentifier } from './tables.ts'

export interface MaintainArguments {
  configPath: string | undefined
  /** One dataset; all of them when absent. */
  dataset: string | undefined
  dryRun: boolean
}

export const maintainUsage = 'usage: floe maintain --config FILE [--dataset NAME] [--dry-run]'

/** The arguments after `maintain`, or the one line that says what is wrong with them. Strict: it deletes files. */
export function parseMaintainArguments(argv: readonly string[]): MaintainArguments | { error: string } {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        config: { type: 'string', short: 'c' },
        dataset: { type: 'string' },
        'dry-run': { type: 'boolean' },
      },
    })
    const extra = positionals.filter((p, i) => !(i === 0 && p === 'maintain'))
    if (extra.length > 0) return { error: `unexpected argument '${extra[0]}'` }
    return { configPath: values.config, dataset: values.dataset, dryRun: values['dry-run'] === true }
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) }
  }
}

export interface MaintainIo {
  stdout?: Output
  stderr?: Output
  timeoutMs?: number
}

export async function runMaintain(args: MaintainArguments | { error: string }, io: MaintainIo = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout
  const stderr = io.stderr ?? process.stderr
  if ('error' in args) {
    stderr.write(`floe maintain: ${args.error}\n${maintainUsage}\n`)
    return 2
  }
  const config = configFor('maintain', args.configPath, stderr)
  if (!config) return 2
  const datasets = args.dataset === undefined ? config.datasets : config.datasets.filter((d) => d.name === args.dataset)
  if (datasets.length === 0) {
    const names = config.datasets.map((d) => d.name).join(', ')
    stderr.write(`floe maintain: no dataset '${args.dataset}' in ${config.source} (it has: ${names})\n`)
    return 2
  }
  let code = 0
  for (const dataset of datasets) {
    const progress = (step: CompactionProgress) =>
      stderr.write(`floe maintain: dataset ${dataset.name}: ${describeProgress(step)}\n`)
    try {
      const done = await maintain(config, dataset, args.dryRun, io.timeoutMs ?? 30_000, progress)
      stdout.write(`${done.lines.join('\n')}\n`)
      for (const failure of done.failed) stderr.write(`floe maintain: dataset ${dataset.name}: ${failure}\n`)
      if (done.failed.length > 0) code = 1
    } catch (error) {
      stderr.write(`floe maintain: dataset ${dataset.name}: ${isFloeError(error) ? error.message : reasonOf(error)}\n`)
      code = 1
    }
  }
  return code
}

async function maintain(
  config: FloeConfig,
  dataset: DatasetConfig,
  dryRun: boolean,
  timeoutMs: number,
  onProgress: (step: CompactionProgress) => void,
): Promise<{ lines: string[]; failed: string[] }> {
  const storage = storageOf(config, dataset)
  const catalogName = `catalog ${catalogLabel(config.catalog)}`
  const catalog = await reach(catalogName, 'CATALOG_UNAVAILABLE', timeoutMs, () =>
    openCatalog(catalogConfigOf(config, storage)),
  )
  try {
    const table = tableIdentifier(dataset)
    if (!(await reach(catalogName, 'CATALOG_UNAVAILABLE', timeoutMs, () => catalog.tableExists(table)))) {
      return {
        lines: [`dataset ${dataset.name}: table ${dataset.table} does not exist yet, nothing to maintain`],
        failed: [],
      }
    }
    const request = {
      catalog,
      storage,
      policy: maintenancePolicyOf(config.maintenance),
      keep: markerSnapshots,
      dryRun,
      onProgress,
      // Iceberg's metadata does not name a data file's sidecar; it goes once its file is unreferenced.
      companionsOf: (location: string) => [bloomSidecarLocation(location)],
    }
    const describe = (name: string, report: MaintenanceReport) => [
      describeCompaction(dataset, report.compaction, dryRun, name),
      describeExpiry(dataset, report.expiry, dryRun, name),
      describeOrphans(dataset, report.orphans, dryRun, config.maintenance.orphanAgeHours, name),
    ]
    const lines = describe(dataset.table, await maintainTable({ ...request, table }))
    if (dataset.route === undefined) return { lines, failed: [] }
    const tables = await routedTablesOf(catalog, dataset, datasetGroup(config, dataset.name))
    const routed = await maintainTables(request, tables, {
      onTable: (one, report) => lines.push(...describe(formatTableIdentifier(one), report)),
    })
    const failed = routed.failed.map(
      ({ table: one, error }) =>
        `table ${formatTableIdentifier(one)}: ${isFloeError(error) ? error.message : reasonOf(error)}`,
    )
    lines.push(
      `dataset ${dataset.name}: ${routed.tables - failed.length} of ${routed.tables} routed table(s) maintained`,
    )
    return { lines, failed }
  } finally {
    await catalog.close().catch(() => {})
  }
}

function describeProgress(step: CompactionProgress): string {
  switch (step.step) {
    case 'rewriting':
      return `partition ${step.partition}: rewriting ${step.files} file(s) of ${step.bytes} bytes`
    case 'written':
      return `partition ${step.partition}: wrote ${step.files} file(s) of ${step.bytes} bytes`
    case 'committing':
      return `committing the rewrite of ${step.partitions} partition(s) into ${step.files} file(s)`
  }
}

/** The compaction's line: files rewritten and written, and the table's live files before and after. */
export function describeCompaction(
  dataset: DatasetConfig,
  result: CompactResult,
  dryRun: boolean,
  table = dataset.table,
): string {
  const head = `dataset ${dataset.name} (table ${table}):`
  const skipped = result.skipped.map(
    (s) => `; skipped ${s.partition === '*' ? 'all' : `partition ${s.partition}`}: ${s.reason}`,
  )
  const live = `live data files ${result.filesBefore} -> ${result.filesAfter}, ${result.bytesBefore} -> ${result.bytesAfter} bytes`
  if (result.filesRewritten === 0)
    return `${head} ${result.filesBefore} live data file(s), none to compact${skipped.join('')}`
  const what = `${result.filesRewritten} file(s) of ${result.partitionsRewritten} partition(s) into ${result.filesWritten}`
  if (dryRun) return `${head} dry run: would compact ${what} (estimated); ${live}${skipped.join('')}`
  return `${head} compacted ${what}; ${live}${skipped.join('')}`
}

/** One line per dataset: the snapshots before and after, and the files deleted. */
export function describeExpiry(
  dataset: DatasetConfig,
  result: ExpireResult,
  dryRun: boolean,
  table = dataset.table,
): string {
  const { files } = result
  const head = `dataset ${dataset.name} (table ${table}):`
  if (result.expired.length === 0) return `${head} ${result.snapshotsBefore} snapshot(s), none to expire`
  const deleted =
    `${files.manifestLists.length} manifest list(s), ${files.manifests.length} manifest(s), ` +
    `${files.dataFiles.length} data file(s) of ${files.dataBytes} bytes`
  if (dryRun) {
    return `${head} dry run: would expire ${result.expired.length} of ${result.snapshotsBefore} snapshot(s) and delete ${deleted}`
  }
  const failed = result.failedDeletes > 0 ? `; ${result.failedDeletes} deletion(s) failed (orphans, never read)` : ''
  return `${head} expired ${result.expired.length} snapshot(s), ${result.snapshotsBefore} -> ${result.snapshotsAfter}; deleted ${deleted}${failed}`
}

/** The orphan cleanup's line: what it deleted, and what it listed, found referenced and kept for being young. */
export function describeOrphans(
  dataset: DatasetConfig,
  result: OrphanResult,
  dryRun: boolean,
  ageHours: number,
  table = dataset.table,
): string {
  const head = `dataset ${dataset.name} (table ${table}): orphans:`
  const counts = `(of ${result.listed} listed, ${result.referenced} referenced, ${result.young} younger than ${ageHours} h kept)`
  const found = result.orphans.length
  const bytes = `${result.orphanBytes} bytes`
  if (found === 0) return `${head} none to delete ${counts}`
  if (dryRun) return `${head} dry run: would delete ${found} file(s) of ${bytes} ${counts}`
  if (result.deleted === found) return `${head} ${found} file(s) of ${bytes} deleted ${counts}`
  const failed =
    result.failedDeletes > 0 ? `; ${result.failedDeletes} deletion(s) failed, tried again on the next run` : ''
  return `${head} ${result.deleted} of ${found} file(s) of ${bytes} deleted ${counts}${failed}`
}
