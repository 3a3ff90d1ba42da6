// Writes what a new append snapshot needs before the catalog sees it: the manifest of the new
// files, merged manifests when the table holds many small ones, and the manifest list. Object
// names carry fresh UUIDs, so an attempt that loses never overwrites what another wrote.
import { randomUUID } from 'node:crypto'
import { FloeError } from '../../errors.ts'
import type { ObjectStorage } from '../../storage/index.ts'
import {
  ManifestEntryStatus,
  type ManifestFile,
  manifestFileOf,
  manifestMergePolicy,
  mergeManifests,
  planManifestMerge,
  readManifestList,
  writeManifest,
  writeManifestList,
} from '../manifests/index.ts'
import {
  currentSchema,
  defaultSpec,
  metadataDirectory,
  nextSequenceNumber,
  refSnapshotId,
  type Snapshot,
  type SnapshotSummary,
  snapshotById,
  specById,
  type TableMetadata,
} from '../metadata/index.ts'
import type { DataFile, PrimitiveType } from '../types.ts'
import { toBinarySingleValue } from '../values/index.ts'
import { appendSummary } from './summary.ts'

const serializeBound = (type: PrimitiveType, value: Parameters<typeof toBinarySingleValue>[1]) =>
  toBinarySingleValue(type, value)

export interface NewFilesManifest {
  /** The files it lists, to know whether a retry can reuse it. */
  files: readonly DataFile[]
  /** One manifest per partition spec among the files (a manifest holds files of one spec). */
  manifests: ManifestFile[]
}

/**
 * Writes the manifests of the files this append adds (entries ADDED, tracking fields inherited):
 * one per partition spec. Files written before another engine evolved the table's spec keep
 * their spec, and go into a manifest of that spec, as Iceberg's own writers do.
 */
export async function writeNewFilesManifest(
  storage: ObjectStorage,
  metadata: TableMetadata,
  snapshotId: bigint,
  files: readonly DataFile[],
): Promise<NewFilesManifest> {
  const bySpec = new Map<number, DataFile[]>()
  for (const file of files) {
    const same = bySpec.get(file.specId)
    if (same) same.push(file)
    else bySpec.set(file.specId, [file])
  }
  // the default spec first: the manifest list leads with it when nothing older is added
  const defaultId = defaultSpec(metadata)['spec-id']
  const specIds = [...bySpec.keys()].sort((a, b) => (a === defaultId ? -1 : b === defaultId ? 1 : b - a))
  const manifests: ManifestFile[] = []
  for (const specId of specIds) {
    const spec = specById(metadata, specId)
    if (!spec) {
      const first = bySpec.get(specId)?.[0]
      throw new FloeError(
        'INVARIANT_BROKEN',
        `data file ${first?.filePath} follows spec ${specId}, unknown to the table`,
        {
          details: { filePath: first?.filePath, specId },
        },
      )
    }
    const written = writeManifest({
      schema: currentSchema(metadata),
      spec,
      formatVersion: 2,
      content: 'data',
      snapshotId,
      entries: (bySpec.get(specId) ?? []).map((dataFile) => ({ status: ManifestEntryStatus.ADDED, dataFile })),
      serializeBound,
    })
    const location = `${metadataDirectory(metadata)}/${randomUUID()}-m${manifests.length}.avro`
    await storage.put(location, written.bytes)
    manifests.push(manifestFileOf(written, location))
  }
  return { files, manifests }
}

export interface SnapshotToCommit {
  snapshot: Snapshot
  /** Objects written for this attempt only (merged manifests, the list), to delete if it loses. */
  attemptObjects: string[]
}

/**
 * Builds the snapshot of an append on top of the current `main` of `metadata`: lists the new
 * manifest with the parent's manifests, merging small ones as the table's
 * `commit.manifest.*` properties say, and writes the manifest list.
 */
export async function writeAppendSnapshot(input: {
  storage: ObjectStorage
  metadata: TableMetadata
  snapshotId: bigint
  newFiles: NewFilesManifest
  summary: Readonly<Record<string, string>>
  attempt: number
  now: number
}): Promise<SnapshotToCommit> {
  const { storage, metadata } = input
  const parent = parentOf(metadata)
  const parentManifests = parent ? readManifestList(await storage.get(parent['manifest-list'])).manifests : []
  const summary: SnapshotSummary = {
    operation: 'append',
    ...appendSummary(input.newFiles.files, parent?.summary, input.summary),
  }
  return writeSnapshot({ ...input, manifests: [...input.newFiles.manifests, ...parentManifests], summary })
}

/** The snapshot `main` points at, if any. */
export function parentOf(metadata: TableMetadata): Snapshot | undefined {
  const parentId = refSnapshotId(metadata)
  return parentId === null ? undefined : snapshotById(metadata, parentId)
}

/**
 * Writes a snapshot on top of `main` whose manifest list holds `manifests` (this commit's own
 * first, then the ones it keeps from the parent), merged as the table's `commit.manifest.*`
 * properties say, as every Iceberg operation does, so no kind of commit lets manifests pile up.
 */
export async function writeSnapshot(input: {
  storage: ObjectStorage
  metadata: TableMetadata
  snapshotId: bigint
  manifests: readonly ManifestFile[]
  /** The whole summary, `operation` included. */
  summary: Readonly<SnapshotSummary>
  attempt: number
  now: number
}): Promise<SnapshotToCommit> {
  const { storage, metadata, snapshotId } = input
  const parentId = refSnapshotId(metadata)
  const sequenceNumber = nextSequenceNumber(metadata)
  const attemptObjects: string[] = []
  const plan = planManifestMerge({
    manifests: input.manifests,
    snapshotId,
    policy: manifestMergePolicy(metadata.properties),
  })
  const manifests: ManifestFile[] = []
  for (const step of plan.steps) {
    if (step.action === 'keep') {
      manifests.push(step.manifest)
      continue
    }
    const spec = specById(metadata, step.partitionSpecId)
    if (!spec) throw new TypeError(`manifest of unknown partition spec ${step.partitionSpecId}`)
    const merged = mergeManifests({
      schema: currentSchema(metadata),
      spec,
      snapshotId,
      manifests: await Promise.all(
        step.manifests.map(async (manifest) => ({ manifest, bytes: await storage.get(manifest.manifestPath) })),
      ),
      serializeBound,
    })
    const location = `${metadataDirectory(metadata)}/${randomUUID()}-m${manifests.length}.avro`
    await storage.put(location, merged.bytes)
    attemptObjects.push(location)
    manifests.push(manifestFileOf(merged, location))
  }

  const listLocation = `${metadataDirectory(metadata)}/snap-${snapshotId}-${input.attempt}-${randomUUID()}.avro`
  await storage.put(
    listLocation,
    writeManifestList({ snapshotId, parentSnapshotId: parentId, sequenceNumber, manifests }),
  )
  attemptObjects.push(listLocation)

  const snapshot: Snapshot = {
    'snapshot-id': snapshotId,
    ...(parentId === null ? {} : { 'parent-snapshot-id': parentId }),
    'sequence-number': sequenceNumber,
    'timestamp-ms': Math.max(input.now, metadata['last-updated-ms']),
    'manifest-list': listLocation,
    summary: { ...input.summary },
    'schema-id': metadata['current-schema-id'],
  }
  return { snapshot, attemptObjects }
}
