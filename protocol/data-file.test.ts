import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { DataFile, StructType } from '../shared/iceberg/index.ts'
import { isFloeError } from '../shared/index.ts'
import { type DataFileEntry, toDataFile, toDataFileEntry } from './data-file.ts'
import { decodeEnvelope, encodeEnvelope, type WriteStatus } from './messages.ts'
import { dataFile, fullPartitionType, message } from './test-fixtures.ts'

/** DataFile -> entry -> envelope bytes -> entry -> DataFile, as participant and coordinator do it. */
function overTheWire(
  file: DataFile,
  partitionType: StructType,
  bloom?: string,
): { entry: DataFileEntry; back: DataFile } {
  const sent = message<WriteStatus>({
    type: 'WriteStatus',
    partitions: [
      {
        topic: 't',
        partition: 0,
        kind: 'data',
        rangeStart: 0n,
        rangeEnd: 1n,
        files: [toDataFileEntry(file, partitionType, bloom)],
      },
    ],
  })
  const received = decodeEnvelope(encodeEnvelope(sent)).body as WriteStatus
  const entry = received.partitions[0]!.files[0]!
  return { entry, back: toDataFile(entry, partitionType) }
}

const unpartitioned: StructType = { type: 'struct', fields: [] }

describe('data files in a WRITE-STATUS', () => {
  test('a data file with every statistic and every kind of partition value comes back unchanged', () => {
    for (const i of [0, 1, 255]) {
      const file = dataFile(i)
      const { entry, back } = overTheWire(file, fullPartitionType, 'file:///bloom/0.bin')
      assert.deepStrictEqual(back, file)
      assert.equal(entry.bloomFilterLocation, 'file:///bloom/0.bin')
    }
  })

  test('partition values travel in the spec JSON single-value form, keyed by partition field id', () => {
    const { entry } = overTheWire(dataFile(1), fullPartitionType)
    const text = (id: number) => entry.partitionJson.get(id)
    const expected: [number, string][] = [
      [1000, '4611686018427387905'],
      [1001, '"2017-11-16"'],
      [1002, '1'],
      [1004, '-0.0'],
      [1005, '"NaN"'],
      [1006, '"-1234567890123456789.0123"'],
      [1008, '"000102FF"'],
      [1010, 'false'],
      [1011, '"1969-12-31"'],
      [1012, '"23:59:59.999999"'],
      [1014, 'null'],
    ]
    for (const [id, json] of expected) {
      assert.equal(text(id)?.toLowerCase(), json.toLowerCase(), `field ${id}`)
    }
    assert.match(text(1007)!, /^"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"$/)
    assert.equal(entry.partitionJson.size, fullPartitionType.fields.length)
  })

  test('0.0 and -0.0 stay different partitions', () => {
    const type: StructType = {
      type: 'struct',
      fields: [
        { id: 1000, name: 'f', required: false, type: 'float' },
        { id: 1001, name: 'd', required: false, type: 'double' },
      ],
    }
    for (const value of [0, -0]) {
      const file = { ...dataFile(0), partition: { f: value, d: value } }
      assert.ok(Object.is(overTheWire(file, type).back.partition['f'], value))
      assert.ok(Object.is(overTheWire(file, type).back.partition['d'], value))
    }
  })

  test('a data file of an unpartitioned table with no optional statistics comes back unchanged', () => {
    const file: DataFile = {
      filePath: 'abfss://c@a.dfs.core.windows.net/t/data/x.parquet',
      fileFormat: 'PARQUET',
      specId: 0,
      partition: {},
      recordCount: 0n,
      fileSizeInBytes: 4n,
    }
    const { entry, back } = overTheWire(file, unpartitioned)
    assert.deepStrictEqual(back, file)
    assert.equal(entry.bloomFilterLocation, undefined)
    assert.equal(entry.partitionJson.size, 0)
  })

  test('a partition field missing from an entry reads as null', () => {
    const entry = { ...toDataFileEntry(dataFile(0), fullPartitionType), partitionJson: new Map<number, string>() }
    const back = toDataFile(entry, fullPartitionType)
    assert.ok(Object.values(back.partition).every((value) => value === null))
  })

  const mismatches: [string, (entry: DataFileEntry) => DataFileEntry, StructType][] = [
    [
      'a partition field id the partition type lacks',
      (entry) => ({ ...entry, partitionJson: new Map([...entry.partitionJson, [2000, '1']]) }),
      fullPartitionType,
    ],
    [
      'a partition value of another type',
      (entry) => ({ ...entry, partitionJson: new Map([...entry.partitionJson, [1001, '"not a date"']]) }),
      fullPartitionType,
    ],
    [
      'a partition value that is not JSON',
      (entry) => ({ ...entry, partitionJson: new Map([...entry.partitionJson, [1000, '12,']]) }),
      fullPartitionType,
    ],
    ['the partition type of another spec', (entry) => entry, unpartitioned],
  ]
  for (const [name, change, type] of mismatches) {
    test(`an entry with ${name} is refused as undecodable`, () => {
      const entry = change(toDataFileEntry(dataFile(0), fullPartitionType))
      assert.throws(
        () => toDataFile(entry, type),
        (error) => isFloeError(error, 'PROTOCOL_UNDECODABLE') && error.details['reason'] === 'partition-mismatch',
      )
    })
  }

  test('a data file whose partition names a field its spec lacks cannot be reported', () => {
    const file = { ...dataFile(0), partition: { ...dataFile(0).partition, stray: 1 } }
    assert.throws(
      () => toDataFileEntry(file, fullPartitionType),
      (error) => isFloeError(error, 'CONVERSION_FAILED'),
    )
  })
})
