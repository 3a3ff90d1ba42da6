// Control messages as a partition machine's events, through a real encode and decode.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type ControlBody, type ControlMessage, decodeEnvelope, encodeEnvelope } from '../../protocol/index.ts'
import { participantEventOf } from './control-events.ts'

function overTheWire<Body extends ControlBody>(body: Body): ControlMessage<Body> {
  const message = {
    dataset: 'events',
    group: 'floe-events',
    commitId: 'c-1',
    sender: { workerId: 'w', memberId: 'm', generation: 1 },
    timeMs: 1,
    body,
  }
  return decodeEnvelope(encodeEnvelope(message)) as ControlMessage<Body>
}

describe('control messages as machine events', () => {
  test("reads this partition's table offset from START-COMMIT, or none for a partition the table never saw", () => {
    const start = overTheWire({
      type: 'StartCommit',
      tableOffsets: [{ topic: 'events', partition: 3, offset: 2n ** 55n }],
      snapshotId: 1n,
    })
    assert.deepEqual(participantEventOf(start, 'events', 3), {
      type: 'control.start-commit',
      commitId: 'c-1',
      tableOffset: 2n ** 55n,
    })
    assert.deepEqual(participantEventOf(start, 'events', 4), {
      type: 'control.start-commit',
      commitId: 'c-1',
      tableOffset: undefined,
    })
  })

  test('answers every END-COMMIT, listed or not', () => {
    const end = overTheWire({ type: 'EndCommit', expectedPartitions: [{ topic: 'events', partition: 0 }] })
    assert.deepEqual(participantEventOf(end, 'events', 3), { type: 'control.end-commit', commitId: 'c-1' })
  })

  const ack = overTheWire({
    type: 'CommitAcked',
    snapshotId: 9n,
    committedOffsets: [
      { topic: 'events', partition: 3, offset: 150n },
      { topic: 'events', partition: 4, offset: 20n },
    ],
    committedFiles: [{ topic: 'events', partition: 3, filePaths: ['s3://b/3.parquet'] }],
    rejections: [
      { topic: 'events', partition: 5, reason: 'behind-table', tableOffset: 70n },
      { topic: 'events', partition: 6, reason: 'unknown-to-table' },
    ],
  })
  const outcomes: Array<[number, unknown]> = [
    [3, { kind: 'committed', offset: 150n, filePaths: ['s3://b/3.parquet'] }],
    [4, { kind: 'committed', offset: 20n, filePaths: [] }],
    [5, { kind: 'rejected', reason: 'behind-table', tableOffset: 70n }],
    [6, { kind: 'rejected', reason: 'unknown-to-table', tableOffset: undefined }],
    [7, { kind: 'not-included' }],
  ]
  for (const [partition, outcome] of outcomes) {
    test(`reads ACK-COMMIT for partition ${partition} as ${JSON.stringify(outcome, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`, () => {
      assert.deepEqual(participantEventOf(ack, 'events', partition), {
        type: 'control.commit-acked',
        commitId: 'c-1',
        outcome,
      })
    })
  }

  test('does not act on CommitRequested or WriteStatus', () => {
    assert.equal(
      participantEventOf(overTheWire({ type: 'CommitRequested', reason: 'shutdown', partitions: [] }), 'events', 3),
      undefined,
    )
    assert.equal(participantEventOf(overTheWire({ type: 'WriteStatus', partitions: [] }), 'events', 3), undefined)
  })
})
