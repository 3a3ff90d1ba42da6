// The coordinator's bookkeeping for a dataset that routes one stream into many tables
// (docs/architecture.md, "Markers and the ledger" and "The argument", M1-M5; model-checked in
// docs/model/floe-routing.pml). Pure: the catalog reads and commits are the caller's.
//
// No catalog commits several tables atomically (the REST server applies a transaction table by
// table), so each table moves its own marker `T[p]` in its own compare-and-set commit, and the
// dataset's ledger `L[p]` moves after them in a commit of its own. The ledger is what makes a
// table that received no rows of `p` for many rounds current without committing it: `E_T[p] =
// max(T[p], L[p])`. Two rules keep that sound:
// - a table takes a claim `[s, e)` only when `s == E_T[p]` as read inside its commit loop, all or
//   nothing per (rotation, table): checkTableClaims;
// - the ledger moves to `e` only after every table that claimed rows of `p` in the cut holds them,
//   and only when the cut covers everything from the ledger on (`a <= L[p] < e`): planLedgerAdvance.
// A partition the ledger does not know yet is started in the ledger first (planLedgerStarts, a
// ledger-only commit before any table's): every claim is then judged against a known `E_T[p]`.
// Judging a table's first claim by the sender's chain instead fails where the ledger did not move
// after a table's first commit and the partition is positioned anew from a moving start (the
// group's offset, `latest`): the table's marker and the new chain never meet again.
// A ledger read stale by the table's commit loop only lowers `E_T`, which rejects claims and never
// accepts one twice (M3), because the ledger is never ahead of the tables (M2).
//
// Markers come in as `Progress`, the shape readProgress gives for every table and for the ledger
// (a table of no rows, with a marker of its own); moves go out as CommittedOffset, for mergeProgress.

import type { OffsetRange, RangeOrigin } from '../protocol/index.ts'
import type { CommittedOffset, Progress } from '../shared/progress/index.ts'
import type { RejectionReason } from './contiguity.ts'
import { topicPartitionKey } from './rotation-check.ts'

/** `E_T[p]`: where table T stops vouching for the records of p the route sends to it. */
export function effectiveMarker(tableMarker: bigint | undefined, ledger: bigint | undefined): bigint | undefined {
  if (tableMarker === undefined) return ledger
  if (ledger === undefined) return tableMarker
  return tableMarker > ledger ? tableMarker : ledger
}

/**
 * Where a sender positioned a partition, and from what (`table`: from the ledger and the table
 * markers; else the group's offset or auto.offset.reset, for a partition the ledger lacked).
 */
export interface PartitionStart {
  topic: string
  partition: number
  origin: RangeOrigin
  start: bigint
}

export interface LedgerStarts {
  /** The ledger's first position of each partition it lacked: its own commit, before the tables'. */
  moves: CommittedOffset[]
  /**
   * Positioned from the ledger, yet the ledger lacks them: its history changed (a recreated or
   * rolled back ledger). Nothing of them is committed until the sender positions them again.
   */
  unknown: PartitionStart[]
}

/**
 * Starts in the ledger the partitions it lacks, where their senders positioned them. Nothing was
 * read below that start, so every table holds every record of it the route sends there (M2
 * holds). Of two senders that positioned one partition differently (two lives of a worker), the
 * lower start wins: the other's claims then miss `E_T[p]` and its partition is read again.
 */
export function planLedgerStarts(ledger: Progress, starts: readonly PartitionStart[]): LedgerStarts {
  const lowest = new Map<string, PartitionStart>()
  const unknown: PartitionStart[] = []
  for (const start of starts) {
    if (ledger.get(start.topic)?.get(start.partition) !== undefined) continue
    if (start.origin === 'table') {
      unknown.push(start)
      continue
    }
    const key = topicPartitionKey(start.topic, start.partition)
    const known = lowest.get(key)
    if (known === undefined || start.start < known.start) lowest.set(key, start)
  }
  const moves = [...lowest.values()].map(({ topic, partition, start }) => ({ topic, partition, offset: start }))
  return { moves, unknown }
}

