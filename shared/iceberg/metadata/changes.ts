// The REST catalog spec's TableUpdate and TableRequirement objects (open-api/rest-catalog-open-api.yaml),
// field for field, so a commit request is these arrays as they are. int64 fields are bigint, as in
// model.ts. The v3 encryption-key updates are left out: Floe writes format v2.
import type { PartitionField, Schema, SortOrder } from '../types.ts'
import type { PartitionStatisticsFile, Snapshot, SnapshotRef, StatisticsFile } from './model.ts'

/** A partition spec as a client may send it: the catalog assigns a missing spec id and field ids. */
export interface UnboundPartitionSpec {
  'spec-id'?: number
  fields: (Omit<PartitionField, 'field-id'> & { 'field-id'?: number })[]
}

export type TableUpdate =
  | { action: 'assign-uuid'; uuid: string }
  | { action: 'upgrade-format-version'; 'format-version': number }
  | { action: 'add-schema'; schema: Schema; 'last-column-id'?: number }
  /** -1 selects the schema added last in the same commit. */
  | { action: 'set-current-schema'; 'schema-id': number }
  | { action: 'add-spec'; spec: UnboundPartitionSpec }
  /** -1 selects the spec added last in the same commit. */
  | { action: 'set-default-spec'; 'spec-id': number }
  | { action: 'add-sort-order'; 'sort-order': SortOrder }
  /** -1 selects the sort order added last in the same commit. */
  | { action: 'set-default-sort-order'; 'sort-order-id': number }
  | { action: 'add-snapshot'; snapshot: Snapshot }
  | ({ action: 'set-snapshot-ref'; 'ref-name': string } & SnapshotRef)
  | { action: 'remove-snapshots'; 'snapshot-ids': bigint[] }
  | { action: 'remove-snapshot-ref'; 'ref-name': string }
  | { action: 'set-location'; location: string }
  | { action: 'set-properties'; updates: Record<string, string> }
  | { action: 'remove-properties'; removals: string[] }
  | { action: 'set-statistics'; statistics: StatisticsFile; 'snapshot-id'?: bigint }
  | { action: 'remove-statistics'; 'snapshot-id': bigint }
  | { action: 'set-partition-statistics'; 'partition-statistics': PartitionStatisticsFile }
  | { action: 'remove-partition-statistics'; 'snapshot-id': bigint }
  | { action: 'remove-partition-specs'; 'spec-ids': number[] }
  | { action: 'remove-schemas'; 'schema-ids': number[] }

export type TableUpdateAction = TableUpdate['action']

export type TableRequirement =
  /** The table must not exist yet. */
  | { type: 'assert-create' }
  | { type: 'assert-table-uuid'; uuid: string }
  /** The ref must point at this snapshot; null means the ref must not exist. */
  | { type: 'assert-ref-snapshot-id'; ref: string; 'snapshot-id': bigint | null }
  | { type: 'assert-last-assigned-field-id'; 'last-assigned-field-id': number }
  | { type: 'assert-current-schema-id'; 'current-schema-id': number }
  | { type: 'assert-last-assigned-partition-id'; 'last-assigned-partition-id': number }
  | { type: 'assert-default-spec-id'; 'default-spec-id': number }
  | { type: 'assert-default-sort-order-id'; 'default-sort-order-id': number }

export type TableRequirementType = TableRequirement['type']
