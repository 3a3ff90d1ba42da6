// Compaction beside a running writer: the small files of each qualifying partition are streamed,
// one source row group at a time, into new files of about the target size, uploaded, and swapped
// in by one `replace` commit (commit/replace.ts validates it against the table as it is then).
// The table's properties, and with them Floe's progress marker, are never touched; every row is
// counted on the way through and a rewrite that would change the count is refused before commit.
// What a failed run leaves behind is never read: files it uploaded are deleted when the commit
// failed for sure, and left to orphan cleanup when its outcome is unknown.
import { randomUUID } from 'node:crypto'
import { mkdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Catalog, TableIdentifier } from '../../catalog/index.ts'
import { FloeError, isFloeError, messageOf } from '../../errors.ts'
import { type DataFileCodec, FileRewriter, type RewrittenFile, toDataFile } from '../../parquet/index.ts'
import type { ObjectStorage } from '../../storage/index.ts'
import { type ReplaceGroup, type RetryPolicy, replaceFiles } from '../commit/index.ts'
import { type ContentFile, ManifestEntryStatus, readManifest, readManifestList } from '../manifests/index.ts'
import {
  currentSchema,
  dataDirectory,
  refSnapshotId,
  snapshotById,
  specById,
  type TableMetadata,
} from '../metadata/index.ts'
import { partitionPath } from '../partitioning/index.ts'
import type { DataFile } from '../types.ts'
import { type CompactionGroup, type CompactionPolicy, planCompaction } from './compaction-plan.ts'

export interface CompactRequest {
  catalog: Catalog
  storage: ObjectStorage
  table: TableIdentifier
  policy: CompactionPolicy
  /** Plan and count; write and commit nothing. */
  dryRun?: boolean
  /** Where files are written before their upload; the system's temporary directory by default. */
  workDirectory?: string
  retry?: Partial<RetryPolicy>
  signal?: AbortSignal
  /** Each step of a long rewrite as it happens: a run over a gigabyte takes minutes. */
  onProgress?: (progress: CompactionProgress) => void
}

export type CompactionProgress =
  | { step: 'rewriting'; partition: string; files: number; bytes: bigint }
  | { step: 'written'; partition: string; files: number; bytes: bigint }
  | { step: 'committing'; partitions: number; files: number }

export interface CompactResult {
  /** Live data files and bytes of main before and after. */
  filesBefore: number
  bytesBefore: bigint
  filesAfter: number
  bytesAfter: bigint
  partitionsRewritten: number
  filesRewritten: number
  filesWritten: number
  /** Partitions left alone, and why (a file another writer made unreadable as the schema, a lost race). */
  skipped: { partition: string; reason: string }[]
  /** The replace snapshot, when one was committed. */
  snapshotId: bigint | undefined
}

const commitIdKey = 'floe.compaction-id'

