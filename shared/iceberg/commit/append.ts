// One atomic append to an Iceberg table through any catalog: the commit loop of DESIGN.md
// invariants 3 and 4. Every attempt reloads the table, asks the caller to re-check what it is
// about to commit against that table (Floe's contiguity check sits there), writes a snapshot on
// top of the current `main`, and commits it with `assert-ref-snapshot-id`. A conflict (409, lost
// compare-and-set) retries with backoff; an unknown outcome (5xx, timeout, lost connection) first
// looks for this commit's id in the table, so the same files are never committed twice.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Catalog, TableIdentifier } from '../../catalog/index.ts'
import { FloeError, isFloeError } from '../../errors.ts'
import type { ObjectStorage } from '../../storage/index.ts'
import {
  ancestorsOfRef,
  mainBranch,
  newSnapshotId,
  refSnapshotId,
  type Snapshot,
  type TableMetadata,
  type TableRequirement,
  type TableUpdate,
} from '../metadata/index.ts'
import type { DataFile } from '../types.ts'
import { backoffMs, type RetryPolicy, retryPolicy } from './retry.ts'
import { type NewFilesManifest, writeAppendSnapshot, writeNewFilesManifest } from './snapshot-writer.ts'

/** What the caller commits in one attempt, as its re-check decided against the current table. */
export interface AppendContent {
  files: readonly DataFile[]
  /** Extra snapshot summary properties (Floe: `floe.commit-id`, `floe.offsets.<group>`). */
  summary?: Readonly<Record<string, string>>
  /** Table properties set in the same commit (Floe: the progress marker, invariant 8). */
  properties?: Readonly<Record<string, string>>
}

export interface AppendRequest {
  catalog: Catalog
  /** Where manifests and manifest lists are written (the table's metadata location). */
  storage: ObjectStorage
  table: TableIdentifier
  /**
   * A unique id of this commit and the summary key that carries it: after an unknown outcome,
   * a snapshot of main whose summary has `commitIdKey` = `commitId` proves the commit landed.
   */
  commitId: string
  commitIdKey: string
  /**
   * Decides what to commit against the table as it is now. Called before every attempt with the
   * freshly loaded metadata; throw FloeError COMMIT_REJECTED to give up.
   */
  content: (metadata: TableMetadata) => AppendContent | Promise<AppendContent>
  retry?: Partial<RetryPolicy>
  now?: () => number
  signal?: AbortSignal
  /** Called when an attempt is lost, for logs and metrics. */
  onRetry?: (info: { attempt: number; reason: 'conflict' | 'unknown' | 'unavailable'; waitMs: number }) => void
}

export interface AppendResult {
  snapshot: Snapshot
  metadata: TableMetadata
  /** Attempts made, 1 when the first one won. */
  attempts: number
  /** True when an earlier attempt with an unknown outcome turned out to have committed. */
  foundAfterUnknownOutcome: boolean
  /** The content that was committed (after the last re-check). */
  committed: AppendContent
}

/** The snapshot on main's history that carries `key` = `value` in its summary, if any. */
export function findCommittedSnapshot(metadata: TableMetadata, key: string, value: string): Snapshot | undefined {
  for (const snapshot of ancestorsOfRef(metadata, mainBranch)) {
    if (snapshot.summary[key] === value) return snapshot
  }
  return undefined
}

function sameFiles(a: readonly DataFile[], b: readonly DataFile[]): boolean {
  return a.length === b.length && a.every((file, i) => file.filePath === b[i]?.filePath)
}

