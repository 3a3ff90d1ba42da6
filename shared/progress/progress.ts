// Floe's progress marker: which Kafka offsets a consumer group has committed into a table
// (docs/design.md invariants 1 and 8). The marker is JSON `{"topic": {"0": 123, ...}}` of next offsets,
// cumulative for every partition the group ever committed, carried in the summary of every Floe
// snapshot and mirrored in a table property that survives snapshot expiry. Pure. Shared: the participant positions from it, the coordinator checks against it, `floe status`
// reports it.

import { FloeError } from '../errors.ts'
import { ancestorsOfRef, type Snapshot, type TableMetadata } from '../iceberg/metadata/index.ts'
import { type JsonValue, parseJson, stringifyJson } from '../json/index.ts'

/** Topic -> partition -> the next offset the table holds (the group's committed position). */
export type Progress = ReadonlyMap<string, ReadonlyMap<number, bigint>>

/** Summary keys Floe writes on its snapshots. */
export const floeSummaryKeys = {
  /** The round's commit id: finds a commit whose outcome was unknown (shared/iceberg/commit). */
  commitId: 'floe.commit-id',
  /** How many partitions this snapshot advanced. */
  roundPartitions: 'floe.round.partitions',
  /** How many partitions the round rejected (left out when none). */
  roundRejected: 'floe.round.rejected',
  /** 'true' when the round timed out and committed only the partitions that answered. */
  roundPartial: 'floe.round.partial',
} as const

/** The summary key and table property of a group's progress marker. */
export function offsetsKey(group: string): string {
  return `floe.offsets.${group}`
}

/**
 * The key of a routed table's marker under a route generation (docs/architecture.md, "A route
 * changed while the fleet runs"). Generation 0 keeps the key markers always had; the generation
 * comes before the group so that no group name can spell another's key.
 */
export function generationOffsetsKey(group: string, generation: number): string {
  return generation === 0 ? offsetsKey(group) : `floe.offsets@${generation}.${group}`
}

/** A key of some group's marker, of any route generation. */
export function isOffsetsKey(key: string): boolean {
  return key.startsWith('floe.offsets.') || /^floe\.offsets@\d+\./.test(key)
}

/** A key of `group`'s marker, of any route generation. */
export function isGroupOffsetsKey(key: string, group: string): boolean {
  return (
    key === offsetsKey(group) ||
    (key.endsWith(`.${group}`) && /^floe\.offsets@\d+\.$/.test(key.slice(0, key.length - group.length)))
  )
}

/** The summary key of the records a round lost to retention (only on snapshots that lost some). */
export function lostRecordsKey(group: string): string {
  return `floe.lost-records.${group}`
}

const partitionKey = /^(0|[1-9]\d{0,9})$/

function broken(message: string, details: Record<string, unknown>): FloeError {
  return new FloeError('INVARIANT_BROKEN', message, { details })
}

function offsetOf(value: JsonValue | undefined): bigint | undefined {
  if (typeof value === 'bigint') return value >= 0n ? value : undefined
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value)
  return undefined
}

/**
 * Reads a marker. A marker that is not the shape Floe writes means the table's record of
 * progress is damaged; committing on a guess could duplicate or lose data, so it is fatal
 * (INVARIANT_BROKEN) and an operator decides.
 */
export function decodeProgress(text: string): Progress {
  let parsed: JsonValue
  try {
    parsed = parseJson(text)
  } catch (cause) {
    throw new FloeError('INVARIANT_BROKEN', 'the progress marker is not JSON', { cause, details: { marker: text } })
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw broken('the progress marker is not a JSON object', { marker: text })
  }
  const progress = new Map<string, Map<number, bigint>>()
  for (const [topic, partitions] of Object.entries(parsed)) {
    if (partitions === null || typeof partitions !== 'object' || Array.isArray(partitions)) {
      throw broken(`the progress marker of topic ${topic} is not an object`, { marker: text })
    }
    const offsets = new Map<number, bigint>()
    for (const [key, value] of Object.entries(partitions)) {
      const offset = offsetOf(value)
      if (!partitionKey.test(key) || Number(key) > 2 ** 31 - 1 || offset === undefined) {
        throw broken(`the progress marker of ${topic} holds ${key}: ${String(value)}`, { marker: text })
      }
      offsets.set(Number(key), offset)
    }
    progress.set(topic, offsets)
  }
  return progress
}

