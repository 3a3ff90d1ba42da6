// The progress a commit round checks against: the table's marker (shared/progress), or — when the
// round's own commit already landed — the table as it was before that commit. Pure.

import type { PartitionWriteStatus } from '../protocol/index.ts'
import type { Snapshot, TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { ancestorsOfRef } from '../shared/iceberg/metadata/index.ts'
import {
  decodeProgress,
  type FoundProgress,
  findProgressIn,
  floeSummaryKeys,
  offsetsKey,
} from '../shared/progress/index.ts'
import { advancesTable } from './contiguity.ts'

export * from '../shared/progress/index.ts'

export interface RoundProgress extends FoundProgress {
  /** The round's own commit is already on main (see progressForRound). */
  landed: boolean
}

/**
 * The progress a round's contiguity check must use. Normally the table's progress now. But when
 * the round's own commit already landed (an attempt whose outcome was unknown went through, and
 * the commit loop asks once more what it committed), the check must see the table as that attempt
 * saw it: the marker of the newest older ancestor. When no older ancestor carries one (the
 * round was the group's first commit, or expiry took the others) the state before is rebuilt
 * from the landed marker: a landed round moved each accepted partition to its range's end, so
 * every partition whose marker equals a reported range's end is taken as committed by this round.
 * The only case that rebuild can misjudge is a replay ending exactly at the table's offset, and
 * for it "committed" and "rejected" lead the participant to the same place: the table's offset.
 * (The table property cannot help there: the landed commit overwrote it.)
 */
export function progressForRound(
  metadata: TableMetadata,
  group: string,
  commitId: string,
  statuses: readonly PartitionWriteStatus[],
): RoundProgress {
  const ancestors = [...ancestorsOfRef(metadata)]
  const landed = ancestors.findIndex((snapshot) => snapshot.summary[floeSummaryKeys.commitId] === commitId)
  if (landed < 0) return { ...findProgressIn(metadata, group, ancestors), landed: false }
  const older = findProgressIn({ ...metadata, properties: {} }, group, ancestors.slice(landed + 1))
  if (older.source.kind === 'snapshot') return { ...older, landed: true }
  const round = ancestors[landed] as Snapshot
  const before = new Map<string, Map<number, bigint>>()
  for (const [topic, offsets] of decodeProgress(round.summary[offsetsKey(group)] ?? '{}')) {
    before.set(topic, new Map(offsets))
  }
  for (const status of statuses) {
    if (status.kind !== 'written' || !advancesTable(status)) continue
    const offsets = before.get(status.topic)
    if (offsets?.get(status.partition) !== status.range.end) continue
    // Taken as this round's commit: the table stood where the range (or its jump) began.
    const jump = status.logStartJump
    offsets.set(status.partition, jump && jump.to === status.range.start ? jump.from : status.range.start)
  }
  return { progress: before, source: { kind: 'snapshot', snapshotId: round['snapshot-id'] }, landed: true }
}
