import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { parquetMetadata, parquetReadObjects } from 'hyparquet'
import type { Schema } from '../iceberg/index.ts'
import { temporaryDirectory, writeDataFile } from './test-support.ts'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'string' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'kind', required: false, type: 'string' },
  ],
}

test('string columns of distinct values are written PLAIN, few-valued ones with a dictionary, and every value reads back', async (t) => {
  const path = join(await temporaryDirectory(t), 'strings.parquet')
  // multi-byte characters, a character outside the BMP and a lone surrogate (written as U+FFFD)
  const rows = Array.from({ length: 3000 }, (_, i) => ({
    id: `évt-${i}-🙂`,
    name: i % 7 === 0 ? null : `user ${i} \uD800`,
    kind: ['click', 'view', null][i % 3] as string | null,
  }))
  // snappy: hyparquet's reader has it built in
  await writeDataFile({ path, schema, rowGroupRows: 1000, codec: 'snappy' }, [rows])
  const bytes = await readFile(path)
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)

  const metadata = parquetMetadata(file)
  assert.equal(metadata.row_groups.length, 3)
  for (const group of metadata.row_groups) {
    const encodings = group.columns.map((chunk) => chunk.meta_data?.encodings.includes('RLE_DICTIONARY'))
    assert.deepEqual(encodings, [false, false, true])
    // footer statistics are of the strings' UTF-8 bytes, as before
    const ids = group.columns[0]?.meta_data?.statistics
    assert.ok(ids?.min_value !== undefined && ids.max_value !== undefined)
  }
  const read = await parquetReadObjects({ file })
  assert.deepEqual(
    read,
    rows.map((row) => ({ ...row, name: row.name?.replace('\uD800', '\uFFFD') ?? null })),
  )
})
