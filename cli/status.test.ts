import assert from 'node:assert/strict'
import { test } from 'node:test'
import { newTableMetadata, type Snapshot, type TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { floeSummaryKeys, offsetsKey } from '../shared/progress/index.ts'
import { rewindSummaryKeys } from './rewind.ts'
import { formatStatus, lastFloeCommit, statusJson } from './status.ts'

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
      consumers: { state: 'Empty', members: 0, unheld: [] },
    },
  ])
  assert.match(text, /last commit: snapshot 1 rewind rw-7 at 1970-01-01T00:00:01.000Z \(1 min 0 s ago\)/)
  assert.match(text, /consumer group: Empty, no worker is running/)
})

test('each partition names the worker that holds it; a Stable group that leaves one to no one says so', () => {
  const partition = (p: number, heldBy: string | undefined) => ({
    partition: p,
    tableOffset: 10n,
    endOffset: 12n,
    lag: 2n,
    heldBy,
  })
  const status = {
    dataset: 'events',
    topic: 'events',
    table: 'lake.events',
    group,
    tableExists: true,
    partitionCount: 3,
    progressSource: 'snapshot' as const,
    partitions: [partition(0, 'floe-w1'), partition(1, 'floe-w2'), partition(2, undefined)],
    totalLag: 6n,
    lastCommit: undefined,
    consumers: { state: 'Stable', members: 2, unheld: [2] },
  }
  const text = formatStatus([status])
  assert.match(text, /consumer group: Stable, 2 member\(s\)/)
  assert.match(text, /held by no member: 2 \(read by no one;/)
  assert.match(text, /partition {2}table offset {2}end offset {2}lag {2}held by/)
  assert.match(text, /\n {2}0 +10 +12 +2 {2}floe-w1\n/)
  assert.match(text, /\n {2}2 +10 +12 +2 {2}-\n/)
  const json = JSON.parse(statusJson([status], 0)) as {
    datasets: { partitions: { heldBy: string | null }[]; consumerGroup: Record<string, unknown> }[]
  }
  assert.deepEqual(
    json.datasets[0]?.partitions.map((p) => p.heldBy),
    ['floe-w1', 'floe-w2', null],
  )
  assert.deepEqual(json.datasets[0]?.consumerGroup, { state: 'Stable', members: 2, unheldPartitions: [2] })
  assert.doesNotMatch(
    formatStatus([{ ...status, consumers: { ...status.consumers, unheld: [] } }]),
    /held by no member/,
  )
})
