// Serves the tests of protocol/ and integration/protocol/ only (not exported from index.ts):
// a table whose partition spec covers every kind of partition value, data files with every
// statistic set, and messages of every body type with values past 2^53.
import type { DataFile, PartitionSpec, Schema, StructType } from '../shared/iceberg/index.ts'
import { partitionType } from '../shared/iceberg/partitioning/index.ts'
import { toDataFileEntry } from './data-file.ts'
import type { ControlBody, ControlMessage, WriteStatus } from './messages.ts'

export const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'name', required: false, type: 'string' },
    { id: 4, name: 'score', required: false, type: 'float' },
    { id: 5, name: 'ratio', required: false, type: 'double' },
    { id: 6, name: 'amount', required: false, type: 'decimal(38,4)' },
    { id: 7, name: 'key', required: false, type: 'uuid' },
    { id: 8, name: 'blob', required: false, type: 'binary' },
    { id: 9, name: 'code', required: false, type: 'fixed[3]' },
    { id: 10, name: 'flag', required: false, type: 'boolean' },
    { id: 11, name: 'day', required: false, type: 'date' },
    { id: 12, name: 'at', required: false, type: 'time' },
    { id: 13, name: 'local', required: false, type: 'timestamp' },
  ],
}

export const spec: PartitionSpec = {
  'spec-id': 3,
  fields: [
    { 'source-id': 1, 'field-id': 1000, name: 'id', transform: 'identity' },
    { 'source-id': 2, 'field-id': 1001, name: 'ts_day', transform: 'day' },
    { 'source-id': 3, 'field-id': 1002, name: 'name_bucket', transform: 'bucket[16]' },
    { 'source-id': 3, 'field-id': 1003, name: 'name', transform: 'identity' },
    { 'source-id': 4, 'field-id': 1004, name: 'score', transform: 'identity' },
    { 'source-id': 5, 'field-id': 1005, name: 'ratio', transform: 'identity' },
    { 'source-id': 6, 'field-id': 1006, name: 'amount', transform: 'identity' },
    { 'source-id': 7, 'field-id': 1007, name: 'key', transform: 'identity' },
    { 'source-id': 8, 'field-id': 1008, name: 'blob', transform: 'identity' },
    { 'source-id': 9, 'field-id': 1009, name: 'code', transform: 'identity' },
    { 'source-id': 10, 'field-id': 1010, name: 'flag', transform: 'identity' },
    { 'source-id': 11, 'field-id': 1011, name: 'day', transform: 'identity' },
    { 'source-id': 12, 'field-id': 1012, name: 'at', transform: 'identity' },
    { 'source-id': 13, 'field-id': 1013, name: 'local', transform: 'identity' },
    { 'source-id': 1, 'field-id': 1014, name: 'id_void', transform: 'void' },
  ],
}

export const fullPartitionType: StructType = partitionType(spec, schema)

/** Past Number.MAX_SAFE_INTEGER: a plain number would round these. */
export const bigOffset = 2n ** 53n + 3n
/** A snapshot id as Iceberg makes them: random, up to 63 bits. */
export const snapshotId = 9_223_372_036_854_775_807n - 12_345n

export function dataFile(i: number): DataFile {
  return {
    filePath: `file:///warehouse/db/events/data/ts_day=2017-11-16/${i.toString().padStart(5, '0')}-0-5f0c6a2e-8d7e-4f49-9a5b-3c4d2e1f0a9b.parquet`,
    fileFormat: 'PARQUET',
    specId: 3,
    partition: {
      id: 2n ** 62n + BigInt(i),
      ts_day: 17_486,
      name_bucket: i % 16,
      name: `näme-${i} "quoted" \u{1F600}`,
      score: -0,
      ratio: Number.NaN,
      amount: -12_345_678_901_234_567_890_123n,
      key: Uint8Array.from({ length: 16 }, (_, k) => (k * 17 + i) & 0xff),
      blob: Uint8Array.of(0, 1, 2, 0xff),
      code: Uint8Array.of(0xca, 0xfe, i & 0xff),
      flag: i % 2 === 0,
      day: -1,
      at: 86_399_999_999n,
      local: -1n,
      id_void: null,
    },
    recordCount: 1_000_000n + BigInt(i),
    fileSizeInBytes: 2n ** 40n + BigInt(i),
    columnSizes: new Map([
      [1, 8_000_000n],
      [3, 12_345n],
    ]),
    valueCounts: new Map([
      [1, 1_000_000n],
      [3, 1_000_000n],
    ]),
    nullValueCounts: new Map([
      [1, 0n],
      [3, 17n],
    ]),
    nanValueCounts: new Map([[5, 3n]]),
    lowerBounds: new Map([
      [1, Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0)],
      [3, new TextEncoder().encode('a')],
    ]),
    upperBounds: new Map([
      [1, Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)],
      [3, new TextEncoder().encode('zz')],
    ]),
    splitOffsets: [4n, 2n ** 33n],
    sortOrderId: 0,
  }
}

