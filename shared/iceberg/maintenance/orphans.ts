// Orphan cleanup beside running writers: the objects under the table's location that nothing the
// table's metadata names, once older than an age, are deleted. They are what writers leave behind:
// uploads of rounds that never committed, metadata files of commits that lost their race, spilled
// file lists, files of compactions that failed, deletions that failed.
//
// Why nothing referenced is deleted, not even a file being committed while the cleanup runs. The
// run reads the clock (`now`), loads the table (A, which names the location), lists every object
// under the location, then loads the table again (B), and deletes a listed object only when B does
// not reference it and it was last written more than `olderThanMs` before `now`. Take an object
// the run deletes:
// - If the commit that made the table reference it landed before B was read, B references it,
//   unless a later commit (an expiry) removed every snapshot and metadata file that named it: then
//   nothing can reach it again, since a removed snapshot never comes back.
// - Otherwise its commit lands after B was read, so after `now`. The object was listed, so it was
//   written before the listing, more than `olderThanMs` before `now`, and hence more than that
//   before its own commit. No writer holds an upload that long: a round commits within its commit
//   timeout, and the configuration refuses an age under twenty rounds. Listing before loading is
//   what makes this hold; loaded first, the table would miss a file committed just after the
//   load, however old its upload was (an upload waits up to a commit timeout for its commit).
// So an object committed concurrently is always young, and one committed earlier is always in B.
// The assumption is the age: an upload that waits longer than `olderThanMs` for its commit (a
// commit path that stayed down for days while workers held their uploads) can be deleted first.
//
// The listing answers locations in the prefix's form, and metadata may spell the same object
// otherwise (s3a:// for s3://, file:/ for file:///, an escaped name): both sides are compared by
// locationKey. As a safety net, every file under the location that A already referenced and B
// still does must be in the listing, since it was written before the listing began and a kept
// snapshot's files are never deleted: if one is missing, the listing and the references do not
// agree (a spelling locationKey does not know, an incomplete listing), and nothing is deleted.
// Spark's remove_orphan_files refuses a prefix mismatch for the same reason. Files only B names
// are exempt: they may have been committed, and even written, after the listing.
import type { Catalog, TableIdentifier } from '../../catalog/index.ts'
import { FloeError } from '../../errors.ts'
import { locationKey, type ObjectStorage, type StoredObject } from '../../storage/index.ts'
import { readManifest, readManifestList } from '../manifests/index.ts'
import { metadataDirectory, type TableMetadata } from '../metadata/index.ts'
import { readNamedFile } from './named-file.ts'

export interface OrphanRequest {
  catalog: Catalog
  /** Lists the table's location, reads its manifests, deletes the orphans. */
  storage: ObjectStorage
  table: TableIdentifier
  /** An unreferenced object is deleted once last written longer ago than this. */
  olderThanMs: number
  now?: () => number
  /** Find and count; delete nothing. */
  dryRun?: boolean
  /** At most this many deletions at once (default 8). */
  deleteConcurrency?: number
  /**
   * Objects that live and die with a referenced file though no metadata names them (a writer's
   * own sidecar): kept while the file is referenced, orphans once it is not. Hadoop's checksum
   * files (`.<name>.crc` beside `<name>`) are always treated so.
   */
  companionsOf?: (location: string) => readonly string[]
}

export interface OrphanResult {
  /** The table's location: every object examined lies under it. */
  location: string
  /** Objects under the location. */
  listed: number
  /** Listed objects the table references, or that live with a file it references. */
  referenced: number
  /** Unreferenced objects past the age: deleted, or with dryRun those that would be. */
  orphans: StoredObject[]
  orphanBytes: number
  deleted: number
  /** Deletions that failed: the objects stay, to be tried again on the next run. */
  failedDeletes: number
  /** Unreferenced objects kept for being younger than the age, such as uploads awaiting their commit. */
  young: number
}

/** A file the table references, and whether it must be in the listing (see the top comment). */
interface Reference {
  location: string
  expected: boolean
}

const readConcurrency = 8

