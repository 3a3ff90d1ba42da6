import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { create, toBinary, type UnknownField } from '@bufbuild/protobuf'
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire'
import { isFloeError } from '../shared/index.ts'
import { EnvelopeSchema, type PartitionStatus_Kind } from './gen/index.ts'
import {
  type ControlBody,
  type ControlMessage,
  decodeEnvelope,
  encodeEnvelope,
  PROTOCOL_VERSION,
  type WriteStatus,
} from './messages.ts'
import { bigOffset, message, rotationWriteStatus, routedWriteStatus, snapshotId, writeStatus } from './test-fixtures.ts'
import { bodyToWire } from './wire.ts'

const bodies: [string, ControlBody][] = [
  [
    'a StartCommit with offsets past 2^53 and a 63-bit snapshot id',
    {
      type: 'StartCommit',
      tableOffsets: [
        { topic: 'events', partition: 0, offset: bigOffset },
        { topic: 'events', partition: 1, offset: 0n },
        { topic: 'events', partition: 2147483647, offset: 9_223_372_036_854_775_807n },
      ],
      snapshotId,
    },
  ],
  ['a StartCommit of a table without snapshots', { type: 'StartCommit', tableOffsets: [], snapshotId: null }],
  ['a StartCommit whose snapshot id is 0', { type: 'StartCommit', tableOffsets: [], snapshotId: 0n }],
  [
    'an EndCommit naming the expected partitions',
    {
      type: 'EndCommit',
      expectedPartitions: [
        { topic: 'events', partition: 0 },
        { topic: 'events', partition: 1 },
      ],
    },
  ],
  ['an EndCommit without expected partitions', { type: 'EndCommit', expectedPartitions: [] }],
  ['a WriteStatus with data, empty and failed partitions and a log-start jump', writeStatus(3)],
  ['a WriteStatus without partitions', { type: 'WriteStatus', partitions: [] }],
  ['a WriteStatus of shared-segment rotations, one of them without files or ranges', rotationWriteStatus(2)],
  ['a WriteStatus of a routed rotation, its files and claims naming their tables', routedWriteStatus()],
  ["a routed WriteStatus naming its sender's route", { ...routedWriteStatus(), route: '9f86d081884c7d65' }],
  [
    'a WriteStatus of the shared-segment layout with no rotation yet (still not a per-partition status)',
    {
      type: 'WriteStatus',
      partitions: [{ topic: 'events', partition: 0, kind: 'data', rangeStart: 10n, rangeEnd: 20n, files: [] }],
      rotations: [],
    },
  ],
  [
    "a WriteStatus whose rotations' files are behind a pointer",
    { ...rotationWriteStatus(0), filesPointer: { location: 'file:///t/metadata/floe-control/c/w-v.pb', fileCount: 9 } },
  ],
  [
    'a WriteStatus whose files are behind a pointer',
    {
      type: 'WriteStatus',
      partitions: [{ topic: 'events', partition: 0, kind: 'data', rangeStart: 10n, rangeEnd: 20n, files: [] }],
      filesPointer: { location: 'file:///t/metadata/floe-control/c/w-u.pb', fileCount: 12_000 },
    },
  ],
  [
    'a CommitAcked with committed offsets, files and rejections',
    {
      type: 'CommitAcked',
      snapshotId,
      committedOffsets: [{ topic: 'events', partition: 0, offset: bigOffset + 5_000n }],
      committedFiles: [{ topic: 'events', partition: 0, filePaths: ['file:///a.parquet', 'file:///b.parquet'] }],
      rejections: [{ topic: 'events', partition: 1, reason: 'range starts at 40, table is at 42', tableOffset: 42n }],
    },
  ],
  [
    'a CommitAcked naming the rotations it accepted',
    {
      type: 'CommitAcked',
      snapshotId,
      committedOffsets: [{ topic: 'events', partition: 0, offset: bigOffset + 30n }],
      committedFiles: [{ topic: 'events', partition: 0, filePaths: [] }],
      rejections: [],
      acceptedRotations: ['0e6a3c1d-5b2f-4e7a-9c8d-1f2e3d4c5b6a', '7d1e2f3a-4b5c-4d6e-8f7a-9b8c7d6e5f4a'],
    },
  ],
  [
    'a CommitAcked of a routed dataset: a rejection with the tables ahead of the ledger',
    {
      type: 'CommitAcked',
      snapshotId: null,
      committedOffsets: [],
      committedFiles: [],
      rejections: [
        {
          topic: 'events',
          partition: 1,
          reason: 'behind-table',
          tableOffset: 40n,
          skipFloors: [
            { table: 'ns.events_eu', offset: 52n },
            { table: 'ns.events_us', offset: bigOffset },
          ],
        },
      ],
    },
  ],
  [
    'a CommitAcked that committed nothing',
    { type: 'CommitAcked', snapshotId: null, committedOffsets: [], committedFiles: [], rejections: [] },
  ],
  [
    'a CommitRequested at shutdown',
    { type: 'CommitRequested', reason: 'shutdown', partitions: [{ topic: 'events', partition: 3 }] },
  ],
  ['a CommitRequested with nothing set', { type: 'CommitRequested', reason: '', partitions: [] }],
]

