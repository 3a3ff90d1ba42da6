// Which WAL files of one Kafka partition survive a restart, decided from their names and the
// table's next offset alone (docs/design.md, "Recovery at start"). Pure, so every crash point is a
// table-driven test.
//
// Beyond the design's four rules, the plan treats a rotation as one unit: all segments of one
// rotation share `<start>-<end>`, and a rotation is reusable only if every one of its segments
// has both files. A `.parquet` without its `.json` (or the reverse) means the rotation was cut
// short (a crash between the sidecars and the renames) or its deletion was (sidecars are deleted
// first, see durable.ts); its surviving siblings would then stand for the range with rows
// missing, so the whole rotation goes. Kept rotations must chain from the table's offset without
// a gap or an overlap; the first that does not ends the chain, and everything after it goes.
//
// One gap is crossed: a log-start jump the partition recorded (jump-marker.ts) where the chain
// ends, with rotations at its end. Those were read past records retention deleted unread; without
// the marker they would go as a gap, and a log start that moved on into them meanwhile would lose
// what the WAL held there. Files at the chain's end win over a marker: they are what was read.
import type { LogStartJump } from '../../protocol/index.ts'
import { parseJumpFileName, parseWalFileName } from './names.ts'

export type RecoveryDeletionReason =
  /** An open segment: no footer, never reported. */
  | 'active'
  /** A sidecar rewrite staged and never renamed into place. */
  | 'temporary'
  /** A `.parquet` without its `.json`, or the reverse. */
  | 'orphan'
  /** A whole segment of a rotation that lost another segment's file. */
  | 'incomplete-rotation'
  /** `end <= tableOffset`: the table already holds these records. */
  | 'behind-table'
  /** `start < tableOffset < end`: part of it is committed, so it cannot be reported again. */
  | 'straddles-table'
  /** Starts after where the chain of kept rotations ends. */
  | 'gap'
  /** Starts inside the chain of kept rotations. */
  | 'overlap'
  /** Another rotation starts at the same offset; neither can be trusted over the other. */
  | 'ambiguous'
  /** The table has never committed this partition, so no file can be proved to start at its offset. */
  | 'no-table-offset'
  /** A recorded log-start jump the chain of kept rotations does not cross. */
  | 'jump-not-crossed'

export interface RecoveryDeletion {
  file: string
  reason: RecoveryDeletionReason
}

/** One rotation kept for reuse: its range, its segments' UUIDs and its file names. */
export interface KeptRotation {
  start: bigint
  end: bigint
  uuids: string[]
  files: string[]
}

export interface RecoveryPlan {
  deletions: RecoveryDeletion[]
  /** In offset order; they chain from the table's offset. */
  kept: KeptRotation[]
  /** Names the WAL does not make (or of another Kafka partition): left alone, to be reported. */
  unknown: string[]
  /** The end of the last kept rotation, else the table's offset; undefined without a table offset. */
  resumeFrom: bigint | undefined
  /** The recorded jump the kept rotations cross (its marker kept): they chain from the table's offset across it. */
  jump?: KeptJump
}

export interface KeptJump extends LogStartJump {
  /** Its marker's name. */
  file: string
}

export interface PlanOptions {
  /** Cross a recorded jump (the default); false drops what lies past it as a gap. */
  crossJumps?: boolean
}

export interface RecoveryScope {
  topic: string
  partition: number
}

interface Pair {
  uuid: string
  parquet?: string
  json?: string
}

interface RangeFiles {
  start: bigint
  end: bigint
  pairs: Map<string, Pair>
}

/**
 * @param files names in the partition's WAL folder
 * @param tableOffset the table's next offset for this partition; undefined if it has none
 * @param scope when given, files of another topic or partition are reported as unknown
 */
