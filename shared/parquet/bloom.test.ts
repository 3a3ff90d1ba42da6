import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { parquetMetadata } from 'hyparquet'
import { readBloomFilter, sbbfContains } from 'hyparquet/src/bloom.js'
import { xxhash64 } from 'hyparquet/src/xxhash.js'
import { isFloeError } from '../errors.ts'
import type { Schema, StructValue } from '../iceberg/index.ts'
import { type DataFileMetrics, openDataFile } from './index.ts'
import { needsPyarrow, python, readWithPyarrow, temporaryDirectory } from './test-support.ts'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'name', required: false, type: 'string' },
    { id: 2, name: 'user_id', required: false, type: 'long' },
    { id: 3, name: 'id', required: false, type: 'uuid' },
    { id: 4, name: 'ts', required: true, type: 'timestamptz' },
    { id: 5, name: 'day', required: false, type: 'date' },
    { id: 6, name: 'price', required: false, type: 'decimal(9,2)' },
    { id: 7, name: 'total', required: false, type: 'decimal(18,2)' },
    { id: 8, name: 'huge', required: false, type: 'decimal(30,2)' },
    {
      id: 9,
      name: 'place',
      required: false,
      type: { type: 'struct', fields: [{ id: 10, name: 'city', required: false, type: 'string' }] },
    },
    {
      id: 11,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 12, element: 'string', 'element-required': false },
    },
  ],
}

const uuid = (i: number) =>
  Uint8Array.from({ length: 16 }, (_, k) => (k === 0 ? 0x12 : k === 14 ? i >> 8 : k === 15 ? i & 0xff : 0))

function row(i: number): StructValue {
  return {
    name: `name-${i}`,
    user_id: BigInt(i) * 1000n,
    id: uuid(i),
    ts: BigInt(i) * 1_000_000n,
    day: i,
    price: BigInt(i * 100 + 1),
    total: BigInt(i * 100 + 1),
    huge: BigInt(i * 100 + 1),
    place: i % 10 === 0 ? null : { city: `city-${i}` },
    tags: [`tag-${i}`],
  }
}

/** PLAIN encodings of physical values, written out by hand so the check does not reuse the writer's code. */
const plain = {
  int32: (value: number) => {
    const bytes = new Uint8Array(4)
    new DataView(bytes.buffer).setInt32(0, value, true)
    return bytes
  },
  int64: (value: bigint) => {
    const bytes = new Uint8Array(8)
    new DataView(bytes.buffer).setBigInt64(0, value, true)
    return bytes
  },
  utf8: (value: string) => new TextEncoder().encode(value),
  bigEndian: (value: bigint, length: number) => {
    const bytes = new Uint8Array(length)
    let rest = BigInt.asUintN(length * 8, value)
    for (let k = length - 1; k >= 0; k--) {
      bytes[k] = Number(rest & 0xffn)
      rest >>= 8n
    }
    return bytes
  },
}

const physicalBytes: Record<number, (i: number) => Uint8Array> = {
  1: (i) => plain.utf8(`name-${i}`),
  2: (i) => plain.int64(BigInt(i) * 1000n),
  3: (i) => uuid(i),
  4: (i) => plain.int64(BigInt(i) * 1_000_000n),
  5: (i) => plain.int32(i),
  6: (i) => plain.int32(i * 100 + 1),
  7: (i) => plain.int64(BigInt(i * 100 + 1)),
  8: (i) => plain.bigEndian(BigInt(i * 100 + 1), 13),
  10: (i) => plain.utf8(`city-${i}`),
}

const filteredIds = [1, 2, 3, 4, 5, 6, 7, 8, 10]

async function writeWithFilters(path: string): Promise<DataFileMetrics> {
  const writer = await openDataFile({
    path,
    schema,
    rowGroupRows: 500,
    bloomFilters: filteredIds.map((fieldId) => ({ fieldId, fpp: 0.01 })),
  })
  await writer.append(Array.from({ length: 1000 }, (_, i) => row(i)))
  return writer.close()
}

