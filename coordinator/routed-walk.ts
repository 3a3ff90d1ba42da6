// One routed table's walk over the rotations the ledger's chain accepted (docs/architecture.md,
// "Markers and the ledger", invariant 3 of the routed argument). Pure.
//
// Per partition a pointer `P` starts at `E_T[p] = max(T[p], L[p])`: where the table stops vouching
// for the records the route sends to it. The rotations are walked in commit order, and each range
// `[a, e)` of a rotation moves `P`:
// - the rotation claims rows of the table on `p`, `[s, e)`: accepted iff `s == P` and `a <= P < e`
//   (`s = a` when the table is in line, `s` = the table's skip floor past `a` when it is ahead of
//   the ledger); then `P = e`. A claim starting anywhere else would either land rows the table
//   holds (behind) or let the marker pass rows it lacks (ahead, or `P < a`);
// - no claim: the cut says the table had no rows of `p` from its floor on, and the floor is never
//   above what the table holds, so `a <= P < e` moves `P` to `e`; otherwise `P` stays, and a later
//   claim of the table on `p` misses it.
// A range the ledger took across a declared log-start jump `[from, a)` treats `from <= P < a` as
// `P = a`: those records are gone. All or nothing per (rotation, table), as a rotation's files for
// the table are committed together (invariant 11): one bad claim rejects the table's part, no
// pointer moves for the rotation, and the table's later claims on its partitions are rejected in turn.
//
// The same walk runs in the round's check (markers read at the round's start) and inside each
// table's commit loop (its marker and the ledger read again): a part the check accepted may be
// rejected there, never the reverse harm, since a stale or moved marker only makes claims miss.

import type { LogStartJump, RotationRange, RotationTablePart } from '../protocol/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'
import type { CommittedOffset, Progress } from '../shared/progress/index.ts'
import { type ClaimMismatch, type ClaimRejection, effectiveMarker } from './ledger.ts'
import { topicPartitionKey } from './rotation-check.ts'

/** A range as the ledger's chain took it. */
export interface LedgerRange extends RotationRange {
  /** The declared log-start jump the chain crossed to reach the range (`jump.to` is its start). */
  jump?: LogStartJump
}

/** A rotation the ledger's chain accepted, in the order the round commits them. */
export interface OrderedRotation {
  id: string
  ranges: readonly LedgerRange[]
  tables: readonly RotationTablePart[]
}

/** One (rotation, table): its files go into the table's commit with the moves, or none of them does. */
export type PartVerdict =
  | { kind: 'accepted'; files: readonly DataFile[]; moves: CommittedOffset[] }
  | { kind: 'rejected'; stoppedBy: ClaimMismatch }

export interface TableWalk {
  table: string
  /** The marker the walk started from (with the ledger, `E_T`). */
  marker: Progress
  /** Per rotation holding a part of the table, in the order walked. */
  parts: ReadonlyMap<string, PartVerdict>
  /** The accepted parts' files, in order: the table's commit. */
  files: DataFile[]
  /**
   * The table's new marker for every partition whose pointer moved, claims or no; empty when no
   * part was accepted, as the table then commits nothing.
   */
  moves: CommittedOffset[]
}

/** Where a rotation would leave the pointers, and the table's part of it if it has one. */
export interface PointerStep {
  verdict: PartVerdict | undefined
  moved: ReadonlyMap<string, bigint>
}

interface Located {
  topic: string
  partition: number
}

/** The pointers of one table; judge a rotation, then apply it only when it is taken. */
export class TablePointers {
  readonly #at = new Map<string, bigint | undefined>()
  readonly #moved = new Map<string, Located & { offset: bigint }>()
  readonly table: string
  readonly marker: Progress
  readonly #ledger: Progress

  constructor(table: string, marker: Progress, ledger: Progress) {
    this.table = table
    this.marker = marker
    this.#ledger = ledger
  }

