// Builders for the routed round's tests: rotations with table parts, markers of one topic.

import type { LogStartJump, RotationStatus, RotationTablePart } from '../protocol/index.ts'
import type { Progress } from '../shared/progress/index.ts'
import type { OrderedRotation } from './routed-walk.ts'
import { dataFile, type RotationRangeSpec, rotation, topic } from './test-fixtures.ts'

/** A table's part as tests write it: the table and its claims `[partition, s, e]`. */
export type PartSpec = [table: string, claims: RotationRangeSpec[]]

export const markerOf = (offsets: Record<number, bigint>): Progress =>
  new Map([[topic, new Map(Object.entries(offsets).map(([p, o]) => [Number(p), o]))]])

export function tablePart(id: string, [table, claims]: PartSpec): RotationTablePart {
  return {
    table,
    claims: claims.map(([partition, start, end]) => ({ topic, partition, range: { start, end } })),
    files: [dataFile(`s3://bucket/${id}-${table}.parquet`)],
  }
}

/** A routed rotation: no files of its own, its rows in the parts. */
export function routed(id: string, ranges: RotationRangeSpec[], parts: PartSpec[] = []): RotationStatus {
  return { ...rotation(id, ranges, []), tables: parts.map((part) => tablePart(id, part)) }
}

/** A rotation as the ledger's chain took it; `jumps` per partition it crossed. */
export function ordered(
  id: string,
  ranges: RotationRangeSpec[],
  parts: PartSpec[] = [],
  jumps: Record<number, LogStartJump> = {},
): OrderedRotation {
  const { tables = [] } = routed(id, ranges, parts)
  return {
    id,
    ranges: ranges.map(([partition, start, end]) => {
      const jump = jumps[partition]
      return { topic, partition, range: { start, end }, ...(jump ? { jump } : {}) }
    }),
    tables,
  }
}