export async function compactTable(request: CompactRequest): Promise<CompactResult> {
  const { catalog, storage, table, policy } = request
  const { metadata } = await catalog.loadTable(table)
  const live = await liveFiles(storage, metadata)
  const plan = planCompaction(live.data, policy)
  const result: CompactResult = {
    filesBefore: plan.liveFiles,
    bytesBefore: plan.liveBytes,
    filesAfter: plan.liveFiles,
    bytesAfter: plan.liveBytes,
    partitionsRewritten: 0,
    filesRewritten: 0,
    filesWritten: 0,
    skipped: [],
    snapshotId: undefined,
  }
  if (live.deletes > 0) {
    result.skipped.push({
      partition: '*',
      reason: `${live.deletes} delete file(s): a rewrite would have to apply them`,
    })
    return result
  }
  if (plan.groups.length === 0) return result
  if (request.dryRun) return afterSwap(result, plan.groups, plan.groups.map(estimate(policy)))

  const workDirectory = join(request.workDirectory ?? tmpdir(), `floe-compaction-${randomUUID()}`)
  await mkdir(workDirectory, { recursive: true })
  const written: { group: CompactionGroup; swap: ReplaceGroup }[] = []
  try {
    for (const group of plan.groups) {
      request.signal?.throwIfAborted()
      const partition = partitionName(metadata, group)
      request.onProgress?.({ step: 'rewriting', partition, files: group.files.length, bytes: group.bytes })
      try {
        const added = await rewriteGroup(storage, metadata, group, policy.targetFileSizeBytes, workDirectory)
        written.push({ group, swap: { removed: group.files, added } })
        const bytes = added.reduce((sum, f) => sum + f.fileSizeInBytes, 0n)
        request.onProgress?.({ step: 'written', partition, files: added.length, bytes })
      } catch (error) {
        if (!isFloeError(error, 'CONVERSION_FAILED')) throw error
        result.skipped.push({ partition, reason: messageOf(error) })
      }
    }
  } catch (error) {
    await deleteAdded(
      storage,
      written.map((w) => w.swap),
    )
    throw error
  } finally {
    await rm(workDirectory, { recursive: true, force: true })
  }
  if (written.length === 0) return result

  let replaced: Awaited<ReturnType<typeof replaceFiles>>
  const files = written.reduce((n, w) => n + w.swap.added.length, 0)
  request.onProgress?.({ step: 'committing', partitions: written.length, files })
  try {
    replaced = await replaceFiles({
      catalog,
      storage,
      table,
      groups: written.map((w) => w.swap),
      commitId: randomUUID(),
      commitIdKey,
      ...(request.retry ? { retry: request.retry } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
    })
  } catch (error) {
    // with an unknown outcome the files may be in the table: only orphan cleanup, which checks, may delete them
    if (!isFloeError(error, 'COMMIT_STATE_UNKNOWN'))
      await deleteAdded(
        storage,
        written.map((w) => w.swap),
      )
    throw error
  }
  await deleteAdded(storage, replaced.dropped)
  for (const w of written) {
    if (replaced.dropped.includes(w.swap)) {
      result.skipped.push({
        partition: partitionName(metadata, w.group),
        reason: 'its files changed during the rewrite',
      })
    }
  }
  const committed = written.filter((w) => replaced.committed.includes(w.swap))
  result.snapshotId = replaced.snapshot?.['snapshot-id']
  return afterSwap(
    result,
    committed.map((w) => w.group),
    committed.map((w) => w.swap.added),
  )
}

/** A partition as its files' path names it (`day=2026-11-28`), with the spec when it is not the default. */
function partitionName(metadata: TableMetadata, group: CompactionGroup): string {
  const spec = specById(metadata, group.specId)
  const path = spec ? partitionPath(spec, currentSchema(metadata), group.partition) : group.partitionKey
  const name = path === '' ? 'unpartitioned' : path
  return group.specId === metadata['default-spec-id'] ? name : `${name} (spec ${group.specId})`
}

/** The live files of main, oldest first, and how many live delete files it has. */
async function liveFiles(
  storage: ObjectStorage,
  metadata: TableMetadata,
): Promise<{ data: ContentFile[]; deletes: number }> {
  const id = refSnapshotId(metadata)
  const snapshot = id === null ? undefined : snapshotById(metadata, id)
  if (!snapshot) return { data: [], deletes: 0 }
  const entries = []
  let deletes = 0
  for (const manifest of readManifestList(await storage.get(snapshot['manifest-list'])).manifests) {
    for (const entry of readManifest(await storage.get(manifest.manifestPath), { inheritFrom: manifest }).entries) {
      if (entry.status === ManifestEntryStatus.DELETED) continue
      if (manifest.content === 'deletes') deletes += 1
      else entries.push(entry)
    }
  }
  entries.sort((a, b) => Number((a.sequenceNumber ?? 0n) - (b.sequenceNumber ?? 0n)))
  return { data: entries.map((e) => e.dataFile), deletes }
}

/**
 * Streams the group's files into new ones on a rewrite thread (shared/parquet/file-rewriter.ts):
 * each source file is read whole (it is small by definition, under three quarters of the target)
 * and handed over, its rows pass one row group at a time, and each file the thread closes at the
 * target is uploaded before the next source file goes.
 */
async function rewriteGroup(
  storage: ObjectStorage,
  metadata: TableMetadata,
  group: CompactionGroup,
  targetBytes: number,
  workDirectory: string,
): Promise<DataFile[]> {
  const schema = currentSchema(metadata)
  const spec = specById(metadata, group.specId)
  if (!spec) throw new FloeError('INVARIANT_BROKEN', `data files follow spec ${group.specId}, unknown to the table`)
  const directory = [dataDirectory(metadata), partitionPath(spec, schema, group.partition)].filter(Boolean).join('/')
  const added: DataFile[] = []
  const upload = async (closed: readonly RewrittenFile[]) => {
    for (const { localPath, metrics } of closed) {
      const location = `${directory}/${randomUUID()}.parquet`
      added.push(toDataFile(metrics, { filePath: location, schema, specId: group.specId, partition: group.partition }))
      await storage.putFile(location, localPath)
      await rm(localPath, { force: true })
    }
  }
  const rewriter = await FileRewriter.start({ schema, codec: codecOf(metadata), targetBytes, directory: workDirectory })
  try {
    for (const file of group.files) {
      await upload(await rewriter.add(await storage.get(file.filePath), file.filePath, file.recordCount))
    }
    await upload(await rewriter.finish())
  } catch (error) {
    await rewriter.close(true)
    await deleteAdded(storage, [{ removed: [], added }])
    throw error
  }
  await rewriter.close()
  const rows = added.reduce((sum, f) => sum + f.recordCount, 0n)
  if (rows !== group.records) {
    await deleteAdded(storage, [{ removed: [], added }])
    throw new FloeError('INVARIANT_BROKEN', `rewrite of ${group.partitionKey} wrote ${rows} rows of ${group.records}`)
  }
  return added
}

const codecs = new Set<string>(['zstd', 'snappy', 'gzip', 'brotli', 'lz4', 'uncompressed'])

/** The table's `write.parquet.compression-codec` (Iceberg's default, zstd, when unset or unknown here). */
function codecOf(metadata: TableMetadata): DataFileCodec {
  const named = metadata.properties['write.parquet.compression-codec']?.toLowerCase()
  return named !== undefined && codecs.has(named) ? (named as DataFileCodec) : 'zstd'
}

async function deleteAdded(storage: ObjectStorage, swaps: readonly ReplaceGroup[]): Promise<void> {
  await Promise.all(swaps.flatMap((s) => s.added.map((f) => storage.delete(f.filePath).catch(() => false))))
}

/** A dry run's guess at the files a group becomes: its bytes over the target, rounded up. */
const estimate = (policy: CompactionPolicy) => (group: CompactionGroup) => {
  const count = Number((group.bytes + BigInt(policy.targetFileSizeBytes) - 1n) / BigInt(policy.targetFileSizeBytes))
  return Array.from({ length: count }, () => ({ fileSizeInBytes: group.bytes / BigInt(count) }))
}

function afterSwap(
  result: CompactResult,
  groups: readonly CompactionGroup[],
  added: readonly (readonly Pick<DataFile, 'fileSizeInBytes'>[])[],
): CompactResult {
  const removedFiles = groups.reduce((n, g) => n + g.files.length, 0)
  const removedBytes = groups.reduce((n, g) => n + g.bytes, 0n)
  const addedFiles = added.reduce((n, a) => n + a.length, 0)
  const addedBytes = added.flat().reduce((n, f) => n + f.fileSizeInBytes, 0n)
  return {
    ...result,
    filesAfter: result.filesBefore - removedFiles + addedFiles,
    bytesAfter: result.bytesBefore - removedBytes + addedBytes,
    partitionsRewritten: groups.length,
    filesRewritten: removedFiles,
    filesWritten: addedFiles,
  }
}
