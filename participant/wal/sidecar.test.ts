import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { StructType } from '../../shared/iceberg/index.ts'
import { FloeError } from '../../shared/index.ts'
import { type JsonObject, parseJson } from '../../shared/json/index.ts'
import { decodeSidecar, encodeSidecar } from './sidecar.ts'
import type { ReadySegment } from './types.ts'

const partitionType: StructType = {
  type: 'struct',
  fields: [
    { id: 1000, name: 'user_id', required: false, type: 'long' },
    { id: 1001, name: 'token', required: false, type: 'binary' },
    { id: 1002, name: 'ts_day', required: false, type: 'date' },
    { id: 1003, name: 'price', required: false, type: 'decimal(38, 2)' },
    { id: 1004, name: 'region', required: false, type: 'string' },
  ],
}

const partitionValues = {
  user_id: 2n ** 62n + 1n,
  token: Uint8Array.of(0, 255, 7),
  ts_day: 19_700,
  price: -(10n ** 30n) - 1n,
  region: null,
}

const segment: ReadySegment = {
  uuid: '0f8fad5b-d9cb-469f-a165-70867728950e',
  localPath: '/wal/events/t-0/x.parquet',
  jsonPath: '/wal/events/t-0/x.json',
  topic: 't',
  partition: 0,
  start: 9007199254740993n,
  end: 9007199254741000n,
  partitionValues,
  partitionPath:
    'user_id=4611686018427387905/token=AP8H/ts_day=2023-12-09/price=-1000000000000000000000000000.01/region=null',
  dataFile: {
    fileFormat: 'PARQUET',
    specId: 3,
    partition: partitionValues,
    recordCount: 7n,
    fileSizeInBytes: 2n ** 40n,
    columnSizes: new Map([
      [1, 100n],
      [2, 2n ** 55n],
    ]),
    valueCounts: new Map([[1, 7n]]),
    nullValueCounts: new Map([[1, 0n]]),
    nanValueCounts: new Map(),
    lowerBounds: new Map([[1, Uint8Array.of(1, 2, 3)]]),
    upperBounds: new Map([[1, Uint8Array.of(255)]]),
    splitOffsets: [4n, 2n ** 54n],
  },
  bloomFilters: [{ fieldId: 1, rowGroup: 0, offset: 2n ** 53n + 3n, length: 1024 }],
  sizeBytes: 2 ** 40,
}

test('a sidecar reads back what was written: 64-bit counts, bytes, decimals and nulls intact', () => {
  const text = new TextDecoder().decode(encodeSidecar(segment, partitionType))
  const { segment: read, partitionType: type } = decodeSidecar(text)
  const { localPath: _l, jsonPath: _j, ...expected } = segment
  assert.deepEqual(read, expected)
  assert.deepEqual(type, partitionType)
})

test('an uploaded location and a sort order survive the round trip', () => {
  const uploaded: ReadySegment = {
    ...segment,
    dataFile: { ...segment.dataFile, sortOrderId: 2 },
    uploadedLocation: 'abfss://lake/t/data/x.parquet',
  }
  const { segment: read } = decodeSidecar(new TextDecoder().decode(encodeSidecar(uploaded, partitionType)))
  assert.equal(read.uploadedLocation, 'abfss://lake/t/data/x.parquet')
  assert.equal(read.dataFile.sortOrderId, 2)
})

test('partition values are written in the spec JSON single-value form, keyed by field id', () => {
  const json = parseJson(new TextDecoder().decode(encodeSidecar(segment, partitionType))) as JsonObject
  assert.deepEqual(json['partitionValues'], {
    1000: 4611686018427387905n,
    1001: '00ff07',
    1002: '2023-12-09',
    1003: '-10000000000000000000000000000.01',
    1004: null,
  })
})

test('a damaged sidecar is refused with a FloeError, never half read', () => {
  const good = new TextDecoder().decode(encodeSidecar(segment, partitionType))
  for (const text of [
    '',
    good.slice(0, good.length - 10),
    good.replace('"version":1', '"version":2'),
    good.replace('"recordCount":7', '"recordCount":"7"'),
    good.replace('"1002":"2023-12-09"', '"1002":"yesterday"'),
    good.replace('"AQID"', '"!!"'),
  ]) {
    assert.throws(() => decodeSidecar(text), FloeError)
  }
})
