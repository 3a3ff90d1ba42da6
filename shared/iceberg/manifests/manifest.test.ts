import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../errors.ts'
import type { PartitionSpec, StructValue } from '../types.ts'
import { readContainer } from './avro-container.ts'
import {
  type ContentFile,
  DataFileContent,
  inheritFromManifest,
  ManifestEntryStatus,
  type ManifestEntryToWrite,
  manifestFileOf,
  partitionResultType,
  readManifest,
  writeManifest,
} from './index.ts'
import {
  bigSnapshotId,
  dataFile,
  daySpec,
  fullStatisticsFile,
  listed,
  serializeBoundForTests,
  widePartition as sharedWidePartition,
  tableSchema,
  wideSpec,
} from './testing.ts'

// -0 rather than 2.5: the sign of a zero float partition value must survive the round trip.
const widePartition: StructValue = { ...sharedWidePartition, score: -0 }
const nullPartition: StructValue = Object.fromEntries(wideSpec.fields.map((f) => [f.name, null]))

function fullFile(n: number, partition: StructValue): ContentFile {
  return {
    ...fullStatisticsFile(n, partition, wideSpec['spec-id']),
    splitOffsets: [4n, 1_048_576n],
    keyMetadata: Uint8Array.of(9, 9),
  }
}

const entries: ManifestEntryToWrite[] = [
  { status: ManifestEntryStatus.ADDED, dataFile: fullFile(1, widePartition) },
  {
    status: ManifestEntryStatus.EXISTING,
    snapshotId: bigSnapshotId - 1n,
    sequenceNumber: 4n,
    fileSequenceNumber: 5n,
    dataFile: dataFile(2, nullPartition, wideSpec['spec-id']),
  },
  {
    status: ManifestEntryStatus.DELETED,
    snapshotId: bigSnapshotId,
    sequenceNumber: 2n,
    fileSequenceNumber: 3n,
    dataFile: { ...dataFile(3, { ...widePartition, score: Number.NaN, id_bucket: 1 }, 2), nanValueCounts: new Map() },
  },
]

function write(list = entries, spec: PartitionSpec = wideSpec) {
  return writeManifest({
    schema: tableSchema,
    spec,
    formatVersion: 2,
    content: 'data',
    snapshotId: bigSnapshotId,
    entries: list,
    serializeBound: serializeBoundForTests,
  })
}

/** Every `field-id`, `element-id` and logical map found in a schema JSON. */
function ids(node: unknown, found = { fieldIds: [] as number[], elementIds: [] as number[], maps: 0 }) {
  if (Array.isArray(node)) for (const n of node) ids(n, found)
  else if (typeof node === 'object' && node !== null) {
    const o = node as Record<string, unknown>
    if (typeof o['field-id'] === 'number') found.fieldIds.push(o['field-id'])
    if (typeof o['element-id'] === 'number') found.elementIds.push(o['element-id'])
    if (o.logicalType === 'map') found.maps += 1
    for (const v of Object.values(o)) ids(v, found)
  }
  return found
}

