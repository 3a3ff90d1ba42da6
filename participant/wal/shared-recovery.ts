// Recovery of a dataset's shared WAL folder at start, after the worker joined the group and read
// the table's offsets (docs/architecture.md, "Recovery at restart"):
//   1. `active_*` and temporaries are deleted; a segment or sidecar no readable manifest names is
//      deleted (a cut that crashed before its manifest's rename: the rotation never existed); a
//      manifest naming a missing, unreadable or other-spec file is dropped with every file it names;
//      a routed manifest whose claims are not within its ranges, or whose claimed tables are not
//      its files' tables, is unreadable (it does not say what its files hold): deleted, and its
//      files with it as files no manifest names;
//   2. the rotation walk (rotation-walk.ts) with the table's offsets and the assignment keeps the
//      rotations that chain from the table and drops the rest whole;
//   3. every assigned partition reads from where its kept chain ends.
// Deletions remove manifests first, durably, then files: a crash in between leaves files no
// manifest names, which the next recovery deletes.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { isFloeError } from '../../shared/index.ts'
import { deleteWalFiles, listWalDirectory, storageError } from './durable.ts'
import {
  decodeRotationManifest,
  decodeSharedSidecar,
  type RotationManifest,
  type SharedRotation,
  type SharedSegment,
} from './rotation-manifest.ts'
import { partitionKey, recordedJumps, type WalkDropReason, type WalkRotation, walkRotations } from './rotation-walk.ts'
import { parseSharedFileName, sharedSegmentName } from './shared-names.ts'
import { readSidecarWithSize } from './sidecar.ts'
import { claimsMatchFiles } from './table-claims.ts'

export type SharedDeletionReason =
  | 'active'
  | 'temporary'
  /** A manifest that does not read back, whose content disagrees with its name, or whose claims disagree with its ranges or files. */
  | 'unreadable-manifest'
  /** A segment or sidecar no manifest names. */
  | 'unclaimed'
  /** A manifest naming a missing file or sidecar, one that does not read back, or one of another rotation. */
  | 'incomplete-rotation'
  /** Written under a partition spec other than the dataset's now. */
  | 'spec-changed'
  | Exclude<WalkDropReason, 'incomplete'>

export interface SharedDeletion {
  file: string
  reason: SharedDeletionReason
}

export interface RecoverSharedOptions {
  topic: string
  /** The table's offsets (key: partition); absent: the table has none for it. */
  tableOffsets: ReadonlyMap<number, bigint>
  /** The Kafka partitions assigned to the worker now. */
  assigned: readonly number[]
  /** When given, rotations with a file written under another partition spec are dropped. */
  specId?: number
}

export interface RecoveredSharedLog {
  /** Oldest first; they chain from the table's offsets: hand them to SharedLog as `recovered`. */
  rotations: SharedRotation[]
  /** Per assigned partition: where it reads from (undefined: no table offset, invariant 2 decides). */
  next: Map<number, bigint | undefined>
  /** The sequence the next rotation takes: past every manifest seen, kept or not. */
  nextSequence: bigint
  deleted: SharedDeletion[]
  /** Names this layout does not make: left alone. */
  unknown: string[]
}