/** One partition of one rotation's claim on one table. */
export interface TableClaim {
  topic: string
  partition: number
  /** `[s, e)`: every record of the partition in it that the route sends to the table is in the rotation's files. */
  range: OffsetRange
}

export type ClaimRejection = Extract<
  RejectionReason,
  'behind-table' | 'ahead-of-table' | 'invalid-range' | 'unknown-to-table'
>

/** The claim that stopped a (rotation, table), for the coordinator's log. */
export interface ClaimMismatch {
  topic: string
  partition: number
  claimed: OffsetRange
  /** `E_T[p]` as read: where the claim had to start (undefined: the ledger has not started p). */
  expected: bigint | undefined
  reason: ClaimRejection
}

/** A partition whose sender must read again from the ledger (undefined: positioned as a new partition). */
export interface Reread {
  topic: string
  partition: number
  from: bigint | undefined
}

export type ClaimCheck =
  /** `moves`: the table's new marker per claimed partition, committed with the rotation's files. */
  | { kind: 'accepted'; moves: CommittedOffset[] }
  /**
   * None of the rotation's files for the table are committed, so every partition it claimed lacks
   * rows in this table: each is read again from `L[p]`, and what it reads again for the tables that
   * did commit is skipped by positioning (invariant 2).
   */
  | { kind: 'rejected'; stoppedBy: ClaimMismatch; reread: Reread[] }

/**
 * One rotation's claims on one table, against the table's marker and the ledger as read inside the
 * table's commit loop. For several rotations of one table in a round, oldest first, pass the
 * marker with the earlier accepted moves merged (mergeProgress). A round's rotations, whose read
 * ranges also move a table without rows in them, go through walkTable (routed-walk.ts) instead.
 */
export function checkTableClaims(table: Progress, ledger: Progress, claims: readonly TableClaim[]): ClaimCheck {
  const seen = new Set<string>()
  for (const claim of claims) {
    const { topic, partition, range } = claim
    const expected = effectiveMarker(table.get(topic)?.get(partition), ledger.get(topic)?.get(partition))
    const key = topicPartitionKey(topic, partition)
    const reason = judgeClaim(claim, expected, seen.has(key))
    seen.add(key)
    if (reason === undefined) continue
    return {
      kind: 'rejected',
      stoppedBy: { topic, partition, claimed: range, expected, reason },
      reread: uniqueBy(claims).map((c) => ({
        topic: c.topic,
        partition: c.partition,
        from: ledger.get(c.topic)?.get(c.partition),
      })),
    }
  }
  return {
    kind: 'accepted',
    moves: claims.map(({ topic, partition, range }) => ({ topic, partition, offset: range.end })),
  }
}

function judgeClaim(claim: TableClaim, expected: bigint | undefined, repeated: boolean): ClaimRejection | undefined {
  const { start, end } = claim.range
  // A claim of no positions would hold rows nothing says are not a duplicate: the route sends no
  // claim for a table without rows in the cut (floe-routing.pml's rowsFor).
  if (repeated || end <= start) return 'invalid-range'
  // The ledger starts every partition before any table takes a claim of it (planLedgerStarts).
  if (expected === undefined) return 'unknown-to-table'
  if (start === expected) return undefined
  return start < expected ? 'behind-table' : 'ahead-of-table'
}

/** What became of one table's claim of a cut: `landed` is accepted in a commit the catalog confirmed. */
export type ClaimFate = 'landed' | 'rejected' | 'unconfirmed'

/** One partition of one cut (a rotation): what its sender read, and where the rows went. */
export interface CutRead {
  topic: string
  partition: number
  /** `[a, e)`: the positions read since the sender's positioning or its previous cut. */
  read: OffsetRange
  /** Every table with rows of the partition in the cut, and the fate of its claim. */
  tables: ReadonlyMap<string, ClaimFate>
}

