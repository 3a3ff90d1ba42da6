// The snapshot summary of an append (spec "Snapshot summary" / Java's SnapshotSummary): what the
// snapshot added, and the table's running totals when the parent carried them. Pure.
import type { DataFile } from '../types.ts'

const totals = [
  ['total-records', 'added-records'],
  ['total-files-size', 'added-files-size'],
  ['total-data-files', 'added-data-files'],
  ['total-delete-files', undefined],
  ['total-position-deletes', undefined],
  ['total-equality-deletes', undefined],
] as const

function partitionKey(file: DataFile): string {
  return `${file.specId}:${JSON.stringify(file.partition, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))}`
}

/**
 * The summary properties of an append of `files` on top of a parent whose summary is
 * `parentSummary` (undefined for the table's first snapshot). Totals are carried only when the
 * parent had every one of them: a total we cannot know is left out rather than guessed, as Java
 * does for snapshots of writers that did not keep totals.
 */
export function appendSummary(
  files: readonly DataFile[],
  parentSummary: Readonly<Record<string, string>> | undefined,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  let records = 0n
  let size = 0n
  const partitions = new Set<string>()
  for (const file of files) {
    records += file.recordCount
    size += file.fileSizeInBytes
    partitions.add(partitionKey(file))
  }
  const added: Record<string, bigint> = {
    'added-data-files': BigInt(files.length),
    'added-records': records,
    'added-files-size': size,
  }
  const summary: Record<string, string> = {
    'added-data-files': String(files.length),
    'added-records': String(records),
    'added-files-size': String(size),
    'changed-partition-count': String(partitions.size),
  }
  const parentHasTotals = parentSummary === undefined || totals.every(([key]) => parentSummary[key] !== undefined)
  if (parentHasTotals) {
    for (const [total, addedKey] of totals) {
      const before = parentSummary === undefined ? 0n : BigInt(parentSummary[total] ?? '0')
      summary[total] = String(before + (addedKey ? (added[addedKey] ?? 0n) : 0n))
    }
  }
  return { ...summary, ...extra }
}
