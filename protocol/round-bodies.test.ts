// The bodies of a round's commands and ACK, through a real encode and decode.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Progress } from '../shared/progress/index.ts'
import { type ControlBody, type ControlMessage, decodeEnvelope, encodeEnvelope } from './messages.ts'
import { commitAckedBody, endCommitBody, type PartitionAcks, partitionAcksOf, startCommitBody } from './round-bodies.ts'

const topic = 'events'

function overTheWire<Body extends ControlBody>(body: Body): ControlMessage<Body> {
  const sender = { workerId: 'w', memberId: 'm', generation: 1 }
  const message = { dataset: 'events', group: 'floe-events', commitId: 'c-1', sender, timeMs: 1, body }
  return decodeEnvelope(encodeEnvelope(message)) as ControlMessage<Body>
}

const acks: PartitionAcks = {
  committed: [
    { topic, partition: 0, offset: 150n, filePaths: ['s3://b/0.parquet'] },
    // every record dead-lettered: committed without a file
    { topic, partition: 1, offset: 20n, filePaths: [] },
  ],
  rejected: [
    { topic, partition: 2, reason: 'unknown-to-table', tableOffset: undefined },
    { topic, partition: 3, reason: 'not-contiguous', tableOffset: 2n ** 60n },
  ],
}

describe('the round bodies', () => {
  test('writes START-COMMIT with every offset the table holds', () => {
    const progress: Progress = new Map([
      [
        topic,
        new Map([
          [0, 2n ** 60n],
          [3, 9n],
        ]),
      ],
    ])
    assert.deepEqual(overTheWire(startCommitBody(progress, 77n)).body, {
      type: 'StartCommit',
      tableOffsets: [
        { topic, partition: 0, offset: 2n ** 60n },
        { topic, partition: 3, offset: 9n },
      ],
      snapshotId: 77n,
    })
    assert.equal(overTheWire(startCommitBody(new Map(), null)).body.snapshotId, null)
  })

  test('writes END-COMMIT naming every partition of the topic', () => {
    assert.deepEqual(overTheWire(endCommitBody(topic, 3)).body.expectedPartitions, [
      { topic, partition: 0 },
      { topic, partition: 1 },
      { topic, partition: 2 },
    ])
  })

  test('writes ACK-COMMIT with committed offsets, files (none for a dead-lettered range) and rejections', () => {
    const body = overTheWire(commitAckedBody({ ...acks, snapshotId: 12n })).body
    assert.deepEqual(body, {
      type: 'CommitAcked',
      snapshotId: 12n,
      committedOffsets: [
        { topic, partition: 0, offset: 150n },
        { topic, partition: 1, offset: 20n },
      ],
      committedFiles: [
        { topic, partition: 0, filePaths: ['s3://b/0.parquet'] },
        { topic, partition: 1, filePaths: [] },
      ],
      rejections: [
        { topic, partition: 2, reason: 'unknown-to-table' },
        { topic, partition: 3, reason: 'not-contiguous', tableOffset: 2n ** 60n },
      ],
    })
    const nothing = commitAckedBody({ committed: [], rejected: [], snapshotId: undefined })
    assert.equal(overTheWire(nothing).body.snapshotId, null)
  })

  test('reads back what ACK-COMMIT says per partition', () => {
    assert.deepEqual(partitionAcksOf(overTheWire(commitAckedBody({ ...acks, snapshotId: 12n })).body), acks)
  })
})
