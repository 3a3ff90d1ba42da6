// A partition's WRITE-STATUS as the participant writes it and the coordinator reads it, through a
// real encode and decode.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { DataFile, StructType } from '../shared/iceberg/index.ts'
import { toDataFile, toDataFileEntry } from './data-file.ts'
import { type ControlBody, type ControlMessage, decodeEnvelope, encodeEnvelope, type WriteStatus } from './messages.ts'
import {
  type PartitionWriteStatus,
  type RotationStatus,
  toPartitionStatus,
  toRotation,
  writeStatusReport,
} from './partition-write-status.ts'

const unpartitioned: StructType = { type: 'struct', fields: [] }
const sender = { workerId: 'w', memberId: 'm', generation: 4 }
const file: DataFile = {
  filePath: 's3://b/3.parquet',
  fileFormat: 'PARQUET',
  specId: 0,
  partition: {},
  recordCount: 5n,
  fileSizeInBytes: 100n,
}
const toEntry = (f: DataFile) => toDataFileEntry(f, unpartitioned)

function overTheWire<Body extends ControlBody>(body: Body): ControlMessage<Body> {
  const message = { dataset: 'events', group: 'floe-events', commitId: 'c-1', sender, timeMs: 1, body }
  return decodeEnvelope(encodeEnvelope(message)) as ControlMessage<Body>
}

const written: PartitionWriteStatus = {
  kind: 'written',
  topic: 'events',
  partition: 3,
  range: { start: 500n, end: 600n },
  files: [file],
  origin: 'offset-reset',
  logStartJump: { from: 100n, to: 500n },
  oldestTimestampMs: 1_764_460_800_123,
}

