// The table updates of one bare append (a snapshot with no data, made current on `main`), which the
// SQL catalog tests and their committer processes send to race each other.
import {
  nextSequenceNumber,
  type SnapshotSummary,
  type TableMetadata,
  type TableUpdate,
} from '../../shared/iceberg/metadata/index.ts'

export function appendUpdates(
  metadata: TableMetadata,
  id: bigint,
  summary: SnapshotSummary = { operation: 'append' },
): TableUpdate[] {
  const parent = metadata['current-snapshot-id']
  return [
    {
      action: 'add-snapshot',
      snapshot: {
        'snapshot-id': id,
        ...(parent === null ? {} : { 'parent-snapshot-id': parent }),
        'sequence-number': nextSequenceNumber(metadata),
        'timestamp-ms': Date.now(),
        'manifest-list': `${metadata.location}/metadata/snap-${id}.avro`,
        summary,
      },
    },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
  ]
}
