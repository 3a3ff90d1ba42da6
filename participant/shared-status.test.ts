import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { CommitAcks } from '../protocol/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'
import { ackPlan, type ChainState, sharedStatus } from './shared-status.ts'
import { partitionKey, type SharedRotation, type SharedSegment } from './wal/index.ts'
import { sharedRotation } from './wal/test-support.ts'

const topic = 't'

function rotation(sequence: number, ranges: Record<number, [number, number]>, files: string[]): SharedRotation {
  return sharedRotation(topic, sequence, ranges, files)
}

function dataFile(uuid: string): DataFile {
  return { filePath: `abfss://d/${uuid}.parquet` } as DataFile
}

function chain(partition: number, chainStart: number, extra: Partial<ChainState> = {}): ChainState {
  return { topic, partition, chainStart: BigInt(chainStart), origin: 'table', ...extra }
}

const uploaded = (...uuids: string[]) => new Map(uuids.map((uuid) => [uuid, dataFile(uuid)]))

describe('the WRITE-STATUS of the shared layout', () => {
  test('carries the rotations oldest first and per partition its chain summary over them, with no files', () => {
    const status = sharedStatus({
      chains: [chain(1, 10), chain(2, 50), chain(3, 7)],
      rotations: [rotation(1, { 1: [10, 20], 2: [50, 60] }, ['a', 'b']), rotation(2, { 2: [60, 65] }, [])],
      uploaded: uploaded('a', 'b'),
    })
    assert.deepEqual(
      status.rotations.map((r) => [r.id, r.files.length, r.ranges.map((range) => range.partition)]),
      [
        ['R1', 2, [1, 2]],
        ['R2', 0, [2]],
      ],
    )
    assert.deepEqual(status.statuses, [
      { kind: 'written', topic, partition: 1, range: { start: 10n, end: 20n }, files: [], origin: 'table' },
      { kind: 'written', topic, partition: 2, range: { start: 50n, end: 65n }, files: [], origin: 'table' },
      { kind: 'empty', topic, partition: 3 },
    ])
    assert.deepEqual(status.gaps, [])
  })

  test('a rotation with a file not yet uploaded, and every rotation after it, waits for the next round', () => {
    const status = sharedStatus({
      chains: [chain(1, 10)],
      rotations: [
        rotation(1, { 1: [10, 20] }, ['a']),
        rotation(2, { 1: [20, 30] }, ['b']),
        rotation(3, { 1: [30, 31] }, []),
      ],
      uploaded: uploaded('a'),
    })
    assert.deepEqual(
      status.rotations.map((r) => r.id),
      ['R1'],
    )
    assert.deepEqual(status.statuses[0], {
      kind: 'written',
      topic,
      partition: 1,
      range: { start: 10n, end: 20n },
      files: [],
      origin: 'table',
    })
  })

  test('a status too big for one message carries only the oldest rotations, and the summaries follow them', () => {
    const status = sharedStatus({
      chains: [chain(1, 0)],
      rotations: [rotation(1, { 1: [0, 5] }, []), rotation(2, { 1: [5, 9] }, [])],
      uploaded: new Map(),
      maxRotations: 1,
    })
    assert.equal(status.rotations.length, 1)
    assert.deepEqual(status.statuses[0]?.kind === 'written' && status.statuses[0].range, { start: 0n, end: 5n })
  })

  test('a log-start jump between two rotations is declared inside the range', () => {
    const status = sharedStatus({
      chains: [chain(1, 10, { logStartJump: { from: 20n, to: 500n } })],
      rotations: [rotation(1, { 1: [10, 20] }, []), rotation(2, { 1: [500, 510] }, [])],
      uploaded: new Map(),
    })
    assert.deepEqual(status.statuses[0], {
      kind: 'written',
      topic,
      partition: 1,
      range: { start: 10n, end: 510n },
      files: [],
      origin: 'table',
      logStartJump: { from: 20n, to: 500n },
    })
  })

  test('ranges that do not chain from the chain start report an error for that partition, which resyncs', () => {
    const status = sharedStatus({
      chains: [chain(1, 10), chain(2, 0)],
      rotations: [rotation(1, { 1: [12, 20], 2: [0, 4] }, [])],
      uploaded: new Map(),
    })
    assert.deepEqual(status.gaps, [1])
    assert.equal(status.statuses[0]?.kind, 'error')
    assert.equal(status.statuses[1]?.kind, 'written')
  })
})