/** Writes a marker: topics and partitions in order, so equal progress gives equal text. */
export function encodeProgress(progress: Progress): string {
  const marker: Record<string, Record<string, bigint>> = {}
  for (const topic of [...progress.keys()].sort()) {
    const offsets: Record<string, bigint> = {}
    // Integer-like keys keep ascending numeric order in a JS object, whatever the insertion order.
    for (const [partition, offset] of progress.get(topic) ?? []) offsets[String(partition)] = offset
    marker[topic] = offsets
  }
  // stringifyJson writes bigint as plain digits: offsets beyond 2^53 stay exact.
  return stringifyJson(marker)
}

/** The next offset the table holds for a partition, undefined when the group never committed it. */
export function tableOffset(progress: Progress, topic: string, partition: number): bigint | undefined {
  return progress.get(topic)?.get(partition)
}

export interface CommittedOffset {
  topic: string
  partition: number
  /** The next offset to read after this commit. */
  offset: bigint
}

/**
 * The cumulative marker after a commit: every partition of `previous`, with the committed ones
 * moved forward. A committed offset behind the previous one would make the table re-read what it
 * holds (duplicates): the contiguity check makes that impossible, so it is an INVARIANT_BROKEN.
 */
export function mergeProgress(previous: Progress, committed: Iterable<CommittedOffset>): Progress {
  const merged = new Map<string, Map<number, bigint>>()
  for (const [topic, offsets] of previous) merged.set(topic, new Map(offsets))
  for (const { topic, partition, offset } of committed) {
    let offsets = merged.get(topic)
    if (!offsets) {
      offsets = new Map()
      merged.set(topic, offsets)
    }
    const before = offsets.get(partition)
    if (before !== undefined && offset < before) {
      throw broken(`committing ${topic}/${partition} at ${offset} would move it back from ${before}`, {
        topic,
        partition,
        offset: String(offset),
        previous: String(before),
      })
    }
    offsets.set(partition, offset)
  }
  return merged
}

export type ProgressSource =
  | { kind: 'snapshot'; snapshotId: bigint }
  | { kind: 'property' }
  /** Nothing yet: every partition is new to the table. */
  | { kind: 'none' }

export interface FoundProgress {
  progress: Progress
  source: ProgressSource
}

/**
 * A group's progress as the table records it (invariant 1): the marker of the newest ancestor of
 * `main` that carries it, skipping the snapshots of other writers (compaction, other jobs); else
 * the table property (invariant 8: expiry dropped every Floe snapshot); else nothing.
 *
 * Ancestors win over the property on purpose: a rollback of `main` does not roll back
 * properties, and after a rollback the table holds only what its ancestors hold.
 */
export function findProgress(metadata: TableMetadata, group: string): FoundProgress {
  return findProgressIn(metadata, group, ancestorsOfRef(metadata))
}

/** {@link findProgress}, the map only. */
export function readProgress(metadata: TableMetadata, group: string): Progress {
  return findProgress(metadata, group).progress
}

/** {@link findProgress} over a given list of ancestors (newest first). */
export function findProgressIn(metadata: TableMetadata, group: string, ancestors: Iterable<Snapshot>): FoundProgress {
  return findMarkerIn(metadata, offsetsKey(group), ancestors)
}

/**
 * {@link findProgressIn} for the marker under `key`: a routed table keeps one marker per route
 * generation, each under a key of its own.
 */
export function findMarkerIn(metadata: TableMetadata, key: string, ancestors: Iterable<Snapshot>): FoundProgress {
  for (const snapshot of ancestors) {
    const marker = snapshot.summary[key]
    if (marker !== undefined) {
      return { progress: decodeProgress(marker), source: { kind: 'snapshot', snapshotId: snapshot['snapshot-id'] } }
    }
  }
  const property = metadata.properties[key]
  if (property !== undefined) return { progress: decodeProgress(property), source: { kind: 'property' } }
  return { progress: new Map(), source: { kind: 'none' } }
}

/**
 * For every group whose marker an ancestor of `main` carries, the newest such ancestor: what an
 * expiry must keep so that each group's progress stays where its own snapshots put it.
 */
export function markerSnapshots(metadata: TableMetadata): Set<bigint> {
  const seen = new Set<string>()
  const keep = new Set<bigint>()
  for (const snapshot of ancestorsOfRef(metadata)) {
    for (const key of Object.keys(snapshot.summary)) {
      if (!isOffsetsKey(key) || seen.has(key)) continue
      seen.add(key)
      keep.add(snapshot['snapshot-id'])
    }
  }
  return keep
}
