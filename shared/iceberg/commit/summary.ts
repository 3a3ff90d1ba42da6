// The snapshot summary of an append or a replace (spec "Snapshot summary" / Java's
// SnapshotSummary): what the snapshot added and removed, and the table's running totals when the
// parent carried them. Pure.
import type { DataFile } from '../types.ts'

const totals = [
  ['total-records', 'added-records'],
  ['total-files-size', 'added-files-size'],
  ['total-data-files', 'added-data-files'],
  ['total-delete-files', undefined],
  ['total-position-deletes', undefined],
  ['total-equality-deletes', undefined],
] as const

/** A file's partition, spec and values, as one string: files with the same key share a partition. */
export function partitionKey(file: Pick<DataFile, 'specId' | 'partition'>): string {
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
  const added = countsOf(files)
  const summary: Record<string, string> = {
    'added-data-files': String(files.length),
    'added-records': String(added['added-records']),
    'added-files-size': String(added['added-files-size']),
    'changed-partition-count': String(new Set(files.map(partitionKey)).size),
  }
  return { ...summary, ...totalsAfter(parentSummary, added), ...extra }
}

type FileCounts = Readonly<Record<string, bigint>>

/** The running totals after a change, or none when the parent did not keep every one of them. */
function totalsAfter(
  parentSummary: Readonly<Record<string, string>> | undefined,
  added: FileCounts,
  removed: FileCounts = {},
): Record<string, string> {
  const out: Record<string, string> = {}
  const parentHasTotals = parentSummary === undefined || totals.every(([key]) => parentSummary[key] !== undefined)
  if (!parentHasTotals) return out
  for (const [total, addedKey] of totals) {
    const before = parentSummary === undefined ? 0n : BigInt(parentSummary[total] ?? '0')
    const change = addedKey ? (added[addedKey] ?? 0n) - (removed[addedKey] ?? 0n) : 0n
    out[total] = String(before + change)
  }
  return out
}

function countsOf(files: readonly Pick<DataFile, 'recordCount' | 'fileSizeInBytes'>[]): FileCounts {
  let records = 0n
  let size = 0n
  for (const file of files) {
    records += file.recordCount
    size += file.fileSizeInBytes
  }
  return { 'added-data-files': BigInt(files.length), 'added-records': records, 'added-files-size': size }
}

/**
 * The summary of a replace that swaps `removed` for `added` (a compaction): the same rows in
 * other files, so total-records stays and the file totals move by the difference.
 */
export function replaceSummary(
  added: readonly DataFile[],
  removed: readonly Pick<DataFile, 'recordCount' | 'fileSizeInBytes' | 'specId' | 'partition'>[],
  parentSummary: Readonly<Record<string, string>> | undefined,
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const addedCounts = countsOf(added)
  const removedCounts = countsOf(removed)
  const partitions = new Set([...added, ...removed].map(partitionKey))
  return {
    'added-data-files': String(addedCounts['added-data-files']),
    'deleted-data-files': String(removedCounts['added-data-files']),
    'added-records': String(addedCounts['added-records']),
    'deleted-records': String(removedCounts['added-records']),
    'added-files-size': String(addedCounts['added-files-size']),
    'removed-files-size': String(removedCounts['added-files-size']),
    'changed-partition-count': String(partitions.size),
    ...totalsAfter(parentSummary, addedCounts, removedCounts),
    ...extra,
  }
}