function unknownText(no: number, text: string): UnknownField {
  return { no, wireType: WireType.LengthDelimited, data: new BinaryWriter().string(text).finish() }
}

function unknownNumber(no: number, value: bigint): UnknownField {
  return { no, wireType: WireType.Varint, data: new BinaryWriter().uint64(value).finish() }
}

function wireEnvelope(source: ControlMessage, version = PROTOCOL_VERSION) {
  return create(EnvelopeSchema, {
    version,
    dataset: source.dataset,
    group: source.group,
    commitId: source.commitId,
    sender: source.sender,
    timeMs: BigInt(source.timeMs),
    body: bodyToWire(source.body),
  })
}

function decodeError(bytes: Uint8Array): unknown {
  try {
    decodeEnvelope(bytes)
  } catch (error) {
    return error
  }
  assert.fail('decodeEnvelope accepted the bytes')
}

describe('control envelopes', () => {
  for (const [name, body] of bodies) {
    test(`${name} survives encode and decode unchanged`, () => {
      const sent = message(body)
      assert.deepStrictEqual(decodeEnvelope(encodeEnvelope(sent)), sent)
    })
  }

  test('the header survives with an empty commit id, no member and a negative generation', () => {
    const sent = {
      ...message({ type: 'CommitRequested', reason: 'shutdown', partitions: [] } as const, ''),
      sender: { workerId: '', memberId: '', generation: -1 },
      timeMs: 0,
    }
    assert.deepStrictEqual(decodeEnvelope(encodeEnvelope(sent)), sent)
  })

  test('an envelope is written with the current protocol version in field 1', () => {
    const bytes = encodeEnvelope(message({ type: 'EndCommit', expectedPartitions: [] }))
    assert.deepStrictEqual([...bytes.subarray(0, 2)], [0x08, PROTOCOL_VERSION])
  })

  test('fields a newer version added, at every level, are ignored', () => {
    const sent = message(writeStatus(2))
    const envelope = wireEnvelope(sent)
    envelope.$unknown = [unknownText(7, 'a future header'), unknownNumber(4000, 2n ** 60n)]
    envelope.sender!.$unknown = [unknownText(9, 'zone-a')]
    assert.equal(envelope.body.case, 'writeStatus')
    const status = envelope.body.value
    status.$unknown = [unknownNumber(50, 1n)]
    status.partitions[0]!.$unknown = [unknownText(99, 'future partition fact')]
    status.partitions[0]!.files[0]!.$unknown = [unknownText(17, 'future file stat'), unknownNumber(18, 5n)]
    status.partitions[0]!.files[0]!.partition[0]!.$unknown = [unknownText(3, 'binary form')]
    status.partitions[0]!.logStartJump!.$unknown = [unknownNumber(4, 1n)]
    const bytes = toBinary(EnvelopeSchema, envelope)
    assert.ok(bytes.length > encodeEnvelope(sent).length, 'the unknown fields are on the wire')
    assert.deepStrictEqual(decodeEnvelope(bytes), sent)
  })

  test('an envelope of a newer major version is refused as unsupported', () => {
    const bytes = toBinary(EnvelopeSchema, wireEnvelope(message(writeStatus(1)), PROTOCOL_VERSION + 1))
    const error = decodeError(bytes)
    assert.ok(isFloeError(error, 'PROTOCOL_VERSION_UNSUPPORTED'), String(error))
    assert.equal(error.details['version'], PROTOCOL_VERSION + 1)
  })

  test('an envelope with a body this version does not know is undecodable', () => {
    const envelope = create(EnvelopeSchema, { version: 1, dataset: 'events', commitId: 'c' })
    envelope.$unknown = [unknownText(21, 'a body from the future')]
    const error = decodeError(toBinary(EnvelopeSchema, envelope))
    assert.ok(isFloeError(error, 'PROTOCOL_UNDECODABLE'), String(error))
    assert.equal(error.details['reason'], 'unknown-body')
  })

  test('a partition status of a kind this version does not know is undecodable', () => {
    const envelope = wireEnvelope(message(writeStatus(0)))
    assert.equal(envelope.body.case, 'writeStatus')
    envelope.body.value.partitions[1]!.kind = 7 as PartitionStatus_Kind
    const error = decodeError(toBinary(EnvelopeSchema, envelope))
    assert.ok(isFloeError(error, 'PROTOCOL_UNDECODABLE'), String(error))
    assert.equal(error.details['reason'], 'unknown-kind')
  })

  const valid = encodeEnvelope(message(writeStatus(2)))
  const garbage: [string, Uint8Array, string][] = [
    ['no bytes at all', new Uint8Array(0), 'no-version'],
    ['JSON text', new TextEncoder().encode('{"type":"StartCommit","commitId":"x"}'), 'malformed'],
    ['0xff bytes', new Uint8Array(32).fill(0xff), 'malformed'],
    ['an envelope cut short inside its body', valid.subarray(0, valid.length - 3), 'malformed'],
    ['an envelope without a version', toBinary(EnvelopeSchema, wireEnvelope(message(writeStatus(0)), 0)), 'no-version'],
  ]
  for (const [name, bytes, reason] of garbage) {
    test(`${name} is undecodable (${reason})`, () => {
      const error = decodeError(bytes)
      assert.ok(isFloeError(error, 'PROTOCOL_UNDECODABLE'), String(error))
      assert.equal(error.details['reason'], reason)
    })
  }

  test('random bytes only ever decode to a message or fail with a protocol error', () => {
    // A fixed-seed generator (xorshift32), so a failure reproduces.
    let state = 0x9e3779b9
    const next = () => {
      state ^= state << 13
      state ^= state >>> 17
      state ^= state << 5
      return state >>> 0
    }
    for (let i = 0; i < 2000; i++) {
      const bytes = Uint8Array.from({ length: 1 + (next() % 200) }, () => next() & 0xff)
      try {
        decodeEnvelope(bytes)
      } catch (error) {
        assert.ok(
          isFloeError(error, 'PROTOCOL_UNDECODABLE') || isFloeError(error, 'PROTOCOL_VERSION_UNSUPPORTED'),
          `case ${i}: ${String(error)}`,
        )
      }
    }
  })

  test('an envelope read from a Node Buffer gives plain, unshared Uint8Array bounds', () => {
    const sent = message(writeStatus(1))
    const buffer = Buffer.from(encodeEnvelope(sent))
    const received = decodeEnvelope(buffer)
    assert.deepStrictEqual(received, sent)
    const bound = (received.body as WriteStatus).partitions[0]!.files[0]!.lowerBounds!.get(1)!
    assert.equal(Object.getPrototypeOf(bound), Uint8Array.prototype)
    assert.notEqual(bound.buffer, buffer.buffer)
  })

  test('a WriteStatus with 100 files encodes to a few tens of KiB', () => {
    const bytes = encodeEnvelope(message(writeStatus(100)))
    const decoded = decodeEnvelope(bytes).body as WriteStatus
    assert.equal(decoded.partitions[0]!.files.length, 100)
    assert.ok(bytes.length < 100 * 1024, `${bytes.length} bytes`)
  })
})
