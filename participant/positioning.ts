// Where a partition's consumer starts (invariant 2): the table's next offset for it; for a
// partition the table has never seen, the group's committed offset, else `auto.offset.reset`
// (default earliest: a sink starting at latest would lose what arrived before its first commit).

import type { RangeOrigin } from '../protocol/index.ts'
import type { GroupReader, KafkaAdmin } from '../shared/kafka/index.ts'

export interface StartingPoint {
  /** The first offset of the new chain of ranges, before recovery or the log start move it. */
  start: bigint
  origin: RangeOrigin
  /** The table's next offset for the partition; undefined when it never saw it. */
  tableOffset: bigint | undefined
  /** The broker's log start: records before it are gone (retention). */
  logStart: bigint
}

export interface PositionSources {
  table: { offsets(): Promise<ReadonlyMap<number, bigint>> }
  reader: Pick<GroupReader, 'committed'>
  admin: Pick<KafkaAdmin, 'startOffsets' | 'endOffsets'>
  autoOffsetReset: 'earliest' | 'latest'
}

export async function startingPoint(
  sources: PositionSources,
  topic: string,
  partition: number,
): Promise<StartingPoint> {
  const { table, reader, admin } = sources
  const tableOffset = (await table.offsets()).get(partition)
  const logStart = (await admin.startOffsets(topic, [partition])).get(partition) ?? 0n
  if (tableOffset !== undefined) return { start: tableOffset, origin: 'table', tableOffset, logStart }
  const group = (await reader.committed([partition])).get(partition)
  if (group !== undefined) return { start: group, origin: 'group-offset', tableOffset, logStart }
  const reset =
    sources.autoOffsetReset === 'earliest' ? logStart : (await admin.endOffsets(topic, [partition])).get(partition)
  return { start: reset ?? 0n, origin: 'offset-reset', tableOffset, logStart }
}
