import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type TestContext, test } from 'node:test'
import { isFloeError } from '../errors.ts'
import type { StructValue } from '../iceberg/index.ts'
import { type DataFileMetrics, EncoderPool, type OpenDataFileOptions, openDataFile } from './index.ts'
import { temporaryDirectory } from './test-support.ts'
import { allTypesRows, allTypesSchema } from './testdata/all-types.ts'

function pool(t: TestContext, options: Partial<ConstructorParameters<typeof EncoderPool>[0]> = {}): EncoderPool {
  const encoders = new EncoderPool({ threads: 2, ...options })
  t.after(() => encoders.close())
  return encoders
}

/** Many row groups, several pages per chunk, bloom filters: every offset a landed group must shift. */
const manyGroups: Omit<OpenDataFileOptions, 'path' | 'sink'> = {
  schema: allTypesSchema,
  rowGroupRows: 37,
  pageSize: 512,
  bloomFilters: [{ fieldId: 3 }, { fieldId: 13 }, { fieldId: 14 }],
}

async function write(
  path: string,
  rows: readonly StructValue[],
  options: Partial<OpenDataFileOptions>,
): Promise<{ bytes: Buffer; metrics: DataFileMetrics }> {
  const writer = await openDataFile({ ...manyGroups, ...options, path } as OpenDataFileOptions)
  // appends without waiting, as the WAL does for the partitions of one fetch
  const appends = []
  for (let i = 0; i < rows.length; i += 50) appends.push(writer.append(rows.slice(i, i + 50)))
  await Promise.all(appends)
  const metrics = await writer.close()
  return { bytes: await readFile(path), metrics }
}

test('row groups encoded on encoder threads are byte for byte the file the main thread writes', async (t) => {
  const directory = await temporaryDirectory(t)
  const rows = allTypesRows(400, 3)
  const here = await write(join(directory, 'here.parquet'), rows, {})
  const threaded = await write(join(directory, 'threaded.parquet'), rows, { encoders: pool(t) })
  assert.ok(here.metrics.splitOffsets.length > 5)
  assert.ok(here.metrics.bloomFilters.length > 0)
  assert.deepEqual(threaded.bytes, here.bytes)
  assert.deepEqual(threaded.metrics, here.metrics)
})

test('files sharing the threads each get their row groups in order', async (t) => {
  const directory = await temporaryDirectory(t)
  const encoders = pool(t)
  const seeds = [11, 12, 13, 14]
  const [expected, actual] = await Promise.all([
    Promise.all(seeds.map((seed) => write(join(directory, `here-${seed}.parquet`), allTypesRows(300, seed), {}))),
    Promise.all(
      seeds.map((seed) => write(join(directory, `threaded-${seed}.parquet`), allTypesRows(300, seed), { encoders })),
    ),
  ])
  for (const [index, file] of actual.entries()) assert.deepEqual(file.bytes, expected[index]?.bytes)
})

test('a value an encoder thread cannot encode fails the writer with RECORD_MALFORMED, as on the main thread', async (t) => {
  const directory = await temporaryDirectory(t)
  const writer = await openDataFile({
    path: join(directory, 'poisoned.parquet'),
    schema: allTypesSchema,
    encoders: pool(t),
  })
  const [row] = allTypesRows(1, 5) as [StructValue]
  await writer.append([{ ...row, items: [{ sku: null, qty: 1 }] }])
  await assert.rejects(writer.close(), (error) => isFloeError(error, 'RECORD_MALFORMED'))
  await assert.rejects(writer.append([row]), (error) => isFloeError(error, 'RECORD_MALFORMED'))
  await writer.abort()
})

test('a thread that dies is replaced and its row group is encoded on the main thread instead', async (t) => {
  const directory = await temporaryDirectory(t)
  const exits: number[] = []
  const encoders = pool(t, {
    threads: 1,
    threadModule: new URL('./testdata/dying-encoder-thread.ts', import.meta.url),
    onThreadExit: ({ exitCode }) => exits.push(exitCode),
  })
  const rows = allTypesRows(120, 4)
  const here = await write(join(directory, 'here.parquet'), rows, {})
  const threaded = await write(join(directory, 'threaded.parquet'), rows, { encoders })
  assert.deepEqual(threaded.bytes, here.bytes)
  assert.ok(encoders.replacedThreads >= 4, `replaced ${encoders.replacedThreads}`)
  assert.deepEqual(new Set(exits), new Set([7]))
  assert.equal(encoders.threads, 1)
})

test('close lets queued row groups finish, ends the threads, and later groups are encoded on the calling thread', async (t) => {
  const directory = await temporaryDirectory(t)
  const encoders = pool(t, { threads: 1 })
  const rows = allTypesRows(200, 6)
  const writer = await openDataFile({ ...manyGroups, path: join(directory, 'a.parquet'), encoders })
  await writer.append(rows.slice(0, 100))
  await encoders.close()
  assert.equal(encoders.threads, 0)
  await writer.append(rows.slice(100))
  const metrics = await writer.close()
  const here = await write(join(directory, 'here.parquet'), rows, {})
  assert.deepEqual(await readFile(join(directory, 'a.parquet')), here.bytes)
  assert.equal(metrics.recordCount, 200n)
})

test('a pool needs at least one thread', () => {
  assert.throws(
    () => new EncoderPool({ threads: 0 }),
    (error) => isFloeError(error, 'CONFIG_INVALID'),
  )
})