describe('writeManifest and readManifest', () => {
  test('a manifest reads back exactly as written, 63-bit ids, maps, nulls and every partition type included', () => {
    const read = readManifest(write().bytes)
    assert.equal(read.entries.length, 3)
    const [added, existing, deleted] = read.entries
    assert.deepEqual(added, {
      status: ManifestEntryStatus.ADDED,
      snapshotId: bigSnapshotId,
      sequenceNumber: null,
      fileSequenceNumber: null,
      dataFile: { content: DataFileContent.DATA, ...fullFile(1, widePartition) },
    })
    assert.deepEqual(existing, { ...entries[1], dataFile: { content: 0, ...dataFile(2, nullPartition, 2) } })
    assert.equal(deleted?.status, ManifestEntryStatus.DELETED)
    assert.ok(Number.isNaN(deleted?.dataFile.partition.score))
    assert.ok(Object.is(added?.dataFile.partition.score, -0))
  })

  test('the header carries the keys the spec requires', () => {
    const { metadata } = readContainer(write().bytes)
    assert.deepEqual(JSON.parse(metadata.get('schema') as string), tableSchema)
    assert.equal(metadata.get('schema-id'), '3')
    assert.deepEqual(JSON.parse(metadata.get('partition-spec') as string), wideSpec.fields)
    assert.equal(metadata.get('partition-spec-id'), '2')
    assert.equal(metadata.get('format-version'), '2')
    assert.equal(metadata.get('content'), 'data')
    assert.equal(metadata.get('avro.codec'), 'deflate')
  })

  test('the header schema keeps every field id, element id and map logical type', () => {
    const { schema } = readContainer(write().bytes)
    const found = ids(schema)
    const partitionIds = wideSpec.fields.map((f) => f['field-id'])
    const specIds = [0, 1, 3, 4, 2, 134, 100, 101, 102, 103, 104, 108, 117, 118, 109, 119, 120, 110, 121, 122, 137]
    const more = [138, 139, 125, 126, 127, 128, 129, 130, 131, 132, 135, 140, 143]
    assert.deepEqual(
      [...found.fieldIds].sort((a, b) => a - b),
      [...specIds, ...more, ...partitionIds].sort((a, b) => a - b),
    )
    assert.deepEqual(found.elementIds, [133, 136])
    assert.equal(found.maps, 6)
  })

  test('partition fields get Java-style Avro names and types', () => {
    const { schema } = readContainer(write().bytes)
    type Fields = { fields: { name: string; type: Fields & Record<string, unknown> }[] }
    const dataFileRecord = (schema as Fields).fields[4]?.type
    const partition = dataFileRecord?.fields[3]?.type
    const byName = Object.fromEntries(
      (partition?.fields ?? []).map((f) => [f.name, f as unknown as Record<string, unknown>]),
    )
    assert.deepEqual(byName.ts_day?.type, ['null', { type: 'int', logicalType: 'date' }])
    assert.deepEqual(byName.ts?.type, [
      'null',
      { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true },
    ])
    assert.deepEqual(byName.amount?.type, [
      'null',
      { type: 'fixed', name: 'decimal_10_2', size: 5, logicalType: 'decimal', precision: 10, scale: 2 },
    ])
    assert.deepEqual(byName.device?.type, [
      'null',
      { type: 'fixed', name: 'uuid_fixed', size: 16, logicalType: 'uuid' },
    ])
    assert.equal(byName.meta_x2Eregion?.['iceberg-field-name'], 'meta.region')
    assert.equal(byName.meta_x2Eregion?.['field-id'], 1011)
  })

  test('the summary counts files and rows by status and bounds the partitions', () => {
    const { summary } = write()
    assert.deepEqual(
      { ...summary, partitions: undefined },
      {
        partitionSpecId: 2,
        content: 'data',
        sequenceNumber: null,
        minSequenceNumber: 4n,
        addedSnapshotId: bigSnapshotId,
        addedFilesCount: 1,
        existingFilesCount: 1,
        deletedFilesCount: 1,
        addedRowsCount: 101n,
        existingRowsCount: 102n,
        deletedRowsCount: 103n,
        partitions: undefined,
        keyMetadata: null,
      },
    )
    const byName = Object.fromEntries(wideSpec.fields.map((f, i) => [f.name, summary.partitions?.[i]]))
    // DELETED entries count too, as in Java's PartitionSummary.
    assert.deepEqual(byName.id_bucket, {
      containsNull: true,
      containsNan: false,
      lowerBound: serializeBoundForTests('int', 1),
      upperBound: serializeBoundForTests('int', 7),
    })
    assert.deepEqual(byName.score, {
      containsNull: true,
      containsNan: true,
      lowerBound: serializeBoundForTests('double', -0),
      upperBound: serializeBoundForTests('double', -0),
    })
  })

  test('the smallest sequence number is unknown when only ADDED entries inherit one', () => {
    const { summary } = write([entries[0] as ManifestEntryToWrite])
    assert.equal(summary.minSequenceNumber, null)
    assert.equal(manifestFileOf(write([entries[0] as ManifestEntryToWrite]), 'p').manifestLength > 0n, true)
  })

  test('bounds of strings follow code points, of floats put -0 before +0 and skip NaN', () => {
    const spec: PartitionSpec = {
      'spec-id': 0,
      fields: [
        { 'source-id': 3, 'field-id': 1000, name: 'category', transform: 'identity' },
        { 'source-id': 9, 'field-id': 1001, name: 'score', transform: 'identity' },
      ],
    }
    const files = [
      ['\u{FFFD}', 0],
      ['\u{1F600}', -0],
      ['a', Number.NaN],
    ] as const
    const { summary } = writeManifest({
      schema: tableSchema,
      spec,
      formatVersion: 2,
      content: 'data',
      snapshotId: 1n,
      serializeBound: serializeBoundForTests,
      entries: files.map(([category, score], n) => ({
        status: ManifestEntryStatus.ADDED,
        dataFile: dataFile(n, { category, score }),
      })),
    })
    const text = (b: Uint8Array | null | undefined) => new TextDecoder().decode(b ?? new Uint8Array())
    assert.equal(text(summary.partitions?.[0]?.lowerBound), 'a')
    assert.equal(text(summary.partitions?.[0]?.upperBound), '\u{1F600}')
    assert.deepEqual(summary.partitions?.[1], {
      containsNull: false,
      containsNan: true,
      lowerBound: serializeBoundForTests('double', -0),
      upperBound: serializeBoundForTests('double', 0),
    })
  })

  test('an unpartitioned manifest and the null codec round trip', () => {
    const spec: PartitionSpec = { 'spec-id': 0, fields: [] }
    const written = writeManifest({
      schema: tableSchema,
      spec,
      formatVersion: 2,
      content: 'data',
      snapshotId: 5n,
      codec: 'null',
      serializeBound: serializeBoundForTests,
      entries: [{ status: ManifestEntryStatus.ADDED, dataFile: dataFile(1, {}) }],
    })
    assert.deepEqual(written.summary.partitions, [])
    const read = readManifest(written.bytes)
    assert.deepEqual(read.entries[0]?.dataFile, { content: 0, ...dataFile(1, {}) })
    assert.deepEqual(read.partitionSpec, spec)
  })

  test('inheritance fills ADDED entries from the manifest list and leaves explicit values alone', () => {
    const manifest = { ...listed('m', 1, { addedSnapshotId: bigSnapshotId, sequenceNumber: 9n, partitionSpecId: 2 }) }
    const read = readManifest(write().bytes, { inheritFrom: manifest })
    assert.deepEqual(
      read.entries.map((e) => [e.snapshotId, e.sequenceNumber, e.fileSequenceNumber]),
      [
        [bigSnapshotId, 9n, 9n],
        [bigSnapshotId - 1n, 4n, 5n],
        [bigSnapshotId, 2n, 3n],
      ],
    )
    const v1 = inheritFromManifest(
      { status: 0, snapshotId: 1n, sequenceNumber: null, fileSequenceNumber: null, dataFile: dataFile(1, {}) },
      { ...manifest, sequenceNumber: 0n },
    )
    assert.deepEqual([v1.sequenceNumber, v1.fileSequenceNumber], [0n, 0n])
  })

  const misuse: [string, ManifestEntryToWrite, string][] = [
    [
      'an EXISTING entry without sequence numbers',
      { status: 0, snapshotId: 1n, dataFile: dataFile(1, {}, 2) },
      'INVARIANT_BROKEN',
    ],
    [
      'a DELETED entry without a file sequence number',
      { status: 2, sequenceNumber: 1n, dataFile: dataFile(1, {}, 2) },
      'INVARIANT_BROKEN',
    ],
    [
      'an EXISTING entry without its snapshot id',
      { status: 0, sequenceNumber: 1n, fileSequenceNumber: 1n, dataFile: dataFile(1, {}, 2) },
      'INVARIANT_BROKEN',
    ],
    ['a file of another partition spec', { status: 1, dataFile: dataFile(1, {}, 0) }, 'INVARIANT_BROKEN'],
    [
      'a delete file in a data manifest',
      { status: 1, dataFile: { ...dataFile(1, {}, 2), content: DataFileContent.EQUALITY_DELETES } },
      'INVARIANT_BROKEN',
    ],
    [
      'a record count that is a number',
      { status: 1, dataFile: { ...dataFile(1, {}, 2), recordCount: 5 as unknown as bigint } },
      'INVARIANT_BROKEN',
    ],
    [
      'a partition value of the wrong type',
      { status: 1, dataFile: dataFile(1, { ts_day: 1n }, 2) },
      'INVARIANT_BROKEN',
    ],
    [
      'a uuid partition value of the wrong length',
      { status: 1, dataFile: dataFile(1, { device: Uint8Array.of(1) }, 2) },
      'INVARIANT_BROKEN',
    ],
    ['an unknown status', { status: 7 as 0, dataFile: dataFile(1, {}, 2) }, 'INVARIANT_BROKEN'],
  ]
  for (const [what, entry, code] of misuse) {
    test(`writing refuses ${what}`, () => {
      assert.throws(
        () => write([entry]),
        (error) => isFloeError(error, code as 'INVARIANT_BROKEN'),
      )
    })
  }

  test('reading refuses bytes that are not an Avro container', () => {
    assert.throws(
      () => readManifest(new TextEncoder().encode('PAR1 not avro')),
      (e) => isFloeError(e, 'INVARIANT_BROKEN'),
    )
    const bytes = write().bytes
    assert.throws(
      () => readManifest(bytes.subarray(0, bytes.length - 3)),
      (e) => isFloeError(e, 'INVARIANT_BROKEN'),
    )
  })
})

