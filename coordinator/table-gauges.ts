// The table's size gauges (floe_table_data_files, floe_table_average_file_bytes), from the summary
// of main's snapshot: Iceberg keeps running totals there, so no manifest is read. Set whenever the
// coordinator holds fresh metadata (a round's start and commit, after a maintenance run); cleared
// when it stops, so that a worker which no longer coordinates does not export a stale table beside
// the one that does.
import { refSnapshotId, type Snapshot, snapshotById, type TableMetadata } from '../shared/iceberg/metadata/index.ts'
import type { FloeMetrics } from '../shared/telemetry/index.ts'

export interface TableTotals {
  dataFiles: number
  averageFileBytes: number
}

/** A snapshot's totals; undefined when its summary has none (a writer that does not keep them). */
export function tableTotals(snapshot: Pick<Snapshot, 'summary'> | undefined): TableTotals | undefined {
  if (snapshot === undefined) return { dataFiles: 0, averageFileBytes: 0 }
  const files = Number(snapshot.summary['total-data-files'])
  const bytes = Number(snapshot.summary['total-files-size'])
  if (!Number.isFinite(files) || !Number.isFinite(bytes) || files < 0 || bytes < 0) return undefined
  return { dataFiles: files, averageFileBytes: files === 0 ? 0 : bytes / files }
}

export function mainSnapshot(metadata: TableMetadata): Snapshot | undefined {
  const id = refSnapshotId(metadata)
  return id === null ? undefined : snapshotById(metadata, id)
}

export class TableGauges {
  readonly #metrics: FloeMetrics
  readonly #labels: { dataset: string }

  constructor(metrics: FloeMetrics, dataset: string) {
    this.#metrics = metrics
    this.#labels = { dataset }
  }

  /** Main's snapshot as just read or committed; one without totals leaves the gauges as they were. */
  set(snapshot: Pick<Snapshot, 'summary'> | undefined): void {
    const totals = tableTotals(snapshot)
    if (!totals) return
    this.#metrics.tableDataFiles.set(this.#labels, totals.dataFiles)
    this.#metrics.tableAverageFileBytes.set(this.#labels, totals.averageFileBytes)
  }

  clear(): void {
    this.#metrics.tableDataFiles.remove(this.#labels)
    this.#metrics.tableAverageFileBytes.remove(this.#labels)
  }
}
