import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { isFloeError } from '../errors.ts'
import type { IcebergValue, Schema, StructValue } from '../iceberg/index.ts'
import { openDataFileReader } from './data-file-reader.ts'
import { temporaryDirectory, writeDataFile } from './test-support.ts'
import { allTypesRows, allTypesSchema } from './testdata/all-types.ts'

async function readAll(bytes: Uint8Array, schema: Schema): Promise<StructValue[]> {
  const reader = openDataFileReader(bytes, schema)
  const rows: StructValue[] = []
  for (let i = 0; i < reader.rowGroupCount; i++) rows.push(...(await reader.readRowGroup(i)))
  return rows
}

/** What a float column gives back: the value rounded to 32 bits. */
function asStored(row: StructValue): StructValue {
  const ratio = row['ratio']
  return { ...row, ratio: typeof ratio === 'number' ? Math.fround(ratio) : (ratio ?? null) }
}

test('every Iceberg type reads back as the value written, row group by row group', async (t) => {
  const dir = await temporaryDirectory(t)
  const rows = allTypesRows(3000, 7)
  for (const codec of ['zstd', 'snappy', 'gzip', 'lz4', 'uncompressed'] as const) {
    const path = join(dir, `${codec}.parquet`)
    await writeDataFile({ path, schema: allTypesSchema, codec, rowGroupRows: 700 }, [rows])
    const reader = openDataFileReader(await readFile(path), allTypesSchema)
    assert.equal(reader.rowGroupCount, 5, codec)
    assert.equal(reader.recordCount, 3000)
    assert.deepEqual(await readAll(await readFile(path), allTypesSchema), rows.map(asStored), codec)
  }
})

test('projection by field id: a renamed column, a widened int and a column the file lacks', async (t) => {
  const dir = await temporaryDirectory(t)
  const path = join(dir, 'old.parquet')
  const old: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'n', required: true, type: 'int' },
      { id: 2, name: 'label', required: false, type: 'string' },
      { id: 3, name: 'f', required: false, type: 'float' },
    ],
  }
  await writeDataFile({ path, schema: old }, [
    [
      { n: 1, label: 'a', f: 1.5 },
      { n: -7, label: null, f: null },
    ],
  ])
  const evolved: Schema = {
    type: 'struct',
    'schema-id': 1,
    fields: [
      { id: 1, name: 'n', required: true, type: 'long' },
      { id: 2, name: 'name', required: false, type: 'string' },
      { id: 3, name: 'f', required: false, type: 'double' },
      { id: 4, name: 'added', required: false, type: 'string' },
    ],
  }
  const expected: Record<string, IcebergValue>[] = [
    { n: 1n, name: 'a', f: 1.5, added: null },
    { n: -7n, name: null, f: null, added: null },
  ]
  assert.deepEqual(await readAll(await readFile(path), evolved), expected)
})

test('a file that cannot be read as the table schema is refused naming the column', async (t) => {
  const dir = await temporaryDirectory(t)
  const path = join(dir, 'f.parquet')
  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [{ id: 1, name: 'v', required: false, type: 'double' }],
  }
  await writeDataFile({ path, schema }, [[{ v: 1 }]])
  const bytes = await readFile(path)
  const refusals: [Schema['fields'][number], RegExp][] = [
    [{ id: 1, name: 'v', required: false, type: 'float' }, /column v is DOUBLE in the file, float in the table/],
    [{ id: 9, name: 'w', required: true, type: 'long' }, /column w is required by the table and missing/],
  ]
  for (const [field, message] of refusals) {
    assert.throws(
      () => openDataFileReader(bytes, { type: 'struct', 'schema-id': 1, fields: [field] }),
      (error) => isFloeError(error, 'CONVERSION_FAILED') && message.test(error.message),
    )
  }
})