test('bloom filters of every key-like type hold each written value and reject most others', needsPyarrow, async (t) => {
  const directory = await temporaryDirectory(t)
  const path = join(directory, 'bloom.parquet')
  const metrics = await writeWithFilters(path)
  assert.equal(metrics.bloomFilters.length, filteredIds.length * 2)

  const file = await readFile(path)
  const metadata = parquetMetadata(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength))
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength)
  for (const location of metrics.bloomFilters) {
    const chunks = metadata.row_groups[location.rowGroup]!.columns
    const chunk = chunks.find((c) => c.meta_data?.bloom_filter_offset === location.offset)
    assert.ok(chunk, `filter of field ${location.fieldId} is referenced by a column chunk`)
    assert.equal(chunk.meta_data?.bloom_filter_length, location.length)
    const filter = readBloomFilter({ view, offset: Number(location.offset) })
    assert.ok(filter, `filter of field ${location.fieldId} decodes`)
    const toBytes = physicalBytes[location.fieldId]!
    const first = location.rowGroup * 500
    const rowsOfGroup = Array.from({ length: 500 }, (_, k) => first + k).filter(
      (i) => location.fieldId !== 10 || i % 10 !== 0,
    )
    for (const i of rowsOfGroup) {
      assert.ok(sbbfContains(filter.blocks, xxhash64(toBytes(i))), `field ${location.fieldId} row ${i}`)
    }
    const absent = Array.from({ length: 1000 }, (_, k) => 5000 + k)
    const falsePositives = absent.filter((i) => sbbfContains(filter.blocks, xxhash64(toBytes(i)))).length
    assert.ok(falsePositives < 50, `field ${location.fieldId}: ${falsePositives} false positives in 1000`)
  }

  const pyarrow = await readWithPyarrow(path)
  const offsets = pyarrow.rowGroups.flatMap((group) =>
    group.columns.filter((c) => c.bloomFilterOffset !== null).map((c) => BigInt(c.bloomFilterOffset!)),
  )
  assert.deepEqual(offsets.sort(), metrics.bloomFilters.map((l) => l.offset).sort())
})

test('a bloom filter is refused for a list element or an unknown field', async (t) => {
  const directory = await temporaryDirectory(t)
  for (const fieldId of [12, 11, 99]) {
    await assert.rejects(
      openDataFile({ path: join(directory, `x${fieldId}.parquet`), schema, bloomFilters: [{ fieldId }] }),
      (error) => isFloeError(error, 'CONFIG_INVALID'),
    )
  }
})

// DuckDB (in the stack's venv) reads Parquet bloom filters with an implementation of its own.
test(
  'DuckDB, an independent reader, finds written values in the filters and excludes absent ones',
  needsPyarrow,
  async (t) => {
    const directory = await temporaryDirectory(t)
    const path = join(directory, 'bloom.parquet')
    await writeWithFilters(path)
    const probes = [
      ['name', "'name-3'", "'name-5003'"],
      ['user_id', '3000', '3001'],
      ['id', "'12000000-0000-0000-0000-000000000003'::UUID", "'12000000-0000-0000-0000-000000001388'::UUID"],
      ['ts', 'to_timestamp(3)', 'to_timestamp(3.5)'],
      ['day', "DATE '1970-01-04'", "DATE '1980-01-04'"],
      ['price', '3.01::DECIMAL(9,2)', '3.02::DECIMAL(9,2)'],
      ['total', '3.01::DECIMAL(18,2)', '3.02::DECIMAL(18,2)'],
    ] as const
    const literals = probes.flatMap(([column, present, absent]) => [
      { column, literal: present },
      { column, literal: absent },
    ])
    const script = join(import.meta.dirname, 'testdata', 'probe_bloom_duckdb.py')
    const { stdout } = await promisify(execFile)(python, [script, path, JSON.stringify(literals)])
    const results = JSON.parse(stdout) as [number, boolean][][]
    probes.forEach(([column], index) => {
      // value 3 lives in row group 0 only
      assert.deepEqual(
        results[index * 2],
        [
          [0, false],
          [1, true],
        ],
        `${column} present`,
      )
      assert.deepEqual(
        results[index * 2 + 1],
        [
          [0, true],
          [1, true],
        ],
        `${column} absent`,
      )
    })
  },
)
