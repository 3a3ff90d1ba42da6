// The bodies of a round's commands and ACK, through a real encode and decode.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { Progress } from '../shared/progress/index.ts'
import { type ControlBody, type ControlMessage, decodeEnvelope, encodeEnvelope } from './messages.ts'
import { type CommitAcks, commitAckedBody, endCommitBody, partitionAcksOf, startCommitBody } from './round-bodies.ts'

const topic = 'events'

function overTheWire<Body extends ControlBody>(body: Body): ControlMessage<Body> {
  const sender = { workerId: 'w', memberId: 'm', generation: 1 }
  const message = { dataset: 'events', group: 'floe-events', commitId: 'c-1', sender, timeMs: 1, body }
  return decodeEnvelope(encodeEnvelope(message)) as ControlMessage<Body>
}

const acks: CommitAcks = {
  committed: [
    { topic, partition: 0, offset: 150n, filePaths: ['s3://b/0.parquet'] },
    // every record dead-lettered: committed without a file
    { topic, partition: 1, offset: 20n, filePaths: [] },
  ],
  rejected: [
    { topic, partition: 2, reason: 'unknown-to-table', tableOffset: undefined },
    { topic, partition: 3, reason: 'not-contiguous', tableOffset: 2n ** 60n },
  ],
  acceptedRotations: [],
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
    assert.deepEqual(overTheWire(endCommitBody(new Map([[topic, 3]]))).body.expectedPartitions, [
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
    const nothing = commitAckedBody({ committed: [], rejected: [], acceptedRotations: [], snapshotId: undefined })
    assert.equal(overTheWire(nothing).body.snapshotId, null)
  })

  test('reads back what ACK-COMMIT says per partition', () => {
    assert.deepEqual(partitionAcksOf(overTheWire(commitAckedBody({ ...acks, snapshotId: 12n })).body), acks)
  })

  test('writes and reads back the rotations an ACK-COMMIT accepted', () => {
    const acceptedRotations = ['0e6a3c1d-5b2f-4e7a-9c8d-1f2e3d4c5b6a', '7d1e2f3a-4b5c-4d6e-8f7a-9b8c7d6e5f4a']
    const body = overTheWire(commitAckedBody({ ...acks, acceptedRotations, snapshotId: 12n })).body
    assert.deepEqual(body.acceptedRotations, acceptedRotations)
    assert.deepEqual(partitionAcksOf(body), { ...acks, acceptedRotations })
  })

  test('an ACK-COMMIT without rotations reads as it always did, and as none accepted', () => {
    const body = overTheWire(commitAckedBody({ ...acks, snapshotId: 12n })).body
    assert.equal('acceptedRotations' in body, false)
    // An older coordinator's ACK (no field at all) says no rotation was accepted.
    const { acceptedRotations: _, ...older } = body
    assert.deepEqual(partitionAcksOf(older).acceptedRotations, [])
  })
})
