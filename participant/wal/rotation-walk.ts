// The participant's rotation walk for the shared-segment layout (docs/architecture.md, "Shared
// segments"): which of a worker's uncommitted rotations of one dataset are kept, which go, and
// where every assigned Kafka partition reads next. One pure function for every moment the WAL
// must be made to agree with the table: recovery at start, an ACK, a rejection, a resync, a
// revocation. The caller only changes what it passes as `from` (the table's offsets read at
// start, the ACK's offsets, the chain starts it holds) and `assigned` (the assignment now).
//
// A rotation is one unit: its files together hold every row of its ranges and one file alone
// holds no partition's range, so it is kept or dropped whole (S2, S6). It is kept iff every range
// it claims starts where that partition's kept chain ends (across at most the partition's declared
// log-start jump) and every partition it claims is assigned here. A dropped rotation leaves its
// partitions' chains where they were, so every later rotation holding one of them no longer
// chains and goes too, and those partitions read again from where their kept chain ends.
import type { LogStartJump } from '../../protocol/index.ts'

/** One partition's range in a rotation: the positions `[start, end)` read between two cuts. */
export interface WalkRange {
  topic: string
  partition: number
  start: bigint
  end: bigint
  /**
   * Set when the range continues a chain that ended at `after`, the records `[after, start)` gone
   * from Kafka when it was read (a declared log-start jump). Written into the rotation's manifest,
   * so the jump outlives a restart or a resync: without it the range would read as a gap.
   */
  after?: bigint
}

export interface WalkRotation {
  id: string
  /** Its order in the worker's dataset WAL. */
  sequence: bigint
  ranges: readonly WalkRange[]
  /** False when a file or sidecar it names is missing or unreadable (recovery on disk says). */
  complete?: boolean
}

export type WalkDropReason =
  /** Names a file or sidecar that is missing or does not read back. */
  | 'incomplete'
  /** The coordinator rejected it: dropped whole at the participant, whatever its ranges say. */
  | 'rejected'
  /** Every range ends at or before the table's offset: the table holds it. */
  | 'behind-table'
  /** A partition it claims has no table offset and no chain start: nothing proves where it starts. */
  | 'no-table-offset'
  /** A partition it claims is not assigned here (lost in a revocation, or moved while down). */
  | 'not-assigned'
  /** One range (not all) ends at or before the table's offset or straddles it (S4). */
  | 'stale-range'
  /** Another rotation claims the same start for one of its partitions. */
  | 'ambiguous'
  /** A range starts past its partition's kept chain because an earlier rotation holding it went. */
  | 'after-dropped'
  /** A range starts past its partition's kept chain with nothing dropped before it. */
  | 'gap'
  /** A range starts inside its partition's kept chain. */
  | 'overlap'

export interface WalkInput {
  /** The dataset's uncommitted rotations, any order (the walk takes them by sequence). */
  rotations: readonly WalkRotation[]
  /** Where each partition's chain starts (key: partitionKey); absent or undefined: unknown. */
  from: ReadonlyMap<string, bigint | undefined>
  /** The partitions assigned to this worker now (keys: partitionKey). */
  assigned: ReadonlySet<string>
  /** Declared log-start jumps (key: partitionKey): a range may start at `to` where the chain is at `from`. */
  jumps?: ReadonlyMap<string, LogStartJump>
  /** Ids of rotations the coordinator rejected. */
  rejected?: ReadonlySet<string>
}

export interface WalkResult {
  /** Oldest first; for every partition they chain from `from`. */
  kept: WalkRotation[]
  /** Oldest first, with why: delete their manifests, then their files. */
  dropped: Array<{ rotation: WalkRotation; reason: WalkDropReason }>
  /**
   * Per assigned partition: where its kept chain ends, where it reads next (undefined: unknown);
   * a chain ending where its declared jump starts ends where the jump ends.
   */
  next: Map<string, bigint | undefined>
  /** Assigned partitions that lost a range still ahead of the table: they read it again from `next`. */
  rewound: Set<string>
}

export function partitionKey(topic: string, partition: number): string {
  return `${partition}@${topic}`
}

/** The partition a partitionKey names, if it is of `topic`. */
export function partitionOfKey(key: string, topic: string): number | undefined {
  const at = key.indexOf('@')
  if (at < 0 || key.slice(at + 1) !== topic) return undefined
  return Number(key.slice(0, at))
}

