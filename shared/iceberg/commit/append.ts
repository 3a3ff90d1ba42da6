// One atomic append to an Iceberg table through any catalog: the commit loop of docs/design.md
// invariants 3 and 4. Every attempt reloads the table, asks the caller to re-check what it is
// about to commit against that table (Floe's contiguity check sits there), writes a snapshot on
// top of the current `main`, and commits it with `assert-ref-snapshot-id`. A conflict (409, lost
// compare-and-set) retries with backoff; after an unknown outcome (5xx, timeout, lost connection)
// every later reload looks for this commit's id in the table, so a request that lands late is
// found and the same files are never committed twice.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Catalog, TableIdentifier } from '../../catalog/index.ts'
import { FloeError, isFloeError, messageOf } from '../../errors.ts'
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
  let policy = retryPolicy({}, request.retry)
  let policyRead = false
  // The `main` each attempt with an unknown outcome asserted. Such a request may still reach the
  // catalog at any time, however late; the catalog's compare-and-set lets it land only while main
  // is still the snapshot it asserted. Never forgotten within this call: every reload looks for
  // the commit id, and no give-up says "not committed" while one of them may still land.
  const unknown = new Set<bigint | null>()
  // main as last read; undefined until a reload succeeds
  let lastMain: { id: bigint | null } | undefined
  const mayStillLand = () => unknown.size > 0 && (lastMain === undefined || unknown.has(lastMain.id))

  for (let attempt = 1; ; attempt++) {
    request.signal?.throwIfAborted()
    let attemptObjects: readonly string[] = []
    let reason: 'conflict' | 'unknown' | 'unavailable'
    let failure: unknown
    try {
      const { metadata } = await catalog.loadTable(table)
      lastMain = { id: refSnapshotId(metadata) }
      if (!policyRead) {
        policy = retryPolicy(metadata.properties, request.retry)
        policyRead = true
      }
      const landed = unknown.size > 0 ? await foundLanded(request, metadata, attempt - 1) : undefined
      if (landed) return landed
      // One snapshot id for the whole append: the new-files manifest names it in its entries and
      // can then be reused by every attempt.
      if (snapshotId === 0n) snapshotId = newSnapshotId(metadata)

      const content = await request.content(metadata)
      if (!newFiles || !sameFiles(newFiles.files, content.files)) {
        newFiles = await writeNewFilesManifest(storage, metadata, snapshotId, content.files)
      }
      const summary = { ...content.summary, [request.commitIdKey]: request.commitId }
      const built = await writeAppendSnapshot({ storage, metadata, snapshotId, newFiles, summary, attempt, now: now() })
      attemptObjects = built.attemptObjects
      const requirements: TableRequirement[] = [
        { type: 'assert-table-uuid', uuid: metadata['table-uuid'] },
        { type: 'assert-ref-snapshot-id', ref: mainBranch, 'snapshot-id': lastMain.id },
      ]
      const updates: TableUpdate[] = [
        { action: 'add-snapshot', snapshot: built.snapshot },
        { action: 'set-snapshot-ref', 'ref-name': mainBranch, type: 'branch', 'snapshot-id': snapshotId },
      ]
      if (content.properties && Object.keys(content.properties).length) {
        updates.push({ action: 'set-properties', updates: { ...content.properties } })
      }
      const committed = await catalog.commitTable(table, requirements, updates)
      return {
        snapshot: built.snapshot,
        metadata: committed.metadata,
        attempts: attempt,
        foundAfterUnknownOutcome: false,
        committed: content,
      }
    } catch (error) {
      failure = error
      if (isFloeError(error, 'COMMIT_CONFLICT')) {
        reason = 'conflict'
        // Lost for sure: what only this attempt wrote is garbage now.
        await Promise.all(attemptObjects.map((o) => storage.delete(o).catch(() => false)))
      } else if (isFloeError(error, 'COMMIT_STATE_UNKNOWN')) {
        reason = 'unknown'
        unknown.add(lastMain?.id ?? null)
      } else if (isFloeError(error, 'CATALOG_UNAVAILABLE') || isFloeError(error, 'STORAGE_UNAVAILABLE')) {
        // a reload, a commit never sent, or the attempt's manifests not written: one more lost attempt
        reason = 'unavailable'
      } else {
        // Fatal (a rejected re-check among them). An earlier request that may still land makes
        // the outcome unknown, whatever stopped this attempt.
        throw mayStillLand() ? unresolved(request, attempt, error, unknown) : error
      }
    }
    if (attempt > policy.retries || now() - started > policy.totalTimeoutMs) {
      if (unknown.size > 0) {
        // Look once more before giving up: the outcome may be known by now.
        const latest = await catalog.loadTable(table).then(
          ({ metadata }) => metadata,
          () => undefined,
        )
        if (latest) {
          lastMain = { id: refSnapshotId(latest) }
          const landed = await foundLanded(request, latest, attempt)
          if (landed) return landed
        } else {
          lastMain = undefined
        }
        if (mayStillLand()) throw unresolved(request, attempt, failure, unknown)
      }
      throw new FloeError(
        reason === 'unavailable' ? 'CATALOG_UNAVAILABLE' : 'COMMIT_CONFLICT',
        `append to ${table.namespace.join('.')}.${table.name} gave up after ${attempt} attempt(s): ${messageOf(failure)}`,
        { cause: failure, details: { commitId: request.commitId, attempts: attempt } },
      )
    }
    const waitMs = backoffMs(policy, attempt)
    request.onRetry?.({ attempt, reason, waitMs })
    await sleep(waitMs, undefined, request.signal ? { signal: request.signal } : undefined)
  }
}

async function foundLanded(
  request: AppendRequest,
  metadata: TableMetadata,
  attempts: number,
): Promise<AppendResult | undefined> {
  const landed = findCommittedSnapshot(metadata, request.commitIdKey, request.commitId)
  if (!landed) return undefined
  return {
    snapshot: landed,
    metadata,
    attempts,
    foundAfterUnknownOutcome: true,
    committed: await request.content(metadata),
  }
}

/**
 * Giving up while a request whose outcome is unknown may still land: COMMIT_STATE_UNKNOWN, with
 * the commit id and the snapshots its attempts asserted, so the caller can look for it later (a
 * later table whose main is none of them, without the commit id, proves it never will land).
 */
function unresolved(
  request: AppendRequest,
  attempts: number,
  cause: unknown,
  asserted: ReadonlySet<bigint | null>,
): FloeError {
  const { namespace, name } = request.table
  return new FloeError(
    'COMMIT_STATE_UNKNOWN',
    `append to ${namespace.join('.')}.${name} gave up after ${attempts} attempt(s) with its outcome unknown: ${messageOf(cause)}`,
    {
      cause,
      details: {
        commitId: request.commitId,
        attempts,
        assertedSnapshotIds: [...asserted].map((id) => (id === null ? null : String(id))),
      },
    },
  )
}
