import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { PartitionWriteStatus } from '../../protocol/index.ts'
import { type Chain, committedOurs, isOutOfLine, partitionOutcome } from './line.ts'
import type { PartitionAckOutcome } from './types.ts'

describe('isOutOfLine', () => {
  const cases: Array<[string, Chain, bigint | undefined, boolean]> = [
    [
      'a chain starting at the table offset is in line',
      { start: 100n, origin: 'table', logStartJump: undefined },
      100n,
      false,
    ],
    [
      'a chain behind the table offset (a missed ACK) is out',
      { start: 100n, origin: 'table', logStartJump: undefined },
      150n,
      true,
    ],
    [
      'a chain ahead of the table offset (a rollback) is out',
      { start: 100n, origin: 'table', logStartJump: undefined },
      50n,
      true,
    ],
    [
      'a chain across a log-start jump from the table offset is in line',
      { start: 500n, origin: 'table', logStartJump: { from: 100n, to: 500n } },
      100n,
      false,
    ],
    [
      'a jump from another offset is out',
      { start: 500n, origin: 'table', logStartJump: { from: 90n, to: 500n } },
      100n,
      true,
    ],
    [
      'a new partition positioned from the group offset is in line',
      { start: 42n, origin: 'group-offset', logStartJump: undefined },
      undefined,
      false,
    ],
    [
      'a new partition positioned by auto.offset.reset is in line',
      { start: 0n, origin: 'offset-reset', logStartJump: undefined },
      undefined,
      false,
    ],
    [
      'a chain from a table offset the table no longer holds is out',
      { start: 42n, origin: 'table', logStartJump: undefined },
      undefined,
      true,
    ],
    [
      'a group-offset chain once the table knows the partition must match it',
      { start: 42n, origin: 'group-offset', logStartJump: undefined },
      50n,
      true,
    ],
    [
      'before the first sync nothing is out of line',
      { start: undefined, origin: 'table', logStartJump: undefined },
      7n,
      false,
    ],
  ]
  for (const [name, chain, tableOffset, expected] of cases) {
    test(name, () => assert.equal(isOutOfLine(chain, tableOffset), expected))
  }
})

describe('partitionOutcome', () => {
  const ack = {
    committed: [{ topic: 'events', partition: 0, offset: 150n, filePaths: ['s3://b/0.parquet'] }],
    rejected: [{ topic: 'events', partition: 1, reason: 'behind-table', tableOffset: 200n }],
  }
  const cases: Array<[string, string, number, PartitionAckOutcome]> = [
    ['a committed partition', 'events', 0, { kind: 'committed', offset: 150n, filePaths: ['s3://b/0.parquet'] }],
    ['a rejected partition', 'events', 1, { kind: 'rejected', reason: 'behind-table', tableOffset: 200n }],
    ['a partition the ACK does not name', 'events', 2, { kind: 'not-included' }],
    ['the same partition of another topic', 'other', 0, { kind: 'not-included' }],
  ]
  for (const [name, topic, partition, expected] of cases) {
    test(`reads ${name}`, () => assert.deepEqual(partitionOutcome(ack, topic, partition), expected))
  }
})

describe('committedOurs', () => {
  const reported: PartitionWriteStatus = {
    kind: 'written',
    topic: 'events',
    partition: 0,
    range: { start: 100n, end: 150n },
    files: [],
    origin: 'table',
  }
  const cases: Array<[string, PartitionAckOutcome, PartitionWriteStatus | undefined, boolean]> = [
    ['a commit to the end of the reported range', { kind: 'committed', offset: 150n, filePaths: [] }, reported, true],
    ['a commit to another offset', { kind: 'committed', offset: 170n, filePaths: [] }, reported, false],
    [
      'a commit when this participant reported EMPTY',
      { kind: 'committed', offset: 150n, filePaths: [] },
      { kind: 'empty', topic: 'events', partition: 0 },
      false,
    ],
    ['a rejection', { kind: 'rejected', reason: 'behind-table', tableOffset: 150n }, reported, false],
  ]
  for (const [name, outcome, status, expected] of cases) {
    test(`${name}: ${expected}`, () => assert.equal(committedOurs(outcome, status), expected))
  }
})