/** Applies recovery to the folder (deletions fsynced); a folder that does not exist holds nothing. */
export async function recoverSharedLog(dir: string, options: RecoverSharedOptions): Promise<RecoveredSharedLog> {
  const names = await listWalDirectory(dir)
  const deleted: SharedDeletion[] = []
  const unknown: string[] = []
  const present = new Set(names)
  const manifests: Array<{ file: string; manifest: RotationManifest }> = []
  let nextSequence = 1n
  for (const file of names) {
    const name = parseSharedFileName(file)
    if (!name) unknown.push(file)
    else if (name.kind === 'active' || name.kind === 'temporary') deleted.push({ file, reason: name.kind })
    else if (name.kind === 'rotation') {
      if (name.sequence >= nextSequence) nextSequence = name.sequence + 1n
      const manifest = await readManifest(dir, file)
      if (manifest && manifest.id === name.uuid && manifest.sequence === name.sequence)
        manifests.push({ file, manifest })
      else deleted.push({ file, reason: 'unreadable-manifest' })
    }
  }

  // a file two manifests claim cannot be trusted to either
  const claims = new Map<string, number>()
  for (const { manifest } of manifests) for (const uuid of manifest.files) claims.set(uuid, (claims.get(uuid) ?? 0) + 1)
  const candidates: Array<{
    rotation: WalkRotation
    file: string
    manifest: RotationManifest
    segments?: SharedSegment[]
    broken?: SharedDeletionReason
  }> = []
  for (const { file, manifest } of manifests) {
    const read = manifest.files.some((uuid) => (claims.get(uuid) ?? 0) > 1)
      ? 'incomplete-rotation'
      : await readSegments(dir, manifest, present, options.specId)
    if (read === 'unreadable-manifest') {
      deleted.push({ file, reason: read })
      continue
    }
    const rotation: WalkRotation = { id: manifest.id, sequence: manifest.sequence, ranges: manifest.ranges }
    if (typeof read === 'string')
      candidates.push({ rotation: { ...rotation, complete: false }, file, manifest, broken: read })
    else candidates.push({ rotation, file, manifest, segments: read })
  }
  const claimed = new Set<string>()
  for (const { manifest } of candidates) {
    for (const uuid of manifest.files) {
      claimed.add(sharedSegmentName(uuid, 'parquet'))
      claimed.add(sharedSegmentName(uuid, 'json'))
    }
  }
  for (const file of names) {
    const name = parseSharedFileName(file)
    if ((name?.kind === 'segment' || name?.kind === 'sidecar') && !claimed.has(file)) {
      deleted.push({ file, reason: 'unclaimed' })
    }
  }

  const from = new Map<string, bigint | undefined>()
  for (const [partition, offset] of options.tableOffsets) from.set(partitionKey(options.topic, partition), offset)
  const assigned = new Set(options.assigned.map((partition) => partitionKey(options.topic, partition)))
  const found = candidates.map((candidate) => candidate.rotation)
  // A range past a log-start jump says where its chain ended: nothing durable is dropped as a gap.
  const walked = walkRotations({ rotations: found, from, assigned, jumps: recordedJumps(found) })
  const byId = new Map(candidates.map((candidate) => [candidate.rotation.id, candidate]))
  const doomedManifests: string[] = []
  const doomedFiles: string[] = []
  for (const { rotation, reason } of walked.dropped) {
    const candidate = byId.get(rotation.id) as (typeof candidates)[number]
    const why: SharedDeletionReason = reason === 'incomplete' ? (candidate.broken ?? 'incomplete-rotation') : reason
    doomedManifests.push(candidate.file)
    deleted.push({ file: candidate.file, reason: why })
    for (const uuid of candidate.manifest.files) {
      for (const file of [sharedSegmentName(uuid, 'json'), sharedSegmentName(uuid, 'parquet')]) {
        if (!present.has(file)) continue
        doomedFiles.push(file)
        deleted.push({ file, reason: why })
      }
    }
  }
  for (const deletion of deleted) {
    if (deletion.reason === 'unreadable-manifest') doomedManifests.push(deletion.file)
    else if (!doomedManifests.includes(deletion.file) && !doomedFiles.includes(deletion.file))
      doomedFiles.push(deletion.file)
  }
  await deleteWalFiles(dir, doomedManifests)
  await deleteWalFiles(dir, doomedFiles)

  const rotations = walked.kept.map((rotation) => {
    const candidate = byId.get(rotation.id) as (typeof candidates)[number]
    return {
      id: rotation.id,
      sequence: rotation.sequence,
      reason: 'recovered' as const,
      ranges: rotation.ranges,
      segments: candidate.segments ?? [],
      ...(candidate.manifest.tables === undefined ? {} : { tables: candidate.manifest.tables }),
      manifestPath: join(dir, candidate.file),
    }
  })
  const next = new Map<number, bigint | undefined>()
  for (const partition of options.assigned) next.set(partition, walked.next.get(partitionKey(options.topic, partition)))
  return { rotations, next, nextSequence, deleted, unknown }
}

async function readManifest(dir: string, file: string): Promise<RotationManifest | undefined> {
  let text: string
  try {
    text = await readFile(join(dir, file), 'utf8')
  } catch (error) {
    throw storageError('cannot read WAL file', join(dir, file), error)
  }
  try {
    return decodeRotationManifest(text)
  } catch (error) {
    if (isFloeError(error)) return undefined
    throw error
  }
}

async function readSegments(
  dir: string,
  manifest: RotationManifest,
  present: ReadonlySet<string>,
  specId: number | undefined,
): Promise<SharedSegment[] | SharedDeletionReason> {
  const segments: SharedSegment[] = []
  for (const uuid of manifest.files) {
    const parquet = sharedSegmentName(uuid, 'parquet')
    const json = sharedSegmentName(uuid, 'json')
    if (!present.has(parquet) || !present.has(json)) return 'incomplete-rotation'
    const jsonPath = join(dir, json)
    const localPath = join(dir, parquet)
    const read = await readSidecarWithSize(jsonPath, localPath, decodeSharedSidecar)
    if (!read) return 'incomplete-rotation'
    const { segment } = read.decoded
    const size = read.size
    if (segment.uuid !== uuid || segment.rotation !== manifest.id || segment.sizeBytes !== size) {
      return 'incomplete-rotation'
    }
    if (specId !== undefined && segment.dataFile.specId !== specId) return 'spec-changed'
    segments.push({ ...segment, localPath, jsonPath })
  }
  // a file of a table the manifest does not claim, or a claimed table with no file
  if (!claimsMatchFiles(manifest.tables, segments)) return 'unreadable-manifest'
  return segments
}