export async function appendFiles(request: AppendRequest): Promise<AppendResult> {
  const { catalog, storage, table } = request
  const now = request.now ?? Date.now
  const started = now()
  let snapshotId = 0n
  let newFiles: NewFilesManifest | undefined
  let policy: RetryPolicy | undefined
  let uncertain = false

  for (let attempt = 1; ; attempt++) {
    request.signal?.throwIfAborted()
    const { metadata } = await catalog.loadTable(table)
    policy ??= retryPolicy(metadata.properties, request.retry)
    if (uncertain) {
      const landed = findCommittedSnapshot(metadata, request.commitIdKey, request.commitId)
      if (landed) {
        return {
          snapshot: landed,
          metadata,
          attempts: attempt - 1,
          foundAfterUnknownOutcome: true,
          committed: await request.content(metadata),
        }
      }
      uncertain = false
    }
    // One snapshot id for the whole append: the new-files manifest names it in its entries and
    // can then be reused by every attempt.
    if (snapshotId === 0n) snapshotId = newSnapshotId(metadata)

    const content = await request.content(metadata)
    if (!newFiles || !sameFiles(newFiles.files, content.files)) {
      newFiles = await writeNewFilesManifest(storage, metadata, snapshotId, content.files)
    }
    const summary = { ...content.summary, [request.commitIdKey]: request.commitId }
    const built = await writeAppendSnapshot({
      storage,
      metadata,
      snapshotId: snapshotId,
      newFiles,
      summary,
      attempt,
      now: now(),
    })

    const requirements: TableRequirement[] = [
      { type: 'assert-table-uuid', uuid: metadata['table-uuid'] },
      { type: 'assert-ref-snapshot-id', ref: mainBranch, 'snapshot-id': refSnapshotId(metadata) },
    ]
    const updates: TableUpdate[] = [
      { action: 'add-snapshot', snapshot: built.snapshot },
      { action: 'set-snapshot-ref', 'ref-name': mainBranch, type: 'branch', 'snapshot-id': snapshotId },
    ]
    if (content.properties && Object.keys(content.properties).length) {
      updates.push({ action: 'set-properties', updates: { ...content.properties } })
    }

    let reason: 'conflict' | 'unknown' | 'unavailable'
    try {
      const committed = await catalog.commitTable(table, requirements, updates)
      return {
        snapshot: built.snapshot,
        metadata: committed.metadata,
        attempts: attempt,
        foundAfterUnknownOutcome: false,
        committed: content,
      }
    } catch (error) {
      if (isFloeError(error, 'COMMIT_CONFLICT')) {
        reason = 'conflict'
        // Lost for sure: what only this attempt wrote is garbage now.
        await Promise.all(built.attemptObjects.map((o) => storage.delete(o).catch(() => false)))
      } else if (isFloeError(error, 'COMMIT_STATE_UNKNOWN')) {
        reason = 'unknown'
        uncertain = true
      } else if (isFloeError(error, 'CATALOG_UNAVAILABLE')) {
        reason = 'unavailable'
      } else {
        throw error
      }
      if (attempt > policy.retries || now() - started > policy.totalTimeoutMs) {
        if (reason === 'unknown') {
          // Look once more before giving up: the outcome may be known by now.
          const { metadata: latest } = await catalog.loadTable(table).catch(() => ({ metadata: undefined }))
          const landed = latest && findCommittedSnapshot(latest, request.commitIdKey, request.commitId)
          if (landed && latest) {
            return {
              snapshot: landed,
              metadata: latest,
              attempts: attempt,
              foundAfterUnknownOutcome: true,
              committed: content,
            }
          }
        }
        throw new FloeError(
          reason === 'conflict'
            ? 'COMMIT_CONFLICT'
            : reason === 'unknown'
              ? 'COMMIT_STATE_UNKNOWN'
              : 'CATALOG_UNAVAILABLE',
          `append to ${table.namespace.join('.')}.${table.name} gave up after ${attempt} attempt(s): ${(error as Error).message}`,
          { cause: error, details: { commitId: request.commitId, attempts: attempt } },
        )
      }
      const waitMs = backoffMs(policy, attempt)
      request.onRetry?.({ attempt, reason, waitMs })
      await sleep(waitMs, undefined, request.signal ? { signal: request.signal } : undefined)
    }
  }
}