describe('a partition write status on the wire', () => {
  test('writes a status with its range, files, origin, log-start jump and oldest record time', () => {
    const wire = toPartitionStatus(written, toEntry)
    assert.equal(wire.origin, 'offset-reset')
    const [decoded] = overTheWire({ type: 'WriteStatus', partitions: [wire] }).body.partitions
    assert.deepEqual(
      { ...decoded, files: decoded?.files.map((entry) => toDataFile(entry, unpartitioned)) },
      {
        topic: 'events',
        partition: 3,
        kind: 'data',
        rangeStart: 500n,
        rangeEnd: 600n,
        files: [file],
        logStartJump: { from: 100n, to: 500n, lost: 400n },
        origin: 'offset-reset',
        oldestTimestampMs: 1_764_460_800_123,
      },
    )
  })

  test('writes EMPTY and ERROR statuses', () => {
    const body = overTheWire({
      type: 'WriteStatus',
      partitions: [
        toPartitionStatus({ kind: 'empty', topic: 'events', partition: 1 }, toEntry),
        toPartitionStatus({ kind: 'error', topic: 'events', partition: 2, message: 'disk full' }, toEntry),
      ],
    }).body
    assert.deepEqual(
      body.partitions.map((p) => [p.kind, p.error]),
      [
        ['empty', undefined],
        ['error', 'disk full'],
      ],
    )
  })

  test('reads back every kind of status the participant wrote', () => {
    const statuses: PartitionWriteStatus[] = [
      written,
      { kind: 'empty', topic: 'events', partition: 1 },
      { kind: 'error', topic: 'events', partition: 2, message: 'upload failed' },
    ]
    const body: WriteStatus = { type: 'WriteStatus', partitions: statuses.map((s) => toPartitionStatus(s, toEntry)) }
    const report = writeStatusReport(overTheWire(body), (entry) => toDataFile(entry, unpartitioned))
    assert.deepEqual(report, { commitId: 'c-1', sender, statuses })
  })

  test('reads a status without an origin strictly, as a chain from the table', () => {
    const body: WriteStatus = {
      type: 'WriteStatus',
      partitions: [
        {
          topic: 'events',
          partition: 0,
          kind: 'data',
          rangeStart: 500n,
          rangeEnd: 600n,
          files: [toEntry(file)],
          logStartJump: { from: 100n, to: 500n, lost: 400n },
        },
      ],
    }
    const report = writeStatusReport(overTheWire(body), (entry) => toDataFile(entry, unpartitioned))
    assert.deepEqual(report.statuses, [
      {
        kind: 'written',
        topic: 'events',
        partition: 0,
        range: { start: 500n, end: 600n },
        files: [file],
        origin: 'table',
        logStartJump: { from: 100n, to: 500n },
      },
    ])
  })

  test('reads back a shared-segment status: chain summaries without files, rotations oldest first', () => {
    const summary: PartitionWriteStatus = {
      kind: 'written',
      topic: 'events',
      partition: 3,
      range: { start: 500n, end: 620n },
      files: [],
      origin: 'table',
      logStartJump: { from: 560n, to: 600n },
    }
    const rotations: RotationStatus[] = [
      {
        id: 'r-1',
        sequence: 2n ** 63n + 1n,
        ranges: [
          { topic: 'events', partition: 3, range: { start: 500n, end: 560n } },
          { topic: 'events', partition: 4, range: { start: 9n, end: 10n } },
        ],
        files: [file, { ...file, filePath: 's3://b/4.parquet' }],
      },
      // Every record dead-lettered: a rotation without files still claims its range.
      {
        id: 'r-2',
        sequence: 2n ** 63n + 2n,
        ranges: [{ topic: 'events', partition: 3, range: { start: 600n, end: 620n } }],
        files: [],
      },
    ]
    const statuses: PartitionWriteStatus[] = [
      summary,
      { kind: 'written', topic: 'events', partition: 4, range: { start: 9n, end: 10n }, files: [], origin: 'table' },
    ]
    const body: WriteStatus = {
      type: 'WriteStatus',
      partitions: statuses.map((s) => toPartitionStatus(s, toEntry)),
      rotations: rotations.map((r) => toRotation(r, toEntry)),
    }
    const report = writeStatusReport(overTheWire(body), (entry) => toDataFile(entry, unpartitioned))
    assert.deepEqual(report, { commitId: 'c-1', sender, statuses, rotations })
  })

  test("reads back a routed rotation: each table's claims and files, a table past its skip floor", () => {
    const eu = { ...file, filePath: 's3://b/eu.parquet' }
    const us = { ...file, filePath: 's3://b/us.parquet' }
    const rotation: RotationStatus = {
      id: 'r-1',
      sequence: 1n,
      ranges: [
        { topic: 'events', partition: 0, range: { start: 10n, end: 90n } },
        { topic: 'events', partition: 1, range: { start: 5n, end: 6n } },
      ],
      files: [],
      tables: [
        {
          table: 'ns.events_eu',
          claims: [
            { topic: 'events', partition: 0, range: { start: 10n, end: 90n } },
            { topic: 'events', partition: 1, range: { start: 5n, end: 6n } },
          ],
          files: [eu, { ...eu, filePath: 's3://b/eu-2.parquet' }],
        },
        {
          table: 'ns.events_us',
          claims: [{ topic: 'events', partition: 0, range: { start: 40n, end: 90n } }],
          files: [us],
        },
      ],
    }
    const statuses: PartitionWriteStatus[] = rotation.ranges.map(({ topic, partition, range }) => ({
      kind: 'written',
      topic,
      partition,
      range,
      files: [],
      origin: 'table',
    }))
    const body: WriteStatus = {
      type: 'WriteStatus',
      partitions: statuses.map((s) => toPartitionStatus(s, toEntry)),
      rotations: [toRotation(rotation, toEntry)],
    }
    assert.deepEqual(
      body.rotations?.[0]?.files.map((f) => [f.filePath, f.table]),
      [
        ['s3://b/eu.parquet', 'ns.events_eu'],
        ['s3://b/eu-2.parquet', 'ns.events_eu'],
        ['s3://b/us.parquet', 'ns.events_us'],
      ],
    )
    const report = writeStatusReport(overTheWire(body), (entry) => toDataFile(entry, unpartitioned))
    assert.deepEqual(report.rotations, [rotation])
  })

  test('a routed rotation with a file of no table keeps that file apart, for the check to refuse', () => {
    const rotation: RotationStatus = {
      id: 'r-1',
      sequence: 1n,
      ranges: [{ topic: 'events', partition: 0, range: { start: 0n, end: 9n } }],
      files: [],
      tables: [
        { table: 'ns.t_a', claims: [{ topic: 'events', partition: 0, range: { start: 0n, end: 9n } }], files: [] },
      ],
    }
    const wire = toRotation(rotation, toEntry)
    wire.files.push(toEntry(file))
    const body: WriteStatus = { type: 'WriteStatus', partitions: [], rotations: [wire] }
    const report = writeStatusReport(overTheWire(body), (entry) => toDataFile(entry, unpartitioned))
    assert.deepEqual(report.rotations?.[0]?.files, [file])
    assert.deepEqual(report.rotations?.[0]?.tables, rotation.tables)
  })

  test('a status without rotations decodes exactly as the per-partition layout always did', () => {
    const body: WriteStatus = { type: 'WriteStatus', partitions: [toPartitionStatus(written, toEntry)] }
    const decoded = overTheWire(body).body
    assert.deepEqual(decoded, body)
    assert.equal('rotations' in decoded, false)
    const report = writeStatusReport(overTheWire(body), (entry) => toDataFile(entry, unpartitioned))
    assert.equal('rotations' in report, false)
  })
})
