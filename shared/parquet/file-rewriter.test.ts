import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { isFloeError } from '../errors.ts'
import type { StructValue } from '../iceberg/index.ts'
import type { DataFileCodec } from './codecs.ts'
import { openDataFileReader } from './data-file-reader.ts'
import { FileRewriter } from './file-rewriter.ts'
import { temporaryDirectory, writeDataFile } from './test-support.ts'
import { allTypesRows, allTypesSchema } from './testdata/all-types.ts'

const schema = allTypesSchema

async function sources(
  dir: string,
  count: number,
  rows: number,
  codec: DataFileCodec = 'zstd',
): Promise<{ bytes: Uint8Array; rows: StructValue[] }[]> {
  const out = []
  for (let i = 0; i < count; i++) {
    const path = join(dir, `source-${i}.parquet`)
    const batch = allTypesRows(rows, 100 + i)
    await writeDataFile({ path, schema, rowGroupRows: 97, codec }, [batch])
    out.push({ bytes: await readFile(path), rows: batch })
  }
  return out
}

async function rowsOf(path: string): Promise<StructValue[]> {
  const reader = openDataFileReader(await readFile(path), schema)
  const rows: StructValue[] = []
  for (let i = 0; i < reader.rowGroupCount; i++) rows.push(...(await reader.readRowGroup(i)))
  return rows
}

const asStored = (row: StructValue): StructValue => ({
  ...row,
  ratio: typeof row['ratio'] === 'number' ? Math.fround(row['ratio']) : (row['ratio'] ?? null),
})

test('source files become files of the target size on the thread, every row once and in order', async (t) => {
  const dir = await temporaryDirectory(t)
  const files = await sources(dir, 6, 400)
  const rewriter = await FileRewriter.start({
    schema,
    codec: 'zstd',
    targetBytes: 40_000,
    directory: dir,
    rowGroupRows: 200,
  })
  const closed = []
  try {
    for (const [i, file] of files.entries()) closed.push(...(await rewriter.add(file.bytes, `source-${i}`, 400n)))
    closed.push(...(await rewriter.finish()))
  } finally {
    await rewriter.close()
  }
  assert.ok(closed.length >= 2, `${closed.length} files`)
  for (const file of closed.slice(0, -1)) assert.ok(file.metrics.fileSizeInBytes >= 40_000n, 'closed at the target')
  const rows: StructValue[] = []
  for (const file of closed) {
    assert.ok(file.metrics.fileSizeInBytes > 0n)
    rows.push(...(await rowsOf(file.localPath)))
  }
  assert.equal(
    closed.reduce((n, f) => n + f.metrics.recordCount, 0n),
    2400n,
  )
  assert.deepEqual(rows, files.flatMap((f) => f.rows).map(asStored))
})

test('a source whose row count differs from its manifest fails the rewrite; close(true) deletes what it wrote', async (t) => {
  const dir = await temporaryDirectory(t)
  const files = await sources(dir, 2, 300)
  const rewriter = await FileRewriter.start({
    schema,
    codec: 'zstd',
    targetBytes: 1,
    directory: dir,
    rowGroupRows: 100,
  })
  const written = await rewriter.add(files[0]?.bytes as Uint8Array, 'first', 300n)
  assert.ok(written.length >= 1)
  await assert.rejects(
    rewriter.add(files[1]?.bytes as Uint8Array, 'second', 301n),
    (error) =>
      isFloeError(error, 'CONVERSION_FAILED') && /second holds 300 rows, its manifest says 301/.test(error.message),
  )
  await rewriter.close(true)
  for (const file of written) assert.equal(existsSync(file.localPath), false)
})

// Snappy, not zstd: with zstd this test once aborted the whole test process (Node 22.23, a full
// unit run): node:zlib's zstd handle asserts "close before init" at the thread's cleanup, as when
// the termination for the heap lands inside the handle's constructor. The test is of Floe's
// handling of the thread's end, which no codec changes.
test('a thread that runs out of heap fails the rewrite instead of the process', async (t) => {
  const dir = await temporaryDirectory(t)
  const files = await sources(dir, 1, 3000, 'snappy')
  const rewriter = await FileRewriter.start({
    schema,
    codec: 'snappy',
    targetBytes: 1 << 30,
    directory: dir,
    heapLimitBytes: 1,
  })
  try {
    let failure: unknown
    try {
      for (let i = 0; i < 50; i++) await rewriter.add(new Uint8Array(files[0]?.bytes as Uint8Array), 'big', 3000n)
    } catch (error) {
      failure = error
    }
    assert.ok(isFloeError(failure, 'INTERNAL_ERROR'), String(failure))
  } finally {
    await rewriter.close(true)
  }
})
