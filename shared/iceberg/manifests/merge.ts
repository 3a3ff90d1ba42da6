// Manifest merging on append, as Iceberg's MergingSnapshotProducer and ManifestMergeManager do it:
// without it every commit adds one small manifest and scan planning slows with every round.
// The plan is pure (tested exhaustively); the rewrite reads and writes bytes, never storage.
import { FloeError } from '../../errors.ts'
import type { PartitionSpec, Schema } from '../types.ts'
import type { AvroCodec } from './avro-container.ts'
import { readManifest, writeManifest } from './manifest.ts'
import {
  type ManifestContent,
  ManifestEntryStatus,
  type ManifestEntryToWrite,
  type ManifestFile,
  type SerializeBound,
  type WrittenManifest,
} from './model.ts'

export interface ManifestMergePolicy {
  /** `commit.manifest-merge.enabled`, default true. */
  enabled: boolean
  /** `commit.manifest.min-count-to-merge`, default 100. */
  minCountToMerge: number
  /** `commit.manifest.target-size-bytes`, default 8 MiB. */
  targetSizeBytes: number
}

export const defaultManifestMergePolicy: Readonly<ManifestMergePolicy> = Object.freeze({
  enabled: true,
  minCountToMerge: 100,
  targetSizeBytes: 8 * 1024 * 1024,
})

/** The policy from table properties, with Iceberg's defaults for what they leave out. */
export function manifestMergePolicy(properties: Readonly<Record<string, string>>): ManifestMergePolicy {
  const integer = (key: string, fallback: number): number => {
    const text = properties[key]
    if (text === undefined) return fallback
    const value = Number(text.trim())
    if (!Number.isSafeInteger(value)) {
      throw new FloeError('CONFIG_INVALID', `table property ${key} is not an integer`, { details: { key, text } })
    }
    return value
  }
  const enabledText = properties['commit.manifest-merge.enabled']?.trim().toLowerCase()
  if (enabledText !== undefined && enabledText !== 'true' && enabledText !== 'false') {
    throw new FloeError('CONFIG_INVALID', 'table property commit.manifest-merge.enabled is not a boolean', {
      details: { text: enabledText },
    })
  }
  return {
    enabled: enabledText !== 'false',
    minCountToMerge: integer('commit.manifest.min-count-to-merge', defaultManifestMergePolicy.minCountToMerge),
    targetSizeBytes: integer('commit.manifest.target-size-bytes', defaultManifestMergePolicy.targetSizeBytes),
  }
}

export type ManifestMergeStep =
  | { action: 'keep'; manifest: ManifestFile }
  | { action: 'merge'; content: ManifestContent; partitionSpecId: number; manifests: ManifestFile[] }

export interface ManifestMergePlan {
  /** The new manifest list, in order: data manifests first, then delete manifests. */
  steps: ManifestMergeStep[]
  /** Manifests of earlier snapshots left with no live file (only DELETED entries): not listed again. */
  dropped: ManifestFile[]
}

const hasLiveFiles = (m: ManifestFile): boolean =>
  m.addedFilesCount === null || m.addedFilesCount > 0 || m.existingFilesCount === null || m.existingFilesCount > 0

/**
 * Bin-packs consecutive manifests from the end with a look-back of one bin (Java's
 * `ListPacker(target, 1, false).packEnd`): order is kept, and the bin left under-filled is the
 * first one, which holds the newest manifests and so fills up over the next commits.
 */
export function packEnd<T>(items: readonly T[], weight: (item: T) => number, targetWeight: number): T[][] {
  const bins: T[][] = []
  let current: T[] | undefined
  let currentWeight = 0
  for (let i = items.length - 1; i >= 0; i -= 1) {
    const item = items[i] as T
    const w = weight(item)
    if (current !== undefined && currentWeight + w <= targetWeight) {
      current.push(item)
      currentWeight += w
    } else {
      current = [item]
      currentWeight = w
      bins.push(current)
    }
  }
  return bins.map((bin) => bin.reverse()).reverse()
}

