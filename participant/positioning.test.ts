// Where a partition starts (invariant 2), table-driven over small working fakes of the table, the
// group and the broker.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { BrokerPositions, type PositionSources, type StartingPoint, startingPoint } from './positioning.ts'

function sources(given: {
  table?: bigint
  group?: bigint
  logStart: bigint
  logEnd: bigint
  reset: 'earliest' | 'latest'
}): PositionSources {
  const one = (offset: bigint | undefined) => new Map(offset === undefined ? [] : [[4, offset]])
  return {
    table: { offsets: async () => one(given.table) },
    broker: {
      logStart: async () => given.logStart,
      logEnd: async () => given.logEnd,
      committed: async () => given.group,
    },
    autoOffsetReset: given.reset,
  }
}

const cases: { name: string; given: Parameters<typeof sources>[0]; expected: StartingPoint }[] = [
  {
    name: 'the table offset wins over the group offset',
    given: { table: 120n, group: 300n, logStart: 0n, logEnd: 500n, reset: 'earliest' },
    expected: { start: 120n, origin: 'table', tableOffset: 120n, logStart: 0n },
  },
  {
    name: 'a partition the table never saw starts at the group offset',
    given: { group: 300n, logStart: 10n, logEnd: 500n, reset: 'latest' },
    expected: { start: 300n, origin: 'group-offset', tableOffset: undefined, logStart: 10n },
  },
  {
    name: 'without either, earliest is the log start',
    given: { logStart: 10n, logEnd: 500n, reset: 'earliest' },
    expected: { start: 10n, origin: 'offset-reset', tableOffset: undefined, logStart: 10n },
  },
  {
    name: 'without either, latest is the log end',
    given: { logStart: 10n, logEnd: 500n, reset: 'latest' },
    expected: { start: 500n, origin: 'offset-reset', tableOffset: undefined, logStart: 10n },
  },
]

describe('startingPoint', () => {
  for (const { name, given, expected } of cases) {
    test(name, async () => {
      assert.deepEqual(await startingPoint(sources(given), 4), expected)
    })
  }
})

test('a partition the table has seen asks the broker for its log start only', async () => {
  const unasked = async (): Promise<bigint> => {
    throw new Error('not to be asked')
  }
  const point = await startingPoint(
    {
      table: { offsets: async () => new Map([[4, 120n]]) },
      broker: { logStart: async () => 7n, logEnd: unasked, committed: unasked },
      autoOffsetReset: 'latest',
    },
    4,
  )
  assert.deepEqual(point, { start: 120n, origin: 'table', tableOffset: 120n, logStart: 7n })
})

describe('BrokerPositions', () => {
  function counting() {
    const asked: { kind: string; partitions: number[] }[] = []
    const offsets = (kind: string, base: bigint) => async (_topic: string, partitions: number[]) => {
      asked.push({ kind, partitions })
      return new Map(partitions.map((p) => [p, base + BigInt(p)]))
    }
    const admin = { startOffsets: offsets('start', 0n), endOffsets: offsets('end', 1000n) }
    const reader = {
      committed: async (partitions: number[]) => {
        asked.push({ kind: 'committed', partitions })
        // partition 2 has no committed offset
        return new Map(partitions.filter((p) => p !== 2).map((p) => [p, 500n + BigInt(p)]))
      },
    }
    return { asked, positions: new BrokerPositions('events', admin, reader) }
  }

  test('lookups made in the same turn of the event loop are one request per kind', async () => {
    const { asked, positions } = counting()
    const starts = await Promise.all([0, 1, 2, 1].map((p) => positions.logStart(p)))
    const committed = await Promise.all([0, 1, 2].map((p) => positions.committed(p)))
    assert.deepEqual(starts, [0n, 1n, 2n, 1n])
    assert.deepEqual(committed, [500n, 501n, undefined])
    assert.deepEqual(asked, [
      { kind: 'start', partitions: [0, 1, 2] },
      { kind: 'committed', partitions: [0, 1, 2] },
    ])
  })

  test('a later turn asks again, and a failed request fails every lookup it carried', async () => {
    const { asked, positions } = counting()
    assert.equal(await positions.logEnd(3), 1003n)
    assert.equal(await positions.logEnd(3), 1003n)
    assert.equal(asked.length, 2)
    const failing = new BrokerPositions(
      'events',
      {
        startOffsets: async () => {
          throw new Error('broker unreachable')
        },
        endOffsets: async () => new Map(),
      },
      { committed: async () => new Map() },
    )
    const results = await Promise.allSettled([failing.logStart(0), failing.logStart(1)])
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    )
  })
})
