import assert from 'node:assert/strict'
import { test } from 'node:test'
import { newTableMetadata, type Snapshot, type TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { floeSummaryKeys, offsetsKey } from '../shared/progress/index.ts'
import { rewindSummaryKeys } from './rewind.ts'
import { formatStatus, lastFloeCommit } from './status.ts'

const group = 'floe-events'

/** A table whose main branch is these snapshots, oldest first, each the parent of the next. */
function tableOf(summaries: Record<string, string>[]): TableMetadata {
  const empty = newTableMetadata({
    schema: { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: true, type: 'string' }] },
    location: 'file:///w/t',
    nowMs: 0,
  })
  const snapshots: Snapshot[] = summaries.map((summary, i) => ({
    'snapshot-id': BigInt(i + 1),
    ...(i > 0 ? { 'parent-snapshot-id': BigInt(i) } : {}),
    'sequence-number': BigInt(i + 1),
    'timestamp-ms': 1000 * (i + 1),
    'manifest-list': `file:///w/t/metadata/snap-${i + 1}.avro`,
    summary: { operation: 'append', ...summary },
  }))
  const head = BigInt(snapshots.length)
  return { ...empty, snapshots, 'current-snapshot-id': head, refs: { main: { type: 'branch', 'snapshot-id': head } } }
}

const marker = { [offsetsKey(group)]: '{"0":"10"}' }

test('the last commit is the newest snapshot that moved the group’s marker, a round’s or a rewind’s', () => {
  const round = { ...marker, [floeSummaryKeys.commitId]: 'round-1' }
  const rewind = { ...marker, [rewindSummaryKeys.rewindId]: 'rewind-1' }
  const other = { 'added-records': '5' }
  assert.deepEqual(lastFloeCommit(tableOf([round, other]), group, 5000), {
    snapshotId: 1n,
    kind: 'round',
    commitId: 'round-1',
    committedAtMs: 1000,
    ageMs: 4000,
  })
  const rewound = tableOf([round, rewind, other])
  assert.equal(lastFloeCommit(rewound, group, 5000)?.kind, 'rewind')
  assert.equal(lastFloeCommit(rewound, group, 5000)?.commitId, 'rewind-1')
  // Another group's marker, or a commit id without this group's marker, is not this group's.
  assert.equal(lastFloeCommit(tableOf([{ [floeSummaryKeys.commitId]: 'x' }, other]), group, 5000), undefined)
  assert.equal(lastFloeCommit(rewound, 'floe-other', 5000), undefined)
})

test('the human report names a rewind as a rewind', () => {
  const lastCommit = lastFloeCommit(tableOf([{ ...marker, [rewindSummaryKeys.rewindId]: 'rw-7' }]), group, 61_000)
  const text = formatStatus([
    {
      dataset: 'events',
      topic: 'events',
      table: 'lake.events',
      group,
      tableExists: true,
      partitionCount: 1,
      progressSource: 'snapshot',
      partitions: [],
      totalLag: 0n,
      lastCommit,
    },
  ])
  assert.match(text, /last commit: snapshot 1 rewind rw-7 at 1970-01-01T00:00:01.000Z \(1 min 0 s ago\)/)
})