/**
 * Decides which manifests the new snapshot lists as they are and which it merges.
 * `manifests` is the snapshot's manifest list before merging, in Iceberg's order: the manifests
 * this commit wrote first, then the parent snapshot's. The first manifest of each content kind is
 * the one whose bin merges only once it holds `minCountToMerge` manifests; any other bin of more
 * than one manifest is full enough to merge now.
 */
export function planManifestMerge(input: {
  manifests: readonly ManifestFile[]
  snapshotId: bigint
  policy: ManifestMergePolicy
}): ManifestMergePlan {
  const { snapshotId, policy } = input
  const dropped: ManifestFile[] = []
  const kept: ManifestFile[] = []
  for (const manifest of input.manifests) {
    if (hasLiveFiles(manifest) || manifest.addedSnapshotId === snapshotId) kept.push(manifest)
    else dropped.push(manifest)
  }
  const steps: ManifestMergeStep[] = []
  for (const content of ['data', 'deletes'] as const) {
    const ofContent = kept.filter((m) => m.content === content)
    if (!policy.enabled) {
      for (const manifest of ofContent) steps.push({ action: 'keep', manifest })
      continue
    }
    const first = ofContent[0]
    const specIds = [...new Set(ofContent.map((m) => m.partitionSpecId))].sort((a, b) => b - a)
    for (const partitionSpecId of specIds) {
      const group = ofContent.filter((m) => m.partitionSpecId === partitionSpecId)
      for (const bin of packEnd(group, (m) => Number(m.manifestLength), policy.targetSizeBytes)) {
        const holdsFirst = first !== undefined && bin.includes(first)
        if (bin.length === 1 || (holdsFirst && bin.length < policy.minCountToMerge)) {
          for (const manifest of bin) steps.push({ action: 'keep', manifest })
        } else {
          steps.push({ action: 'merge', content, partitionSpecId, manifests: bin })
        }
      }
    }
  }
  return { steps, dropped }
}

export interface ManifestToMerge {
  manifest: ManifestFile
  /** The manifest file's bytes, as read from storage. */
  bytes: Uint8Array
}

/**
 * Rewrites one merge step into a single manifest for `snapshotId`. Files this snapshot added stay
 * ADDED; every other live file becomes EXISTING with its original snapshot id and data and file
 * sequence numbers made explicit; files deleted by earlier snapshots are dropped.
 */
export function mergeManifests(input: {
  /** The table's current schema. */
  schema: Schema
  /** The partition spec of the merged manifests (by their partition_spec_id). */
  spec: PartitionSpec
  snapshotId: bigint
  manifests: readonly ManifestToMerge[]
  serializeBound: SerializeBound
  codec?: AvroCodec
}): WrittenManifest {
  const { snapshotId, spec } = input
  const content = input.manifests[0]?.manifest.content ?? 'data'
  for (const { manifest } of input.manifests) {
    if (manifest.partitionSpecId !== spec['spec-id'] || manifest.content !== content) {
      throw new FloeError('INVARIANT_BROKEN', 'manifests merge only within one partition spec and content', {
        details: { manifestPath: manifest.manifestPath, partitionSpecId: manifest.partitionSpecId },
      })
    }
  }
  function* entries(): Generator<ManifestEntryToWrite> {
    for (const { manifest, bytes } of input.manifests) {
      for (const entry of readManifest(bytes, { inheritFrom: manifest }).entries) {
        if (entry.status === ManifestEntryStatus.DELETED) {
          if (entry.snapshotId === snapshotId) yield entry
        } else if (entry.status === ManifestEntryStatus.ADDED && entry.snapshotId === snapshotId) {
          yield entry
        } else {
          yield { ...entry, status: ManifestEntryStatus.EXISTING }
        }
      }
    }
  }
  return writeManifest({
    schema: input.schema,
    spec,
    formatVersion: 2,
    content,
    snapshotId,
    entries: entries(),
    serializeBound: input.serializeBound,
    codec: input.codec,
  })
}