describe('partitionResultType', () => {
  const cases: [string, number, string][] = [
    ['identity', 3, 'string'],
    ['identity', 5, 'decimal(10,2)'],
    ['bucket[16]', 3, 'int'],
    ['truncate[4]', 3, 'string'],
    ['truncate[10]', 4, 'int'],
    ['year', 2, 'int'],
    ['month', 2, 'int'],
    ['day', 2, 'date'],
    ['hour', 2, 'int'],
    ['void', 1, 'long'],
    ['identity', 12, 'string'],
  ]
  for (const [transform, sourceId, result] of cases) {
    test(`${transform} of source ${sourceId} yields ${result}`, () => {
      assert.equal(
        partitionResultType(tableSchema, { 'source-id': sourceId, 'field-id': 1000, name: 'p', transform }),
        result,
      )
    })
  }
  const refused: [string, number][] = [
    ['hour', 4],
    ['day', 3],
    ['zorder', 1],
    ['identity', 99],
    ['identity', 11],
  ]
  for (const [transform, sourceId] of refused) {
    test(`${transform} of source ${sourceId} is refused as configuration`, () => {
      assert.throws(
        () => partitionResultType(tableSchema, { 'source-id': sourceId, 'field-id': 1000, name: 'p', transform }),
        (e) => isFloeError(e, 'CONFIG_INVALID'),
      )
    })
  }
  test('the day spec used elsewhere derives date and string', () => {
    assert.deepEqual(
      daySpec.fields.map((f) => partitionResultType(tableSchema, f)),
      ['date', 'string'],
    )
  })
})
