// One atomic `replace` commit: data files swapped for others holding the same rows (a compaction),
// through any catalog, beside writers that keep appending. Every attempt reloads the table and
// validates the swap against it: a group whose files are no longer all live in `main` (another
// rewrite or a delete took one) is dropped, never committed half; the rest is rebuilt on the new
// `main` and committed with `assert-ref-snapshot-id`, so an append that lands in between costs one
// more attempt and loses nothing. After an unknown outcome every reload looks for this commit's id,
// as appends do, so a late request is found and the swap never applies twice.
import { randomUUID as randomName } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Catalog, TableIdentifier } from '../../catalog/index.ts'
import { FloeError, isFloeError, messageOf } from '../../errors.ts'
import type { ObjectStorage } from '../../storage/index.ts'
import {
  type ContentFile,
  type ManifestEntry,
  ManifestEntryStatus,
  type ManifestEntryToWrite,
  type ManifestFile,
  manifestFileOf,
  readManifest,
  readManifestList,
  writeManifest,
} from '../manifests/index.ts'
import {
  currentSchema,
  mainBranch,
  metadataDirectory,
  newSnapshotId,
  refSnapshotId,
  type Snapshot,
  specById,
  type TableMetadata,
} from '../metadata/index.ts'
import type { DataFile } from '../types.ts'
import { toBinarySingleValue } from '../values/index.ts'
import { findCommittedSnapshot } from './append.ts'
import { backoffMs, type RetryPolicy, retryPolicy } from './retry.ts'
import { parentOf, writeNewFilesManifest, writeSnapshot } from './snapshot-writer.ts'
import { replaceSummary } from './summary.ts'

/** Files swapped as a whole or not at all. */
export interface ReplaceGroup {
  removed: readonly ContentFile[]
  added: readonly DataFile[]
}

export interface ReplaceRequest {
  catalog: Catalog
  storage: ObjectStorage
  table: TableIdentifier
  groups: readonly ReplaceGroup[]
  /** A unique id of this commit, kept in the snapshot summary under `commitIdKey`. */
  commitId: string
  commitIdKey: string
  retry?: Partial<RetryPolicy>
  now?: () => number
  signal?: AbortSignal
}

export interface ReplaceResult {
  /** The replace snapshot; undefined when no group was still valid. */
  snapshot: Snapshot | undefined
  committed: ReplaceGroup[]
  /** Groups left out because a file they remove was no longer live. */
  dropped: ReplaceGroup[]
  attempts: number
}

const serializeBound = toBinarySingleValue

export async function replaceFiles(request: ReplaceRequest): Promise<ReplaceResult> {
  const { catalog, storage, table } = request
  const now = request.now ?? Date.now
  let policy = retryPolicy({}, request.retry)
  let snapshotId = 0n
  // an attempt whose outcome is unknown may still land, however late: looked for on every reload
  let unknown = false
  for (let attempt = 1; ; attempt++) {
    request.signal?.throwIfAborted()
    let attemptObjects: string[] = []
    let failure: unknown
    try {
      const { metadata } = await catalog.loadTable(table)
      if (attempt === 1) policy = retryPolicy(metadata.properties, request.retry)
      const landed = unknown ? findCommittedSnapshot(metadata, request.commitIdKey, request.commitId) : undefined
      if (landed) return await landedResult(storage, request, landed, attempt - 1)
      if (snapshotId === 0n) snapshotId = newSnapshotId(metadata)
      const built = await buildReplace(storage, metadata, snapshotId, request, attempt, now())
      if (!built) return { snapshot: undefined, committed: [], dropped: [...request.groups], attempts: attempt }
      attemptObjects = built.attemptObjects
      await catalog.commitTable(
        table,
        [
          { type: 'assert-table-uuid', uuid: metadata['table-uuid'] },
          { type: 'assert-ref-snapshot-id', ref: mainBranch, 'snapshot-id': refSnapshotId(metadata) },
        ],
        [
          { action: 'add-snapshot', snapshot: built.snapshot },
          { action: 'set-snapshot-ref', 'ref-name': mainBranch, type: 'branch', 'snapshot-id': snapshotId },
        ],
      )
      const dropped = request.groups.filter((g) => !built.groups.includes(g))
      return { snapshot: built.snapshot, committed: built.groups, dropped, attempts: attempt }
    } catch (error) {
      failure = error
      if (isFloeError(error, 'COMMIT_CONFLICT')) {
        // lost for sure: what only this attempt wrote is garbage now
        await Promise.all(attemptObjects.map((o) => storage.delete(o).catch(() => false)))
      } else if (isFloeError(error, 'COMMIT_STATE_UNKNOWN')) {
        unknown = true
      } else if (!isFloeError(error, 'CATALOG_UNAVAILABLE') && !isFloeError(error, 'STORAGE_UNAVAILABLE')) {
        throw unknown ? unresolved(request, attempt, error) : error
      }
    }
    if (attempt > policy.retries) {
      if (unknown) throw unresolved(request, attempt, failure)
      const code = isFloeError(failure, 'COMMIT_CONFLICT') ? 'COMMIT_CONFLICT' : 'CATALOG_UNAVAILABLE'
      throw new FloeError(code, `${describe(request)} gave up after ${attempt} attempt(s): ${messageOf(failure)}`, {
        cause: failure,
        details: { commitId: request.commitId, attempts: attempt },
      })
    }
    await sleep(backoffMs(policy, attempt), undefined, request.signal ? { signal: request.signal } : undefined)
  }
}

