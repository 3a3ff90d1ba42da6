// Which data files a compaction rewrites, by the rules of Iceberg's bin-pack rewrite
// (rewrite_data_files): a file under three quarters of the target size is small; a partition's
// small files are rewritten together once there are at least `minInputFiles` of them, or two or
// more that add up to a target-sized file; files already near the target stay as they are. Pure:
// the caller lists the live files of `main` and carries the plan out.
import { partitionKey } from '../commit/index.ts'
import { type ContentFile, DataFileContent } from '../manifests/index.ts'
import type { StructValue } from '../types.ts'

export interface CompactionPolicy {
  targetFileSizeBytes: number
  /** A partition is rewritten once it holds at least this many small files. */
  minInputFiles: number
}

/** One partition's small files, rewritten into files of about the target size. */
export interface CompactionGroup {
  specId: number
  partition: StructValue
  /** Identifies the partition: its spec and values. */
  partitionKey: string
  files: ContentFile[]
  bytes: bigint
  records: bigint
}

export interface CompactionPlan {
  groups: CompactionGroup[]
  /** Live data files of the snapshot planned from, and their bytes. */
  liveFiles: number
  liveBytes: bigint
  /** Small files left because their partition did not qualify yet. */
  smallFilesLeft: number
}

/** Three quarters of the target, Iceberg's `min-file-size-bytes` default. */
export function smallFileLimit(policy: CompactionPolicy): number {
  return Math.floor(policy.targetFileSizeBytes * 0.75)
}

/**
 * Groups the small Parquet data files of `live` (the live files of one snapshot, oldest first, so
 * that a rewritten file keeps its rows in about the order they were written) by partition.
 * Delete files and other formats are never planned: the caller refuses a table with live delete
 * files, since a rewrite would have to apply them.
 */
export function planCompaction(live: readonly ContentFile[], policy: CompactionPolicy): CompactionPlan {
  const limit = BigInt(smallFileLimit(policy))
  const byPartition = new Map<string, ContentFile[]>()
  let liveBytes = 0n
  let liveFiles = 0
  for (const file of live) {
    if ((file.content ?? DataFileContent.DATA) !== DataFileContent.DATA) continue
    liveFiles += 1
    liveBytes += file.fileSizeInBytes
    if (file.fileFormat.toUpperCase() !== 'PARQUET' || file.fileSizeInBytes >= limit) continue
    const key = partitionKey(file)
    const same = byPartition.get(key)
    if (same) same.push(file)
    else byPartition.set(key, [file])
  }
  const groups: CompactionGroup[] = []
  let smallFilesLeft = 0
  const target = BigInt(policy.targetFileSizeBytes)
  for (const [key, files] of [...byPartition].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const bytes = files.reduce((sum, f) => sum + f.fileSizeInBytes, 0n)
    const qualifies = files.length >= policy.minInputFiles || (files.length >= 2 && bytes >= target)
    if (!qualifies) {
      smallFilesLeft += files.length
      continue
    }
    const first = files[0] as ContentFile
    groups.push({
      specId: first.specId,
      partition: first.partition,
      partitionKey: key,
      files,
      bytes,
      records: files.reduce((sum, f) => sum + f.recordCount, 0n),
    })
  }
  return { groups, liveFiles, liveBytes, smallFilesLeft }
}
