// What a routed round's commits mean once they are done (docs/architecture.md, "Markers and the
// ledger", M2-M4): what the ledger may pass, and what the ACK says. Pure.
//
// Each table of the round commits its part of the accepted rotations in a loop of its own, walking
// them again against its marker and the ledger as read there (walkTable); the walk that built its
// last attempt, and whether the catalog confirmed it, are the table's fate. A (rotation, table)
// part is then `landed` (accepted by that walk, commit confirmed), `rejected` (refused by the walk:
// its files were not in the commit) or `unconfirmed` (commit failed, unknown, or never tried). The
// ledger moves over a rotation's range of `p` only when every table with rows of `p` in it landed
// (planLedgerAdvance, M2).
//
// The ACK:
// - accepted: the rotations every part of which landed and every range of which the ledger passed,
//   in a ledger commit that landed. Without that a participant keeps the rotation and sends it
//   again: the tables that hold it refuse it as behind, which makes it read again (skipping what
//   they hold), slower but right;
// - rejected: every rotation the check or a table's walk refused, and per partition of them where
//   to read again: the ledger after the round, and a skip floor per table whose marker is past it.
//   The floors are the markers as read merged with the confirmed moves only: a floor above what a
//   table holds would make the participant skip records the table lacks, and a table without rows
//   past its floor lets its pointer pass them (no claim), so they would be lost. An unconfirmed
//   commit that did land shows up as a `behind-table` next round, with its marker then read.

import type { CommittedOffset, Progress } from '../shared/progress/index.ts'
import { mergeProgress } from '../shared/progress/index.ts'
import type { ClaimFate, CutRead } from './ledger.ts'
import { topicPartitionKey } from './rotation-check.ts'
import type { AcceptedRoutedRotation, RefusedPartition, RejectedRoutedRotation, RoutedCheck } from './routed-round.ts'
import type { TableWalk } from './routed-walk.ts'

/** How one table's commit of the round ended. */
export interface TableFate {
  /** `landed`: the catalog confirmed it; `unconfirmed`: failed, unknown outcome, or never tried. */
  commit: 'landed' | 'unconfirmed'
  /**
   * The walk inside the commit loop that built the last attempt (undefined: never walked). A table
   * whose walk accepted no part commits nothing: `landed` says nothing is pending.
   */
  walk?: TableWalk
}

/** What became of a part of an accepted rotation. */
export function partFate(rotation: string, table: string, fates: ReadonlyMap<string, TableFate>): ClaimFate {
  const fate = fates.get(table)
  const verdict = fate?.walk?.parts.get(rotation)
  if (verdict?.kind === 'rejected') return 'rejected'
  return verdict?.kind === 'accepted' && fate?.commit === 'landed' ? 'landed' : 'unconfirmed'
}

/**
 * Per accepted rotation and range, what the ledger's commit loop gives planLedgerAdvance (against
 * the ledger it reads each attempt): the tables with rows of the partition in the rotation, each
 * with its part's fate. A range taken across a log-start jump reads from the jump's start: the
 * records between are gone, and the ledger stands there.
 */
export function routedCutReads(check: RoutedCheck, fates: ReadonlyMap<string, TableFate>): CutRead[] {
  return check.rotations.accepted.flatMap((rotation) =>
    rotation.ranges.map(({ topic, partition, range, jump }) => {
      const tables = new Map<string, ClaimFate>()
      for (const part of rotation.tables) {
        if (!part.claims.some((claim) => claim.topic === topic && claim.partition === partition)) continue
        tables.set(part.table, partFate(rotation.id, part.table, fates))
      }
      return { topic, partition, read: jump ? { start: jump.from, end: range.end } : range, tables }
    }),
  )
}

/**
 * Every table's marker after the round as far as the coordinator knows it: the marker its walk read,
 * with the walk's moves when its commit was confirmed, never an unconfirmed one's; `markers` (the
 * round's start) for the tables that did not walk.
 */