export async function removeOrphanFiles(request: OrphanRequest): Promise<OrphanResult> {
  const { catalog, storage, table, olderThanMs } = request
  if (!(Number.isFinite(olderThanMs) && olderThanMs > 0)) {
    throw new FloeError('CONFIG_INVALID', `an orphan age must be a positive number of milliseconds, not ${olderThanMs}`)
  }
  // Read before anything else: the argument above needs `now` no later than the second load.
  const cutoff = (request.now ?? Date.now)() - olderThanMs
  const first = await catalog.loadTable(table)
  const location = first.metadata.location.replace(/\/+$/, '')
  const root = `${locationKey(location)}/`
  const listed = new Map<string, StoredObject>()
  for await (const object of storage.list(`${location}/`)) {
    const key = locationKey(object.location)
    // An object named like the location itself is a directory marker (Hadoop's S3A makes them).
    if (`${key}/` === root) continue
    if (!key.startsWith(root)) {
      throw new FloeError('INVARIANT_BROKEN', `the listing of ${location} answered ${object.location}, outside it`, {
        details: { location, object: object.location },
      })
    }
    listed.set(key, object)
  }
  const second = await catalog.loadTable(table)
  const { metadata } = second
  if (metadata['table-uuid'] !== first.metadata['table-uuid'] || `${locationKey(metadata.location)}/` !== root) {
    const message = `table ${location} was replaced or moved while it was listed; nothing deleted`
    throw new FloeError('COMMIT_CONFLICT', message, { details: { location } })
  }
  const references = await referencesOf(storage, first, second)
  checkAgreement(location, root, listed, references)

  const kept = new Set<string>()
  const companionsOf = request.companionsOf
  for (const [key, reference] of references) {
    kept.add(key)
    kept.add(locationKey(hadoopChecksumOf(reference.location)))
    if (companionsOf) for (const companion of companionsOf(reference.location)) kept.add(locationKey(companion))
  }
  let referenced = 0
  let young = 0
  const orphans: StoredObject[] = []
  for (const [key, object] of listed) {
    if (kept.has(key)) referenced++
    else if (object.lastModified > cutoff) young++
    else orphans.push(object)
  }
  orphans.sort((a, b) => (a.location < b.location ? -1 : a.location > b.location ? 1 : 0))
  const orphanBytes = orphans.reduce((sum, o) => sum + o.size, 0)
  const outcome = request.dryRun
    ? { deleted: 0, failed: 0 }
    : await deleteAll(storage, orphans, request.deleteConcurrency ?? 8)
  return {
    location,
    listed: listed.size,
    referenced,
    orphans,
    orphanBytes,
    deleted: outcome.deleted,
    failedDeletes: outcome.failed,
    young,
  }
}

interface Loaded {
  metadata: TableMetadata
  metadataLocation: string
}

/**
 * Every file the second load references, by locationKey, each marked expected when the first
 * load referenced it too; and what only the first load named without reading it (its manifest
 * lists, metadata and statistics files), kept this run in case a commit in between dropped them.
 */
async function referencesOf(storage: ObjectStorage, first: Loaded, second: Loaded): Promise<Map<string, Reference>> {
  const references = new Map<string, Reference>()
  const add = (location: string, expected: boolean) => {
    const key = locationKey(location)
    const known = references.get(key)
    if (known === undefined) references.set(key, { location, expected })
    else if (expected) known.expected = true
  }
  const earlier = new Set(metadataFilesOf(first).map(locationKey))
  for (const file of metadataFilesOf(second)) add(file, earlier.has(locationKey(file)))
  for (const file of metadataFilesOf(first)) add(file, false)
  // Hadoop tables name their current version here; a catalog's tables have none, which is fine.
  add(`${metadataDirectory(second.metadata)}/version-hint.text`, false)
  const earlierStatistics = new Set(statisticsOf(first.metadata).map(locationKey))
  for (const file of statisticsOf(second.metadata)) add(file, earlierStatistics.has(locationKey(file)))
  for (const file of statisticsOf(first.metadata)) add(file, false)

  const earlierSnapshots = new Set(first.metadata.snapshots.map((s) => s['snapshot-id']))
  for (const snapshot of first.metadata.snapshots) {
    for (const list of manifestListsOf(snapshot)) add(list, false)
  }
  // A manifest is expected when a snapshot of both loads lists it, whichever snapshot is read first.
  const manifests = new Map<string, Reference>()
  const lists: Reference[] = []
  for (const snapshot of second.metadata.snapshots) {
    const expected = earlierSnapshots.has(snapshot['snapshot-id'])
    const list = snapshot['manifest-list'] as string | undefined
    if (typeof list === 'string') lists.push({ location: list, expected })
    // Format v1 let a snapshot name its manifests inline instead of through a manifest list.
    for (const manifest of inlineManifestsOf(snapshot)) noteManifest(manifests, manifest, expected)
  }
  for (const list of lists) add(list.location, list.expected)
  await inBatches(lists, async (list) => {
    for (const manifest of readManifestList(await readNamedFile(storage, list.location)).manifests) {
      noteManifest(manifests, manifest.manifestPath, list.expected)
    }
  })
  for (const manifest of manifests.values()) add(manifest.location, manifest.expected)
  // Every entry, whatever its status: a DELETED entry's file is still read by older snapshots.
  await inBatches([...manifests.values()], async (manifest) => {
    for (const { dataFile } of readManifest(await readNamedFile(storage, manifest.location)).entries) {
      add(dataFile.filePath, manifest.expected)
      if (dataFile.referencedDataFile) add(dataFile.referencedDataFile, false)
    }
  })
  return references
}