describe('what an ACK-COMMIT makes of the shared WAL', () => {
  const reported = sharedStatus({
    chains: [chain(1, 10), chain(2, 50)],
    rotations: [rotation(1, { 1: [10, 20] }, []), rotation(2, { 1: [20, 30], 2: [50, 60] }, [])],
    uploaded: new Map(),
  }).rotations

  test('accepted rotations are deleted, and committed partitions chain from their new offset', () => {
    const acks: CommitAcks = {
      committed: [{ topic, partition: 1, offset: 20n, filePaths: [] }],
      rejected: [],
      acceptedRotations: ['R1'],
    }
    const plan = ackPlan(acks, [chain(1, 10), chain(2, 50)], reported)
    assert.deepEqual(plan.accepted, ['R1'])
    assert.deepEqual([...plan.rejected], [])
    assert.deepEqual(
      plan.from,
      new Map([
        [partitionKey(topic, 1), 20n],
        [partitionKey(topic, 2), 50n],
      ]),
    )
  })

  test('a reported rotation holding a rejected partition is rejected whole, and the rejected partition chains from the table', () => {
    const acks: CommitAcks = {
      committed: [{ topic, partition: 1, offset: 20n, filePaths: [] }],
      rejected: [{ topic, partition: 2, reason: 'behind-table', tableOffset: 55n }],
      acceptedRotations: ['R1'],
    }
    const plan = ackPlan(acks, [chain(1, 10), chain(2, 50)], reported)
    assert.deepEqual([...plan.rejected], ['R2'])
    assert.equal(plan.from.get(partitionKey(topic, 2)), 55n)
  })
})

describe('the WRITE-STATUS and ACK of a routed dataset', () => {
  const routed: SharedRotation = {
    ...rotation(1, { 1: [10, 20], 2: [50, 60] }, []),
    segments: [
      ['a', 'ns.t_eu'],
      ['b', 'ns.t_us'],
      ['c', 'ns.t_eu'],
    ].map(
      ([uuid, table]) => ({ ...sharedRotation(topic, 1, {}, [uuid as string]).segments[0], table }) as SharedSegment,
    ),
    tables: [
      {
        table: 'ns.t_eu',
        claims: [
          { topic, partition: 1, start: 10n, end: 20n },
          { topic, partition: 2, start: 50n, end: 60n },
        ],
      },
      { table: 'ns.t_us', claims: [{ topic, partition: 2, start: 57n, end: 60n }] },
    ],
  }

  test("each table's claims with its own files, none left outside the tables", () => {
    const status = sharedStatus({
      chains: [chain(1, 10), chain(2, 50)],
      rotations: [routed],
      uploaded: uploaded('a', 'b', 'c'),
    })
    const [reported] = status.rotations
    assert.deepEqual(reported?.files, [])
    assert.deepEqual(
      reported?.tables?.map(({ table, claims, files }) => [
        table,
        claims.map(({ partition, range }) => `${partition}:${range.start}-${range.end}`),
        files.map((file) => file.filePath),
      ]),
      [
        ['ns.t_eu', ['1:10-20', '2:50-60'], [dataFile('a').filePath, dataFile('c').filePath]],
        ['ns.t_us', ['2:57-60'], [dataFile('b').filePath]],
      ],
    )
  })

  test("a rejection's skip floors go with the partition it rejects, read again from the ledger", () => {
    const acks: CommitAcks = {
      committed: [],
      rejected: [
        {
          topic,
          partition: 2,
          reason: 'behind-table',
          tableOffset: 50n,
          skipFloors: [{ table: 'ns.t_us', offset: 57n }],
        },
      ],
      acceptedRotations: [],
    }
    const reported = sharedStatus({ chains: [chain(2, 50)], rotations: [routed], uploaded: uploaded('a', 'b', 'c') })
    const plan = ackPlan(acks, [chain(1, 10), chain(2, 50)], reported.rotations)
    assert.deepEqual([...plan.rejected], ['R1'])
    assert.equal(plan.from.get(partitionKey(topic, 2)), 50n)
    assert.deepEqual(plan.floors, new Map([[partitionKey(topic, 2), new Map([['ns.t_us', 57n]])]]))
  })
})
