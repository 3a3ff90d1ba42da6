// Where a partition's chain of uncommitted ranges starts after a sync, and which range its files
// report, when the broker's log start has moved past what the participant holds (docs/design.md
// invariant 3's one allowed gap). Pure.
//
// Nothing durable is thrown away on a log-start jump. Ready files that chain from the table's
// offset T up to X are records the table never got and Kafka no longer has: they are committed,
// and the jump starts after them. The chain then has one hole: it starts at T, its files cover
// [T, X) and [L, end), and the status declares the jump [X, L) inside its range [T, end). The
// coordinator accepts that in the same round (coordinator/contiguity.ts), so the kept files and
// the jump land in one atomic commit: there is no round in which the table has taken the files
// but not yet been told why its offset skips, and no second round to wait for. Without kept files
// the chain simply starts at L and the jump [T, L) sits before its range, as it always has
// (accepted by coordinators that predate the hole inside a range). The jump is recorded where it
// outlives the process (the shared layout: the first range past it, `after`; the per-partition
// one: a marker file), so a resync or a restart that finds the files past it again keeps the jump
// with them (`keptJump`) instead of dropping them as a gap.
import type { LogStartJump, OffsetRange } from '../protocol/index.ts'
import { jumpAhead } from './machine/index.ts'

export interface ChainPlacement {
  /** The first offset of the uncommitted chain (what the next status's range starts at). */
  chainStart: bigint
  /** Where the consumer reads next. */
  position: bigint
  /** Set when the log start is past what the chain holds and the table had an offset. */
  logStartJump?: LogStartJump
  /** The kept files cannot chain to the new position: drop them (only when the table never saw the partition). */
  dropKept: boolean
  /**
   * The kept files cross `keptJump` and the log start has moved past their end too: a chain
   * declares one jump, so the files from the jump on go, and the partition is placed again
   * without them (its jump then runs from `keptJump.from` to the log start).
   */
  dropPastJump?: boolean
}

export interface PlacementInput {
  /** Where the chain starts without retention in the way: the table's offset, or the group's / reset's. */
  start: bigint
  tableOffset: bigint | undefined
  /** Where the kept ready files end (undefined: none kept). They chain from `start`. */
  keptUpTo: bigint | undefined
  /** The broker's log start now. */
  logStart: bigint
  /**
   * The log-start jump the kept files recorded (WalkRange.after), if it lies at or past `start`:
   * they chain from `start` across it, or (`keptUpTo` at its end) end where it starts.
   */
  keptJump?: LogStartJump
}

export function placeChain(input: PlacementInput): ChainPlacement {
  const { start, tableOffset, keptUpTo, logStart } = input
  const keptJump = jumpAhead(input.keptJump, start)
  if (keptJump && keptUpTo !== undefined && keptUpTo >= keptJump.to) {
    // Nothing kept past the jump: the files end where it starts, and the log start decides anew.
    if (keptUpTo === keptJump.to) {
      return placeChain({ start, tableOffset, keptUpTo: keptJump.from === start ? undefined : keptJump.from, logStart })
    }
    // The kept files hold their jump: the chain keeps it, and the status declares it between them.
    if (logStart <= keptUpTo) return { chainStart: start, position: keptUpTo, logStartJump: keptJump, dropKept: false }
    return { chainStart: start, position: keptUpTo, dropKept: false, dropPastJump: true }
  }
  const reached = keptUpTo ?? start
  if (logStart <= reached) return { chainStart: start, position: reached, dropKept: false }
  if (tableOffset === undefined) {
    // A partition the table never saw starts where Kafka still has records; nothing is owed.
    return { chainStart: logStart, position: logStart, dropKept: keptUpTo !== undefined }
  }
  if (keptUpTo === undefined || keptUpTo === start) {
    return {
      chainStart: logStart,
      position: logStart,
      logStartJump: { from: tableOffset, to: logStart },
      dropKept: false,
    }
  }
  return { chainStart: start, position: logStart, logStartJump: { from: keptUpTo, to: logStart }, dropKept: false }
}

export type ChainedRange =
  /** `jump`: the log-start jump this status declares (none, or the chain's, or left for a later round). */
  | { kind: 'range'; range: OffsetRange; jump?: LogStartJump }
  /** The files do not chain from the chain's start (across at most its jump): nothing can pass. */
  | { kind: 'gap'; expected: bigint; found: bigint }

/**
 * The range a status reports for the uncommitted rotations (oldest first). They must chain from
 * `chainStart`, crossing at most the declared jump. The status takes one of the two shapes every
 * coordinator accepts in either layout:
 *
 * - the jump before the range: the range starts at the log start (`jump.to`). So is a chain that
 *   starts at `jump.from` itself (an ACK committed the kept files up to the jump): nothing sits
 *   in front of the jump, and the table's offset is `jump.from`.
 * - the jump between two files: the range starts at the chain's start and runs past the log start.
 *
 * Kept files with nothing read after the jump yet report their range alone, without the jump: the
 * chain keeps it, and once the files are committed (the table at `jump.from`) the next status
 * declares it before its range. A range ending at the log start with its last file at `jump.from`
 * is refused by the shared layout's check of earlier releases, which would drop those files.
 */
export function chainedRange(
  chainStart: bigint,
  jump: LogStartJump | undefined,
  rotations: ReadonlyArray<{ start: bigint; end: bigint }>,
): ChainedRange {
  let start = chainStart
  if (jump && chainStart === jump.from) start = jump.to
  let at = start
  let crossed = jump !== undefined && start === jump.to
  for (const rotation of rotations) {
    if (rotation.start !== at) {
      if (!jump || crossed || at !== jump.from || rotation.start !== jump.to) {
        return { kind: 'gap', expected: at, found: rotation.start }
      }
      crossed = true
    }
    at = rotation.end
  }
  const range = { start, end: at }
  return crossed && jump ? { kind: 'range', range, jump } : { kind: 'range', range }
}

/** The records of `jump` not in `counted` (the last jump counted): a resync that finds the same gap again counts only what is new. */
export function uncounted(jump: LogStartJump, counted: LogStartJump | undefined): bigint {
  if (!counted) return jump.to - jump.from
  // (bigints: Math.min and Math.max do not take them)
  let from = jump.from
  if (counted.from > from) from = counted.from
  let to = jump.to
  if (counted.to < to) to = counted.to
  return jump.to - jump.from - (to > from ? to - from : 0n)
}
