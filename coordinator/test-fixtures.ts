// Builders for this folder's tests: table metadata with a chain of snapshots on main, data files,
// partition statuses. Not exported by index.ts.

import type { LogStartJump, PartitionWriteStatus, RangeOrigin, RotationStatus, Sender } from '../protocol/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'
import type { Snapshot, TableMetadata } from '../shared/iceberg/metadata/index.ts'
import type { RotationReport } from './rotation-check.ts'

export const topic = 'events'
export const group = 'floe-events'

export interface SnapshotSpec {
  id: bigint
  summary?: Record<string, string>
  /** Defaults to the previous snapshot of the list (a chain on main). */
  parent?: bigint | null
}

/** Metadata whose main points at `main` (default: the last snapshot listed). */
export function tableWith(
  snapshots: SnapshotSpec[],
  options: { properties?: Record<string, string>; main?: bigint | null } = {},
): TableMetadata {
  const built: Snapshot[] = snapshots.map((spec, i) => {
    const parent = spec.parent === undefined ? snapshots[i - 1]?.id : spec.parent
    return {
      'snapshot-id': spec.id,
      ...(parent === null || parent === undefined ? {} : { 'parent-snapshot-id': parent }),
      'sequence-number': BigInt(i + 1),
      'timestamp-ms': 1_700_000_000_000 + i,
      'manifest-list': `file:///warehouse/db/events/metadata/snap-${spec.id}.avro`,
      summary: { operation: 'append', ...spec.summary },
    }
  })
  const main = options.main === undefined ? (snapshots.at(-1)?.id ?? null) : options.main
  return {
    'format-version': 2,
    'table-uuid': '9a3c1f4e-0000-4000-8000-000000000001',
    location: 'file:///warehouse/db/events',
    'last-sequence-number': BigInt(snapshots.length),
    'last-updated-ms': 1_700_000_000_000,
    'last-column-id': 1,
    schemas: [{ type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] }],
    'current-schema-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [] }],
    'default-spec-id': 0,
    'last-partition-id': 999,
    properties: options.properties ?? {},
    'current-snapshot-id': main,
    snapshots: built,
    'snapshot-log': [],
    'metadata-log': [],
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    'default-sort-order-id': 0,
    refs: main === null ? {} : { main: { type: 'branch', 'snapshot-id': main } },
    statistics: [],
    'partition-statistics': [],
  }
}

export function dataFile(path: string, recordCount = 10n): DataFile {
  return {
    filePath: path,
    fileFormat: 'PARQUET',
    specId: 0,
    partition: {},
    recordCount,
    fileSizeInBytes: 1000n + recordCount,
  }
}

export function written(
  partition: number,
  start: bigint,
  end: bigint,
  options: { files?: string[]; origin?: RangeOrigin; jump?: LogStartJump; topic?: string } = {},
): PartitionWriteStatus {
  return {
    kind: 'written',
    topic: options.topic ?? topic,
    partition,
    range: { start, end },
    files: (options.files ?? (end > start ? [`s3://bucket/${partition}-${start}-${end}.parquet`] : [])).map((p) =>
      dataFile(p),
    ),
    origin: options.origin ?? 'table',
    ...(options.jump ? { logStartJump: options.jump } : {}),
  }
}

export function empty(partition: number): PartitionWriteStatus {
  return { kind: 'empty', topic, partition }
}

export function failed(partition: number, message = 'upload failed'): PartitionWriteStatus {
  return { kind: 'error', topic, partition, message }
}

export function sender(generation = 1, workerId = 'w1'): Sender {
  return { workerId, memberId: `${workerId}-member`, generation }
}

/** A rotation's range as tests write it. */
export type RotationRangeSpec = [partition: number, start: bigint, end: bigint]

export function rotation(
  id: string,
  ranges: RotationRangeSpec[],
  files = [`s3://bucket/${id}.parquet`],
): RotationStatus {
  return {
    id,
    sequence: BigInt(id.replace(/\D/g, '') || '0'),
    ranges: ranges.map(([partition, start, end]) => ({ topic, partition, range: { start, end } })),
    files: files.map((path) => dataFile(path)),
  }
}

/** A sender's status: the summaries follow from the chain unless `summaries` overrides one. */
export function rotationReport(
  generation: number,
  worker: string,
  rotations: RotationStatus[],
  options: { jumps?: Record<number, LogStartJump>; origin?: RangeOrigin; summaries?: PartitionWriteStatus[] } = {},
): RotationReport {
  const chains = new Map<number, { start: bigint; end: bigint }>()
  for (const r of rotations) {
    for (const { partition, range } of r.ranges) {
      const chain = chains.get(partition)
      chains.set(partition, { start: chain?.start ?? range.start, end: range.end })
    }
  }
  const derived = [...chains].map(([partition, { start, end }]) => {
    const jump = options.jumps?.[partition]
    return written(partition, start, end, { files: [], origin: options.origin ?? 'table', ...(jump ? { jump } : {}) })
  })
  const overridden = new Set((options.summaries ?? []).map((s) => s.partition))
  return {
    sender: sender(generation, worker),
    statuses: [...derived.filter((s) => !overridden.has(s.partition)), ...(options.summaries ?? [])],
    rotations,
  }
}

/** A small deterministic generator (mulberry32) of integers below `n`: the same cases on every run. */
export function random(seed: number): (n: number) => number {
  let a = seed
  return (n) => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n)
  }
}