export function walkRotations(input: WalkInput): WalkResult {
  const { from, assigned } = input
  const jumps = input.jumps ?? new Map<string, LogStartJump>()
  const rotations = [...input.rotations].sort(bySequence)
  const next = new Map<string, bigint | undefined>()
  for (const key of assigned) next.set(key, from.get(key))
  const ambiguous = ambiguousRotations(rotations, from)
  const stopped = new Set<string>()
  const rewound = new Set<string>()
  const kept: WalkRotation[] = []
  const dropped: WalkResult['dropped'] = []

  for (const rotation of rotations) {
    const reason = input.rejected?.has(rotation.id)
      ? 'rejected'
      : verdict(rotation, { from, assigned, jumps, next, stopped, ambiguous })
    if (reason === undefined) {
      kept.push(rotation)
      for (const range of rotation.ranges) next.set(partitionKey(range.topic, range.partition), range.end)
      continue
    }
    dropped.push({ rotation, reason })
    if (reason === 'behind-table') continue
    for (const range of rotation.ranges) {
      const key = partitionKey(range.topic, range.partition)
      const table = from.get(key)
      // a range the table already holds stops nothing: the partition's chain starts past it anyway
      if (table !== undefined && range.end <= table) continue
      stopped.add(key)
      if (assigned.has(key)) rewound.add(key)
    }
  }
  // A kept chain that ends where its declared jump starts goes on where the jump ends: the
  // partition reads from there (nothing before it is left in Kafka), whatever was dropped after.
  for (const [key, jump] of jumps) {
    if (next.has(key) && next.get(key) === jump.from) next.set(key, jump.to)
  }
  return { kept, dropped, next, rewound }
}

interface WalkState {
  from: ReadonlyMap<string, bigint | undefined>
  assigned: ReadonlySet<string>
  jumps: ReadonlyMap<string, LogStartJump>
  next: ReadonlyMap<string, bigint | undefined>
  stopped: ReadonlySet<string>
  ambiguous: ReadonlySet<string>
}

/** Why the rotation goes, or undefined if it is kept. The checks run from the most to the least telling reason. */
function verdict(rotation: WalkRotation, state: WalkState): WalkDropReason | undefined {
  if (rotation.complete === false) return 'incomplete'
  const tables = rotation.ranges.map((range) => state.from.get(partitionKey(range.topic, range.partition)))
  const behind = rotation.ranges.map((range, i) => {
    const table = tables[i]
    return table !== undefined && range.end <= table
  })
  if (rotation.ranges.length > 0 && behind.every(Boolean)) return 'behind-table'
  if (tables.some((table) => table === undefined)) return 'no-table-offset'
  if (rotation.ranges.some((range) => !state.assigned.has(partitionKey(range.topic, range.partition)))) {
    return 'not-assigned'
  }
  const straddles = rotation.ranges.some((range, i) => range.start < (tables[i] as bigint))
  if (straddles) return 'stale-range'
  if (state.ambiguous.has(rotation.id)) return 'ambiguous'
  for (const range of rotation.ranges) {
    const key = partitionKey(range.topic, range.partition)
    const at = state.next.get(key) as bigint
    if (range.start === at) continue
    const jump = state.jumps.get(key)
    if (jump && at === jump.from && range.start === jump.to) continue
    if (state.stopped.has(key)) return 'after-dropped'
    return range.start > at ? 'gap' : 'overlap'
  }
  return undefined
}

/** Rotations claiming a start another rotation also claims for the same partition, at or past the table. */
function ambiguousRotations(
  rotations: readonly WalkRotation[],
  from: ReadonlyMap<string, bigint | undefined>,
): Set<string> {
  const claims = new Map<string, string[]>()
  for (const rotation of rotations) {
    for (const range of rotation.ranges) {
      const key = partitionKey(range.topic, range.partition)
      const table = from.get(key)
      if (table !== undefined && range.end <= table) continue
      const claim = `${key}:${range.start}`
      const ids = claims.get(claim)
      if (ids) ids.push(rotation.id)
      else claims.set(claim, [rotation.id])
    }
  }
  const ambiguous = new Set<string>()
  for (const ids of claims.values()) if (ids.length > 1) for (const id of ids) ambiguous.add(id)
  return ambiguous
}

/**
 * The log-start jumps the rotations' ranges recorded (`after`), by partitionKey: the oldest one of
 * each partition (a chain crosses one jump; a later one does not chain and goes as a gap).
 */
export function recordedJumps(rotations: readonly WalkRotation[]): Map<string, LogStartJump> {
  const jumps = new Map<string, LogStartJump>()
  for (const rotation of [...rotations].sort(bySequence)) {
    for (const range of rotation.ranges) {
      const key = partitionKey(range.topic, range.partition)
      if (range.after !== undefined && !jumps.has(key)) jumps.set(key, { from: range.after, to: range.start })
    }
  }
  return jumps
}

function bySequence(a: WalkRotation, b: WalkRotation): number {
  if (a.sequence !== b.sequence) return a.sequence < b.sequence ? -1 : 1
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}