export function message<Body extends ControlBody>(body: Body, commitId = '1c6b0a57-3f4e-4d0c-9a8a-2b7f1e0c5d3a') {
  return {
    dataset: 'events',
    group: 'floe-events',
    commitId,
    sender: { workerId: 'worker-a', memberId: 'floe-worker-a-5b7c', generation: 7 },
    timeMs: 1_767_225_600_123,
    body,
  } satisfies ControlMessage<Body>
}

/** A WriteStatus of one data partition with `files` files, one empty and one failed partition. */
export function writeStatus(files: number): WriteStatus {
  return {
    type: 'WriteStatus',
    partitions: [
      {
        topic: 'events',
        partition: 0,
        kind: 'data',
        rangeStart: bigOffset,
        rangeEnd: bigOffset + 5_000n,
        files: Array.from({ length: files }, (_, i) =>
          toDataFileEntry(dataFile(i), fullPartitionType, `file:///warehouse/db/events/bloom/${i}.bin`),
        ),
        logStartJump: { from: bigOffset - 100n, to: bigOffset, lost: 100n },
      },
      { topic: 'events', partition: 1, kind: 'empty', rangeStart: 42n, rangeEnd: 42n, files: [] },
      { topic: 'events', partition: 2, kind: 'error', rangeStart: 0n, rangeEnd: 0n, files: [], error: 'upload failed' },
    ],
  }
}

/**
 * A WriteStatus of the shared-segment layout: two rotations over partitions 0 and 1 holding
 * `files` files each (the second rotation one file fewer, and one without files), their chain
 * summaries in `partitions` without files.
 */
export function rotationWriteStatus(files: number): WriteStatus {
  const entries = (rotation: number, count: number) =>
    Array.from({ length: count }, (_, i) => toDataFileEntry(dataFile(rotation * 10_000 + i), fullPartitionType))
  return {
    type: 'WriteStatus',
    partitions: [
      { topic: 'events', partition: 0, kind: 'data', rangeStart: bigOffset, rangeEnd: bigOffset + 30n, files: [] },
      { topic: 'events', partition: 1, kind: 'data', rangeStart: 7n, rangeEnd: 9n, files: [], origin: 'offset-reset' },
    ],
    rotations: [
      {
        id: '0e6a3c1d-5b2f-4e7a-9c8d-1f2e3d4c5b6a',
        sequence: 41n,
        ranges: [
          { topic: 'events', partition: 0, start: bigOffset, end: bigOffset + 10n },
          { topic: 'events', partition: 1, start: 7n, end: 9n },
        ],
        files: entries(1, files),
      },
      {
        id: '7d1e2f3a-4b5c-4d6e-8f7a-9b8c7d6e5f4a',
        sequence: 42n,
        ranges: [{ topic: 'events', partition: 0, start: bigOffset + 10n, end: bigOffset + 30n }],
        files: entries(2, Math.max(0, files - 1)),
      },
      { id: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d', sequence: 43n, ranges: [], files: [] },
    ],
  }
}

/** A routed dataset's status: one rotation whose files go to two tables, each claiming its partitions. */
export function routedWriteStatus(): WriteStatus {
  const entry = (i: number, table: string) => ({ ...toDataFileEntry(dataFile(i), fullPartitionType), table })
  return {
    type: 'WriteStatus',
    partitions: [{ topic: 'events', partition: 0, kind: 'data', rangeStart: 7n, rangeEnd: 90n, files: [] }],
    rotations: [
      {
        id: '0e6a3c1d-5b2f-4e7a-9c8d-1f2e3d4c5b6a',
        sequence: 1n,
        ranges: [{ topic: 'events', partition: 0, start: 7n, end: 90n }],
        files: [entry(1, 'ns.events_eu'), entry(2, 'ns.events_eu'), entry(3, 'ns.events_us')],
        tableClaims: [
          { table: 'ns.events_eu', topic: 'events', partition: 0, start: 7n, end: 90n },
          // past the rotation's start: the table's skip floor
          { table: 'ns.events_us', topic: 'events', partition: 0, start: bigOffset, end: 90n },
        ],
      },
    ],
  }
}