function noteManifest(manifests: Map<string, Reference>, location: string, expected: boolean): void {
  const key = locationKey(location)
  const known = manifests.get(key)
  if (known === undefined) manifests.set(key, { location, expected })
  else if (expected) known.expected = true
}

/** The current metadata file and every one its metadata log names. */
function metadataFilesOf(loaded: Loaded): string[] {
  return [loaded.metadataLocation, ...loaded.metadata['metadata-log'].map((entry) => entry['metadata-file'])]
}

function statisticsOf(metadata: TableMetadata): string[] {
  return [...metadata.statistics, ...metadata['partition-statistics']].map((file) => file['statistics-path'])
}

function manifestListsOf(snapshot: TableMetadata['snapshots'][number]): string[] {
  const list = snapshot['manifest-list'] as string | undefined
  return [...(typeof list === 'string' ? [list] : []), ...inlineManifestsOf(snapshot)]
}

function inlineManifestsOf(snapshot: TableMetadata['snapshots'][number]): string[] {
  const inline = (snapshot as { manifests?: unknown }).manifests
  return Array.isArray(inline) ? inline.filter((m): m is string => typeof m === 'string') : []
}

/** `<dir>/.<name>.crc`: what Hadoop's local and checksummed file systems write beside `<dir>/<name>`. */
function hadoopChecksumOf(location: string): string {
  const slash = location.lastIndexOf('/')
  return `${location.slice(0, slash + 1)}.${location.slice(slash + 1)}.crc`
}

/**
 * Refuses to go on when a file written before the listing began, and referenced all along, is not
 * in it: the listing and the table do not name files alike, and deleting by such a listing could
 * remove live files.
 */
function checkAgreement(
  location: string,
  root: string,
  listed: ReadonlyMap<string, StoredObject>,
  references: ReadonlyMap<string, Reference>,
): void {
  const missing: string[] = []
  for (const [key, reference] of references) {
    if (reference.expected && key.startsWith(root) && !listed.has(key)) missing.push(reference.location)
  }
  if (missing.length === 0) return
  throw new FloeError(
    'INVARIANT_BROKEN',
    `the listing of ${location} and the table's references do not agree: ${missing.length} referenced file(s) ` +
      `under it are not listed (${missing[0]}${missing.length > 1 ? ', ...' : ''}); nothing deleted`,
    { details: { location, missing: missing.slice(0, 10), count: missing.length } },
  )
}

async function inBatches<T>(items: readonly T[], each: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += readConcurrency) {
    await Promise.all(items.slice(i, i + readConcurrency).map(each))
  }
}

async function deleteAll(
  storage: ObjectStorage,
  orphans: readonly StoredObject[],
  concurrency: number,
): Promise<{ deleted: number; failed: number }> {
  let deleted = 0
  let failed = 0
  const batch = Math.max(1, Math.floor(concurrency))
  for (let i = 0; i < orphans.length; i += batch) {
    const outcomes = await Promise.allSettled(orphans.slice(i, i + batch).map((o) => storage.delete(o.location)))
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') failed++
      else if (outcome.value) deleted++
    }
  }
  return { deleted, failed }
}
