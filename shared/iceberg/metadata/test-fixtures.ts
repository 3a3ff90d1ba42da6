// A small real-shaped metadata file for the tests of this folder: three appends on main, 63-bit
// snapshot ids, a key the model does not know. Not exported by index.ts.
import type { Snapshot } from './model.ts'

export const ids = {
  first: 6915089267855529686n,
  second: 3051729675574597004n,
  third: 9223372036854775807n,
}

export const baseMs = 1_796_013_173_987

export const metadataText = `{
  "format-version": 2,
  "table-uuid": "ec733cac-84a5-4f1c-8dd7-f46e63f2e13a",
  "location": "file:///warehouse/db/events",
  "last-sequence-number": 3,
  "last-updated-ms": ${baseMs + 2000},
  "last-column-id": 2,
  "current-schema-id": 0,
  "schemas": [{"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": true, "type": "long"},
    {"id": 2, "name": "ts", "required": false, "type": "timestamptz"}]}],
  "default-spec-id": 0,
  "partition-specs": [{"spec-id": 0, "fields": [{"name": "ts_day", "transform": "day", "source-id": 2, "field-id": 1000}]}],
  "last-partition-id": 1000,
  "default-sort-order-id": 0,
  "sort-orders": [{"order-id": 0, "fields": []}],
  "properties": {"owner": "floe"},
  "current-snapshot-id": ${ids.third},
  "refs": {"main": {"snapshot-id": ${ids.third}, "type": "branch"}},
  "snapshots": [
    {"snapshot-id": ${ids.first}, "sequence-number": 1, "timestamp-ms": ${baseMs},
     "manifest-list": "file:///warehouse/db/events/metadata/snap-1.avro", "summary": {"operation": "append"}, "schema-id": 0},
    {"snapshot-id": ${ids.second}, "parent-snapshot-id": ${ids.first}, "sequence-number": 2, "timestamp-ms": ${baseMs + 1000},
     "manifest-list": "file:///warehouse/db/events/metadata/snap-2.avro", "summary": {"operation": "append", "floe.commit-id": "c2"}, "schema-id": 0},
    {"snapshot-id": ${ids.third}, "parent-snapshot-id": ${ids.second}, "sequence-number": 3, "timestamp-ms": ${baseMs + 2000},
     "manifest-list": "file:///warehouse/db/events/metadata/snap-3.avro", "summary": {"operation": "append"}, "schema-id": 0}
  ],
  "statistics": [],
  "partition-statistics": [],
  "snapshot-log": [
    {"timestamp-ms": ${baseMs}, "snapshot-id": ${ids.first}},
    {"timestamp-ms": ${baseMs + 1000}, "snapshot-id": ${ids.second}},
    {"timestamp-ms": ${baseMs + 2000}, "snapshot-id": ${ids.third}}
  ],
  "metadata-log": [{"timestamp-ms": ${baseMs - 5000}, "metadata-file": "file:///warehouse/db/events/metadata/00000-a.metadata.json"}],
  "x-engine-extension": {"kept": [1, 2, 3]}
}`

export function snapshot(
  id: bigint,
  parent: bigint | undefined,
  sequenceNumber: bigint,
  timestampMs: number,
): Snapshot {
  const result: Snapshot = {
    'snapshot-id': id,
    'sequence-number': sequenceNumber,
    'timestamp-ms': timestampMs,
    'manifest-list': `file:///warehouse/db/events/metadata/snap-${id}.avro`,
    summary: { operation: 'append' },
    'schema-id': 0,
  }
  if (parent !== undefined) result['parent-snapshot-id'] = parent
  return result
}
