// The coordinator's mapping to and from protocol/ messages, through a real encode and decode.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  type ControlBody,
  type ControlMessage,
  decodeEnvelope,
  encodeEnvelope,
  toDataFile,
  toDataFileEntry,
  type WriteStatus,
} from '../protocol/index.ts'
import type { StructType } from '../shared/iceberg/index.ts'
import { roundAck } from './commit-content.ts'
import { checkContiguity } from './contiguity.ts'
import { dataFile, empty, failed, sender, topic, written } from './test-fixtures.ts'
import type { Progress } from './types.ts'
import { commitAckedBody, endCommitBody, startCommitBody, writeStatusReport } from './wire.ts'

const unpartitioned: StructType = { type: 'struct', fields: [] }

function overTheWire<Body extends ControlBody>(body: Body): ControlMessage<Body> {
  const message = { dataset: 'events', group: 'floe-events', commitId: 'c-1', sender: sender(4), timeMs: 1, body }
  return decodeEnvelope(encodeEnvelope(message)) as ControlMessage<Body>
}

describe('the coordinator wire mapping', () => {
  test('reads a WRITE-STATUS of data, empty and failed partitions with a log-start jump', () => {
    const body: WriteStatus = {
      type: 'WriteStatus',
      partitions: [
        {
          topic,
          partition: 0,
          kind: 'data',
          rangeStart: 500n,
          rangeEnd: 600n,
          files: [toDataFileEntry(dataFile('s3://b/0.parquet'), unpartitioned)],
          logStartJump: { from: 100n, to: 500n, lost: 400n },
        },
        { topic, partition: 1, kind: 'empty', rangeStart: 7n, rangeEnd: 7n, files: [] },
        { topic, partition: 2, kind: 'error', rangeStart: 0n, rangeEnd: 0n, files: [], error: 'upload failed' },
      ],
    }
    const report = writeStatusReport(overTheWire(body), (entry) => toDataFile(entry, unpartitioned))
    assert.deepEqual(report, {
      commitId: 'c-1',
      sender: sender(4),
      statuses: [
        // The wire has no origin yet: read strictly, as a chain from the table.
        {
          ...written(0, 500n, 600n, { files: ['s3://b/0.parquet'], jump: { from: 100n, to: 500n } }),
          files: [dataFile('s3://b/0.parquet')],
        },
        empty(1),
        failed(2, 'upload failed'),
      ],
    })
  })

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
    const table: Progress = new Map([
      [
        topic,
        new Map([
          [0, 100n],
          [1, 10n],
        ]),
      ],
    ])
    const check = checkContiguity(table, [
      written(0, 100n, 150n, { files: ['s3://b/0.parquet'] }),
      written(1, 10n, 20n, { files: [] }),
      written(2, 5n, 9n, { origin: 'table' }),
    ])
    const body = overTheWire(commitAckedBody(roundAck('c-1', 12n, check))).body
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
      rejections: [{ topic, partition: 2, reason: 'unknown-to-table' }],
    })
    assert.equal(overTheWire(commitAckedBody(roundAck('c-2', undefined))).body.snapshotId, null)
  })
})
