// Questions a writer asks of table metadata: the current snapshot, a ref's history, the schema and
// spec to write with, the next snapshot id and sequence number.
import { randomBytes } from 'node:crypto'
import { FloeError } from '../../errors.ts'
import type { PartitionSpec, Schema, SortOrder } from '../types.ts'
import { mainBranch, type Snapshot, type TableMetadata } from './model.ts'

export function snapshotById(metadata: TableMetadata, snapshotId: bigint): Snapshot | undefined {
  return metadata.snapshots.find((snapshot) => snapshot['snapshot-id'] === snapshotId)
}

export function currentSnapshot(metadata: TableMetadata): Snapshot | undefined {
  const id = metadata['current-snapshot-id']
  return id === null ? undefined : snapshotById(metadata, id)
}

/** The snapshot id a branch or tag points at, or null when the ref does not exist. */
export function refSnapshotId(metadata: TableMetadata, ref: string = mainBranch): bigint | null {
  return metadata.refs[ref]?.['snapshot-id'] ?? (ref === mainBranch ? metadata['current-snapshot-id'] : null)
}

/**
 * The snapshot with this id and then its parents, newest first. Stops where a parent is gone
 * (expired), so it yields what the table can still prove.
 */
export function* ancestorsOf(metadata: TableMetadata, snapshotId: bigint | null | undefined): Generator<Snapshot> {
  // Indexed once: a table may hold thousands of snapshots and a walk visits most of them.
  const byId = new Map(metadata.snapshots.map((snapshot) => [snapshot['snapshot-id'], snapshot]))
  const seen = new Set<bigint>()
  let next = snapshotId ?? undefined
  while (next !== undefined && !seen.has(next)) {
    const snapshot = byId.get(next)
    if (snapshot === undefined) return
    seen.add(next)
    yield snapshot
    next = snapshot['parent-snapshot-id']
  }
}

/** The history of a branch (default main), newest first. */
export function ancestorsOfRef(metadata: TableMetadata, ref: string = mainBranch): Generator<Snapshot> {
  return ancestorsOf(metadata, refSnapshotId(metadata, ref))
}

function missing(what: string): FloeError {
  return new FloeError('CATALOG_BAD_REQUEST', `table metadata names ${what}, which it does not hold`)
}

export function schemaById(metadata: TableMetadata, schemaId: number): Schema | undefined {
  return metadata.schemas.find((schema) => schema['schema-id'] === schemaId)
}

export function currentSchema(metadata: TableMetadata): Schema {
  const schema = schemaById(metadata, metadata['current-schema-id'])
  if (schema === undefined) throw missing(`current schema ${metadata['current-schema-id']}`)
  return schema
}

export function specById(metadata: TableMetadata, specId: number): PartitionSpec | undefined {
  return metadata['partition-specs'].find((spec) => spec['spec-id'] === specId)
}

export function defaultSpec(metadata: TableMetadata): PartitionSpec {
  const spec = specById(metadata, metadata['default-spec-id'])
  if (spec === undefined) throw missing(`default partition spec ${metadata['default-spec-id']}`)
  return spec
}

export function defaultSortOrder(metadata: TableMetadata): SortOrder {
  const order = metadata['sort-orders'].find((o) => o['order-id'] === metadata['default-sort-order-id'])
  if (order === undefined) throw missing(`default sort order ${metadata['default-sort-order-id']}`)
  return order
}

/** The sequence number a snapshot committed on top of this metadata must carry (format v2). */
export function nextSequenceNumber(metadata: TableMetadata): bigint {
  return metadata['last-sequence-number'] + 1n
}

const longMask = (1n << 63n) - 1n

/**
 * A fresh positive 63-bit snapshot id, as Iceberg's writers make them (random, never 0), that no
 * snapshot of the table already uses.
 */
export function newSnapshotId(metadata?: TableMetadata): bigint {
  for (;;) {
    const id = randomBytes(8).readBigUInt64BE() & longMask
    if (id !== 0n && (metadata === undefined || snapshotById(metadata, id) === undefined)) return id
  }
}