const describe = (request: ReplaceRequest) => `replace in ${request.table.namespace.join('.')}.${request.table.name}`

const isLive = (status: number) => status !== ManifestEntryStatus.DELETED

/**
 * The replace snapshot on top of `main` as it is now, with the groups whose files are all still
 * live; undefined when none is. Manifests that list a removed file are rewritten (that entry
 * DELETED by this snapshot, the others EXISTING); the others are kept as they are.
 */
async function buildReplace(
  storage: ObjectStorage,
  metadata: TableMetadata,
  snapshotId: bigint,
  request: ReplaceRequest,
  attempt: number,
  now: number,
): Promise<{ snapshot: Snapshot; attemptObjects: string[]; groups: ReplaceGroup[] } | undefined> {
  const parent = parentOf(metadata)
  if (!parent) return undefined
  const reads = await Promise.all(
    readManifestList(await storage.get(parent['manifest-list'])).manifests.map(async (manifest) => ({
      manifest,
      entries: readManifest(await storage.get(manifest.manifestPath), { inheritFrom: manifest }).entries,
    })),
  )
  if (reads.some(({ manifest, entries }) => manifest.content === 'deletes' && entries.some((e) => isLive(e.status)))) {
    throw new FloeError(
      'COMMIT_REJECTED',
      `${describe(request)}: the table has delete files, which a rewrite would have to apply`,
    )
  }
  const live = new Set<string>()
  for (const { entries } of reads) for (const e of entries) if (isLive(e.status)) live.add(e.dataFile.filePath)
  const groups = request.groups.filter((g) => g.removed.every((f) => live.has(f.filePath)))
  if (groups.length === 0) return undefined
  const removed = new Set(groups.flatMap((g) => g.removed.map((f) => f.filePath)))

  const attemptObjects: string[] = []
  const manifests: ManifestFile[] = []
  for (const { manifest, entries } of reads) {
    if (!entries.some((e) => isLive(e.status) && removed.has(e.dataFile.filePath))) {
      manifests.push(manifest)
      continue
    }
    const spec = specById(metadata, manifest.partitionSpecId)
    if (!spec) throw new TypeError(`manifest of unknown partition spec ${manifest.partitionSpecId}`)
    const written = writeManifest({
      schema: currentSchema(metadata),
      spec,
      formatVersion: 2,
      content: 'data',
      snapshotId,
      entries: rewrittenEntries(entries, removed, snapshotId),
      serializeBound,
    })
    const location = `${metadataDirectory(metadata)}/${randomName()}-r${manifests.length}.avro`
    await storage.put(location, written.bytes)
    attemptObjects.push(location)
    manifests.push(manifestFileOf(written, location))
  }
  const added = groups.flatMap((g) => g.added)
  const newFiles = await writeNewFilesManifest(storage, metadata, snapshotId, added)
  attemptObjects.push(...newFiles.manifests.map((m) => m.manifestPath))
  const summary = replaceSummary(
    added,
    groups.flatMap((g) => g.removed),
    parent.summary,
    { [request.commitIdKey]: request.commitId },
  )
  const built = await writeSnapshot({
    storage,
    metadata,
    snapshotId,
    manifests: [...newFiles.manifests, ...manifests],
    summary: { operation: 'replace', ...summary },
    attempt,
    now,
  })
  return { snapshot: built.snapshot, attemptObjects: [...attemptObjects, ...built.attemptObjects], groups }
}

function* rewrittenEntries(
  entries: readonly ManifestEntry[],
  removed: ReadonlySet<string>,
  snapshotId: bigint,
): Generator<ManifestEntryToWrite> {
  for (const entry of entries) {
    // a file an earlier snapshot deleted is not carried on, as Java's rewrite does not
    if (!isLive(entry.status)) continue
    if (removed.has(entry.dataFile.filePath)) yield { ...entry, status: ManifestEntryStatus.DELETED, snapshotId }
    else yield { ...entry, status: ManifestEntryStatus.EXISTING }
  }
}

/** A request with an unknown outcome landed: which groups it held, from the files it added. */
async function landedResult(
  storage: ObjectStorage,
  request: ReplaceRequest,
  snapshot: Snapshot,
  attempts: number,
): Promise<ReplaceResult> {
  const added = new Set<string>()
  for (const manifest of readManifestList(await storage.get(snapshot['manifest-list'])).manifests) {
    if (manifest.addedSnapshotId !== snapshot['snapshot-id']) continue
    for (const e of readManifest(await storage.get(manifest.manifestPath)).entries) {
      if (e.status === ManifestEntryStatus.ADDED) added.add(e.dataFile.filePath)
    }
  }
  const committed = request.groups.filter((g) => g.added.every((f) => added.has(f.filePath)))
  const dropped = request.groups.filter((g) => !committed.includes(g))
  return { snapshot, committed, dropped, attempts }
}

/** Giving up while a request may still land: the caller must not delete the files it added. */
function unresolved(request: ReplaceRequest, attempts: number, cause: unknown): FloeError {
  return new FloeError(
    'COMMIT_STATE_UNKNOWN',
    `${describe(request)} gave up after ${attempts} attempt(s) with its outcome unknown: ${messageOf(cause)}`,
    { cause, details: { commitId: request.commitId, attempts } },
  )
}
