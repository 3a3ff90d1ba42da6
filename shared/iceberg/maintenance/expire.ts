// Snapshot expiry beside a running writer: one `remove-snapshots` commit that asserts `main` did
// not move since the plan (a writer's commit in between makes it plan again), then the deletion
// of the files only the removed snapshots reached: their manifest lists, the manifests no kept
// snapshot lists, and the data files no kept manifest names. Deletion follows the commit, never
// precedes it: a file is gone only once no snapshot of the table can reach it. A deletion that
// fails leaves an orphan behind, which is counted and never read.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Catalog, TableIdentifier } from '../../catalog/index.ts'
import { isFloeError } from '../../errors.ts'
import type { ObjectStorage } from '../../storage/index.ts'
import { backoffMs, type RetryPolicy, retryPolicy } from '../commit/index.ts'
import { readManifest, readManifestList } from '../manifests/index.ts'
import {
  mainBranch,
  refSnapshotId,
  type Snapshot,
  type TableMetadata,
  type TableRequirement,
} from '../metadata/index.ts'
import { type ExpiryPlan, planSnapshotExpiry, type SnapshotRetention } from './expiry-plan.ts'
import { readNamedFile } from './named-file.ts'

export interface ExpireRequest {
  catalog: Catalog
  /** Reads manifests and deletes what the expired snapshots alone reached. */
  storage: ObjectStorage
  table: TableIdentifier
  retention: SnapshotRetention
  /** Snapshots to keep whatever their age, chosen on each fresh read of the table. */
  keep?: (metadata: TableMetadata) => ReadonlySet<bigint>
  /** Plan and count, commit and delete nothing. */
  dryRun?: boolean
  now?: () => number
  retry?: Partial<RetryPolicy>
  /** At most this many deletions at once. */
  deleteConcurrency?: number
}

/** Files only the expired snapshots reached. */
export interface UnreachableFiles {
  manifestLists: string[]
  manifests: string[]
  dataFiles: string[]
  /** The data files' bytes, as their manifests record them. */
  dataBytes: bigint
}

export interface ExpireResult {
  snapshotsBefore: number
  snapshotsAfter: number
  expired: bigint[]
  /** What the expiry deleted, or with dryRun would delete. */
  files: UnreachableFiles
  /** Deletions that failed: orphans now, invisible to readers. */
  failedDeletes: number
  attempts: number
}

export async function expireSnapshots(request: ExpireRequest): Promise<ExpireResult> {
  const { catalog, table } = request
  const now = request.now ?? Date.now
  let policy: RetryPolicy | undefined
  for (let attempt = 1; ; attempt++) {
    const { metadata } = await catalog.loadTable(table)
    policy ??= retryPolicy(metadata.properties, request.retry)
    const plan = planSnapshotExpiry(metadata, request.retention, now(), request.keep?.(metadata))
    const before = metadata.snapshots.length
    if (plan.expire.length === 0) return result(before, plan, emptyFiles(), 0, attempt)
    if (request.dryRun) return result(before, plan, await unreachableFiles(request.storage, plan), 0, attempt)
    try {
      await commitRemoval(catalog, table, metadata, plan.expire)
    } catch (error) {
      const outcome = isFloeError(error, 'COMMIT_STATE_UNKNOWN') ? await landed(request, plan) : false
      if (!outcome) {
        if (!isFloeError(error) || !error.retryable || attempt > policy.retries) throw error
        await sleep(backoffMs(policy, attempt))
        continue
      }
    }
    const files = await unreachableFiles(request.storage, plan)
    const failed = await deleteAll(request.storage, files, request.deleteConcurrency ?? 8)
    return result(before, plan, files, failed, attempt)
  }
}

function result(before: number, plan: ExpiryPlan, files: UnreachableFiles, failed: number, attempts: number) {
  return {
    snapshotsBefore: before,
    snapshotsAfter: before - plan.expire.length,
    expired: plan.expire.map((s) => s['snapshot-id']),
    files,
    failedDeletes: failed,
    attempts,
  }
}

async function commitRemoval(
  catalog: Catalog,
  table: TableIdentifier,
  metadata: TableMetadata,
  expire: readonly Snapshot[],
): Promise<void> {
  const requirements: TableRequirement[] = [
    { type: 'assert-table-uuid', uuid: metadata['table-uuid'] },
    { type: 'assert-ref-snapshot-id', ref: mainBranch, 'snapshot-id': refSnapshotId(metadata) },
  ]
  await catalog.commitTable(table, requirements, [
    { action: 'remove-snapshots', 'snapshot-ids': expire.map((s) => s['snapshot-id']) },
  ])
}

/** After an unknown outcome: the removal landed if none of its snapshots is left. */
async function landed(request: ExpireRequest, plan: ExpiryPlan): Promise<boolean> {
  const { metadata } = await request.catalog.loadTable(request.table)
  const left = new Set(metadata.snapshots.map((s) => s['snapshot-id']))
  return plan.expire.every((s) => !left.has(s['snapshot-id']))
}

function emptyFiles(): UnreachableFiles {
  return { manifestLists: [], manifests: [], dataFiles: [], dataBytes: 0n }
}

async function manifestsOf(storage: ObjectStorage, snapshots: readonly Snapshot[]): Promise<Set<string>> {
  const paths = new Set<string>()
  for (const snapshot of snapshots) {
    const list = readManifestList(await readNamedFile(storage, snapshot['manifest-list']))
    for (const manifest of list.manifests) paths.add(manifest.manifestPath)
  }
  return paths
}

/**
 * The files the plan's expired snapshots reached and its kept ones do not. A data file named by a
 * kept manifest stays, whatever the entry's status: it may still be read by a kept snapshot.
 */
export async function unreachableFiles(storage: ObjectStorage, plan: ExpiryPlan): Promise<UnreachableFiles> {
  const kept = await manifestsOf(storage, plan.retain)
  const candidates = [...(await manifestsOf(storage, plan.expire))].filter((path) => !kept.has(path))
  const manifestLists = plan.expire.map((s) => s['manifest-list'])
  if (candidates.length === 0) return { ...emptyFiles(), manifestLists }
  const keptData = new Set<string>()
  for (const path of kept) {
    for (const entry of readManifest(await readNamedFile(storage, path)).entries) keptData.add(entry.dataFile.filePath)
  }
  const data = new Map<string, bigint>()
  for (const path of candidates) {
    for (const { dataFile } of readManifest(await readNamedFile(storage, path)).entries) {
      if (!keptData.has(dataFile.filePath)) data.set(dataFile.filePath, dataFile.fileSizeInBytes)
    }
  }
  const dataBytes = [...data.values()].reduce((sum, bytes) => sum + bytes, 0n)
  return { manifestLists, manifests: candidates, dataFiles: [...data.keys()], dataBytes }
}

/** Deletes data files, then manifests, then manifest lists; returns how many deletions failed. */
async function deleteAll(storage: ObjectStorage, files: UnreachableFiles, concurrency: number): Promise<number> {
  let failed = 0
  for (const group of [files.dataFiles, files.manifests, files.manifestLists]) {
    for (let i = 0; i < group.length; i += concurrency) {
      const outcomes = await Promise.allSettled(group.slice(i, i + concurrency).map((path) => storage.delete(path)))
      failed += outcomes.filter((o) => o.status === 'rejected').length
    }
  }
  return failed
}
