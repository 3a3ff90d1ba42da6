// Where a partition starts (invariant 2), table-driven over small working fakes of the table, the
// group and the broker.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type PositionSources, type StartingPoint, startingPoint } from './positioning.ts'

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
    reader: { committed: async () => one(given.group) },
    admin: { startOffsets: async () => one(given.logStart), endOffsets: async () => one(given.logEnd) },
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
      assert.deepEqual(await startingPoint(sources(given), 'events', 4), expected)
    })
  }
})