export function landedMarkers(
  markers: ReadonlyMap<string, Progress>,
  fates: ReadonlyMap<string, TableFate>,
): Map<string, Progress> {
  const after = new Map(markers)
  for (const [table, { commit, walk }] of fates) {
    if (walk === undefined) continue
    after.set(table, commit === 'landed' ? mergeProgress(walk.marker, walk.moves) : walk.marker)
  }
  return after
}

/** The ledger's commit of the round. */
export interface LedgerOutcome {
  /** The catalog confirmed it (false: failed, unknown outcome, or nothing to commit). */
  landed: boolean
  /** What it committed (planLedgerAdvance's moves against its last read). */
  moves: readonly CommittedOffset[]
  /** The ledger after the round: its last read, with `moves` when it landed. */
  after: Progress
}

export interface SkipFloor {
  table: string
  /** The participant skips the records of the partition the route sends to the table below this. */
  offset: bigint
}

export interface RoutedRejection extends RefusedPartition {
  /** `L[p]` after the round (undefined: the ledger lacks the partition, which is positioned anew). */
  rereadFrom: bigint | undefined
  floors: SkipFloor[]
}

export interface RoutedAck {
  /** Ids of the rotations wholly committed: their participants delete them. */
  acceptedRotations: string[]
  /** The check's and the tables' walks' refusals: their participants drop them and read again. */
  rejectedRotations: RejectedRoutedRotation[]
  rejections: RoutedRejection[]
  /** The ledger's moves that landed. */
  committedOffsets: CommittedOffset[]
}

/** The ACK of a routed round; `markersAfter` from landedMarkers. */
export function settleRoutedRound(
  check: RoutedCheck,
  fates: ReadonlyMap<string, TableFate>,
  ledger: LedgerOutcome,
  markersAfter: ReadonlyMap<string, Progress>,
): RoutedAck {
  const passed = (rotation: AcceptedRoutedRotation) =>
    rotation.ranges.every(({ topic, partition, range }) => {
      const at = ledger.after.get(topic)?.get(partition)
      return range.end === range.start || (at !== undefined && at >= range.end)
    })
  const landed = (rotation: AcceptedRoutedRotation) =>
    rotation.tables.every((part) => partFate(rotation.id, part.table, fates) === 'landed')
  const acceptedRotations = ledger.landed
    ? check.rotations.accepted.filter((r) => landed(r) && passed(r)).map((r) => r.id)
    : []

  const rejectedRotations = [...check.rotations.rejected]
  const refused = new Map(check.rejected.map((r) => [topicPartitionKey(r.topic, r.partition), r]))
  for (const rotation of check.rotations.accepted) {
    const stop = rotation.tables
      .map((part) => ({ part, verdict: fates.get(part.table)?.walk?.parts.get(rotation.id) }))
      .find(({ verdict }) => verdict?.kind === 'rejected')
    if (stop?.verdict?.kind !== 'rejected') continue
    const mismatch = stop.verdict.stoppedBy
    const { topic, partition, claimed, reason } = mismatch
    rejectedRotations.push({
      id: rotation.id,
      sender: rotation.sender,
      reason,
      stoppedBy: { topic, partition, range: claimed },
      table: { name: stop.part.table, mismatch },
    })
    for (const range of rotation.ranges) {
      const key = topicPartitionKey(range.topic, range.partition)
      const own = range.topic === topic && range.partition === partition
      if (!refused.has(key))
        refused.set(key, { topic: range.topic, partition: range.partition, reason: own ? reason : 'rotation-rejected' })
    }
  }

  const rejections = [...refused.values()].map((refusal): RoutedRejection => {
    const rereadFrom = ledger.after.get(refusal.topic)?.get(refusal.partition)
    const floors: SkipFloor[] = []
    for (const [table, marker] of markersAfter) {
      const offset = marker.get(refusal.topic)?.get(refusal.partition)
      if (offset !== undefined && (rereadFrom === undefined || offset > rereadFrom)) floors.push({ table, offset })
    }
    return { ...refusal, rereadFrom, floors }
  })
  return { acceptedRotations, rejectedRotations, rejections, committedOffsets: ledger.landed ? [...ledger.moves] : [] }
}