export function planRecovery(
  files: readonly string[],
  tableOffset: bigint | undefined,
  scope?: RecoveryScope,
  options: PlanOptions = {},
): RecoveryPlan {
  const deletions: RecoveryDeletion[] = []
  const unknown: string[] = []
  const ranges = new Map<string, RangeFiles>()
  const jumps: KeptJump[] = []
  const inScope = (name: { topic: string; partition: number }) =>
    !scope || (name.topic === scope.topic && name.partition === scope.partition)
  for (const file of files) {
    const marker = parseJumpFileName(file)
    if (marker && inScope(marker)) {
      jumps.push({ ...marker.jump, file })
      continue
    }
    const name = parseWalFileName(file)
    if (!name || !inScope(name)) {
      unknown.push(file)
      continue
    }
    if (name.kind === 'active' || name.kind === 'temporary') {
      deletions.push({ file, reason: name.kind })
      continue
    }
    const start = name.start as bigint
    const end = name.end as bigint
    const rangeKey = `${start}-${end}`
    let range = ranges.get(rangeKey)
    if (!range) {
      range = { start, end, pairs: new Map() }
      ranges.set(rangeKey, range)
    }
    let pair = range.pairs.get(name.uuid)
    if (!pair) {
      pair = { uuid: name.uuid }
      range.pairs.set(name.uuid, pair)
    }
    if (name.kind === 'ready-parquet') pair.parquet = file
    else pair.json = file
  }

  const whole: RangeFiles[] = []
  for (const range of ranges.values()) {
    const pairs = [...range.pairs.values()]
    if (pairs.every((pair) => pair.parquet && pair.json)) {
      whole.push(range)
      continue
    }
    for (const pair of pairs) {
      const reason = pair.parquet && pair.json ? 'incomplete-rotation' : 'orphan'
      for (const file of filesOf(pair)) deletions.push({ file, reason })
    }
  }

  const deleteRange = (range: RangeFiles, reason: RecoveryDeletionReason) => {
    for (const pair of range.pairs.values()) for (const file of filesOf(pair)) deletions.push({ file, reason })
  }
  if (tableOffset === undefined) {
    for (const range of whole) deleteRange(range, 'no-table-offset')
    for (const jump of jumps) deletions.push({ file: jump.file, reason: 'no-table-offset' })
    return { deletions, kept: [], unknown, resumeFrom: undefined }
  }

  const ahead = new Map<bigint, RangeFiles[]>()
  for (const range of whole) {
    const passed = passedByTable(range.start, range.end, tableOffset)
    if (passed) deleteRange(range, passed)
    else {
      const sameStart = ahead.get(range.start)
      if (sameStart) sameStart.push(range)
      else ahead.set(range.start, [range])
    }
  }
  const kept: KeptRotation[] = []
  let cursor = tableOffset
  let crossed: KeptJump | undefined
  for (;;) {
    let next = ahead.get(cursor)
    if (!next && !crossed && options.crossJumps !== false) {
      // a marker replaces the partition's others (jump-marker.ts); should two from this offset
      // both have rotations at their ends, neither is trusted and what lies past them goes
      const across = jumps.filter((jump) => jump.from === cursor && ahead.has(jump.to))
      if (across.length === 1) {
        crossed = across[0] as KeptJump
        cursor = crossed.to
        next = ahead.get(cursor)
      }
    }
    if (!next) break
    ahead.delete(cursor)
    if (next.length > 1) {
      for (const range of next) deleteRange(range, 'ambiguous')
      break
    }
    const range = next[0] as RangeFiles
    const pairs = [...range.pairs.values()].sort((a, b) => (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0))
    kept.push({
      start: range.start,
      end: range.end,
      uuids: pairs.map((pair) => pair.uuid),
      files: pairs.flatMap(filesOf),
    })
    cursor = range.end
  }
  for (const [start, rest] of ahead) for (const range of rest) deleteRange(range, start > cursor ? 'gap' : 'overlap')
  for (const jump of jumps) {
    if (jump !== crossed) {
      deletions.push({ file: jump.file, reason: passedByTable(jump.from, jump.to, tableOffset) ?? 'jump-not-crossed' })
    }
  }
  return { deletions, kept, unknown, resumeFrom: cursor, ...(crossed ? { jump: crossed } : {}) }
}

/** Whether the table's offset is past the range `[start, end)` (wholly or in part), and so it goes. */
function passedByTable(
  start: bigint,
  end: bigint,
  tableOffset: bigint,
): 'behind-table' | 'straddles-table' | undefined {
  if (end <= tableOffset) return 'behind-table'
  return start < tableOffset ? 'straddles-table' : undefined
}

function filesOf(pair: Pair): string[] {
  const files: string[] = []
  if (pair.parquet) files.push(pair.parquet)
  if (pair.json) files.push(pair.json)
  return files
}