export type HoldReason =
  /** A table does not have its rows and never will from this cut: the partition is read again. */
  | { kind: 'claim-rejected'; tables: string[] }
  /** A table's commit failed, was not tried or has an unknown outcome: the ledger waits for it. */
  | { kind: 'claim-unconfirmed'; tables: string[] }
  /** `a > L[p]`: an earlier cut was held. */
  | { kind: 'gap' }
  /** `e <= L[p]`: the ledger is past the cut already (a replay, or another coordinator moved it). */
  | { kind: 'behind-ledger' }
  | { kind: 'invalid-range' }
  /** The ledger has not started the partition (planLedgerStarts comes first). */
  | { kind: 'unknown-to-ledger' }

export interface HeldRead {
  topic: string
  partition: number
  read: OffsetRange
  /** `L[p]` when the cut was judged (after the round's earlier cuts of the partition). */
  ledger: bigint | undefined
  reason: HoldReason
}

export interface LedgerPlan {
  /** The ledger's new positions, for its own compare-and-set commit after the tables'. Empty: no commit. */
  moves: CommittedOffset[]
  held: HeldRead[]
}

/**
 * The ledger's moves for a round's cuts, against the ledger as read inside its own commit loop.
 * Each cut is judged as floe-routing.pml's moveLedger judges one status, one after the other per
 * partition in order of `a`: the round's one commit is then the sequence of those moves, each of
 * them allowed where it stands. In that order a cut held for `a > L` can not become movable by a
 * later one, so one pass suffices.
 *
 * A cut whose records went to no table (none routed, or every one below its table's `E_T` at
 * positioning, so skipped) moves the ledger too: in the model a status without claims leaves `ok`
 * true and moves the ledger, and M2 asks only that the tables with rows of `p` below `e` have them.
 */
export function planLedgerAdvance(ledger: Progress, reads: readonly CutRead[]): LedgerPlan {
  const byPartition = new Map<string, CutRead[]>()
  for (const read of reads) {
    // A cut that read nothing of the partition has nothing to move and nothing to wait for.
    if (read.read.end === read.read.start) continue
    const key = topicPartitionKey(read.topic, read.partition)
    const cuts = byPartition.get(key)
    if (cuts) cuts.push(read)
    else byPartition.set(key, [read])
  }
  const plan: LedgerPlan = { moves: [], held: [] }
  for (const cuts of byPartition.values()) {
    cuts.sort((x, y) => compare(x.read.start, y.read.start) || compare(x.read.end, y.read.end))
    const { topic, partition } = cuts[0] as CutRead
    const before = ledger.get(topic)?.get(partition)
    let at = before
    for (const cut of cuts) {
      const reason = holdReason(cut, at)
      if (reason === undefined) at = cut.read.end
      else plan.held.push({ topic, partition, read: cut.read, ledger: at, reason })
    }
    if (at !== undefined && at !== before) plan.moves.push({ topic, partition, offset: at })
  }
  return plan
}

function holdReason(cut: CutRead, ledger: bigint | undefined): HoldReason | undefined {
  const { start, end } = cut.read
  if (end < start) return { kind: 'invalid-range' }
  const withFate = (fate: ClaimFate) => [...cut.tables].filter(([, f]) => f === fate).map(([table]) => table)
  const rejected = withFate('rejected')
  if (rejected.length > 0) return { kind: 'claim-rejected', tables: rejected }
  const unconfirmed = withFate('unconfirmed')
  if (unconfirmed.length > 0) return { kind: 'claim-unconfirmed', tables: unconfirmed }
  if (ledger === undefined) return { kind: 'unknown-to-ledger' }
  if (start > ledger) return { kind: 'gap' }
  if (end <= ledger) return { kind: 'behind-ledger' }
  return undefined
}

const compare = (x: bigint, y: bigint): number => (x < y ? -1 : x > y ? 1 : 0)

function uniqueBy(claims: readonly TableClaim[]): TableClaim[] {
  const byKey = new Map(claims.map((claim) => [topicPartitionKey(claim.topic, claim.partition), claim]))
  return [...byKey.values()]
}