  pointer(topic: string, partition: number): bigint | undefined {
    const key = topicPartitionKey(topic, partition)
    if (this.#at.has(key)) return this.#at.get(key)
    return effectiveMarker(this.marker.get(topic)?.get(partition), this.#ledger.get(topic)?.get(partition))
  }

  judge(rotation: OrderedRotation): PointerStep {
    const parts = rotation.tables.filter((part) => part.table === this.table)
    const claims = new Map<string, RotationRange>()
    let repeated: RotationRange | undefined
    for (const claim of parts.flatMap((part) => part.claims)) {
      const key = topicPartitionKey(claim.topic, claim.partition)
      if (claims.has(key)) repeated ??= claim
      claims.set(key, claim)
    }
    const ranges = new Map(rotation.ranges.map((range) => [topicPartitionKey(range.topic, range.partition), range]))
    const moved = new Map<string, bigint>()
    const reject = (claim: RotationRange, expected: bigint | undefined, reason: ClaimRejection): PointerStep => {
      const { topic, partition, range } = claim
      const stoppedBy = { topic, partition, claimed: range, expected, reason }
      return { verdict: { kind: 'rejected', stoppedBy }, moved: new Map() }
    }
    // One table named twice: no single commit of its files says what the rotation holds for it.
    if (parts.length > 1) {
      const first = parts[0]?.claims[0] ?? rotation.ranges[0]
      if (first) return reject(first, undefined, 'invalid-range')
    }
    if (repeated) return reject(repeated, this.pointer(repeated.topic, repeated.partition), 'invalid-range')
    for (const [key, claim] of claims) {
      if (!ranges.has(key)) return reject(claim, this.pointer(claim.topic, claim.partition), 'invalid-range')
    }
    for (const [key, range] of ranges) {
      const { start: a, end: e } = range.range
      const held = this.pointer(range.topic, range.partition)
      const jump = range.jump
      const at = held !== undefined && jump !== undefined && jump.from <= held && held < a ? a : held
      const claim = claims.get(key)
      if (claim === undefined) {
        if (at !== undefined && a <= at && at < e) moved.set(key, e)
        else if (at !== held && at !== undefined) moved.set(key, at)
        continue
      }
      const { start: s, end } = claim.range
      if (end !== e || s < a || s >= e) return reject(claim, at, 'invalid-range')
      if (at === undefined) return reject(claim, at, 'unknown-to-table')
      // `s >= a`, so `P < a` (the table lacks rows below `a`) is a miss too: `ahead-of-table`.
      if (s !== at) return reject(claim, at, s < at ? 'behind-table' : 'ahead-of-table')
      moved.set(key, e)
    }
    if (parts.length === 0) return { verdict: undefined, moved }
    const moves = [...claims.values()].map(({ topic, partition, range }) => ({ topic, partition, offset: range.end }))
    return { verdict: { kind: 'accepted', files: parts.flatMap((part) => part.files), moves }, moved }
  }

  apply(rotation: OrderedRotation, step: PointerStep): void {
    for (const range of rotation.ranges) {
      const key = topicPartitionKey(range.topic, range.partition)
      const offset = step.moved.get(key)
      if (offset === undefined) continue
      this.#at.set(key, offset)
      this.#moved.set(key, { topic: range.topic, partition: range.partition, offset })
    }
  }

  /** The last pointer of every partition that moved. */
  moves(): CommittedOffset[] {
    return [...this.#moved.values()]
  }
}

/**
 * Table `table`'s walk over `rotations` (the ledger's chain's accepted rotations, in commit order)
 * from `max(marker, ledger)`: per rotation holding a part of it, accepted or rejected, and what
 * its commit holds.
 */
export function walkTable(
  table: string,
  marker: Progress,
  ledger: Progress,
  rotations: readonly OrderedRotation[],
): TableWalk {
  const pointers = new TablePointers(table, marker, ledger)
  const parts = new Map<string, PartVerdict>()
  const files: DataFile[] = []
  for (const rotation of rotations) {
    const step = pointers.judge(rotation)
    if (step.verdict) parts.set(rotation.id, step.verdict)
    if (step.verdict?.kind === 'rejected') continue
    if (step.verdict) files.push(...step.verdict.files)
    pointers.apply(rotation, step)
  }
  const anyAccepted = [...parts.values()].some((verdict) => verdict.kind === 'accepted')
  return { table, marker, parts, files, moves: anyAccepted ? pointers.moves() : [] }
}
