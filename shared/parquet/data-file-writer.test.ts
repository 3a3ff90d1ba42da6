import assert from 'node:assert/strict'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { isFloeError } from '../errors.ts'
import { type IcebergType, isPrimitive, type NestedField, type Schema, type StructValue } from '../iceberg/index.ts'
import { type ByteSink, type DataFileCodec, type OpenDataFileOptions, openDataFile, writableSink } from './index.ts'
import {
  canonical,
  needsPyarrow,
  type PyarrowField,
  type PyarrowView,
  readWithPyarrow,
  temporaryDirectory,
  writeDataFile,
} from './test-support.ts'
import { allTypesRows, allTypesSchema } from './testdata/all-types.ts'

function expectedFieldTree(field: NestedField): PyarrowField {
  return { ...treeOf(field.name, field.id, !field.required, field.type) }
}

function treeOf(name: string, fieldId: number, nullable: boolean, type: IcebergType): PyarrowField {
  const node: PyarrowField = { name, fieldId, nullable, arrowType: '' }
  if (isPrimitive(type)) return node
  if (type.type === 'struct') node.children = type.fields.map(expectedFieldTree)
  else if (type.type === 'list')
    node.element = treeOf('element', type['element-id'], !type['element-required'], type.element)
  else {
    node.key = treeOf('key', type['key-id'], false, type.key)
    node.value = treeOf('value', type['value-id'], !type['value-required'], type.value)
  }
  return node
}

function withoutArrowTypes(fields: PyarrowField[]): PyarrowField[] {
  return JSON.parse(JSON.stringify(fields, (key, value) => (key === 'arrowType' ? '' : value)))
}

test(
  'a file with every Iceberg type, nested and null values reads back in pyarrow as written',
  needsPyarrow,
  async (t) => {
    const directory = await temporaryDirectory(t)
    const path = join(directory, 'all-types.parquet')
    const rows = allTypesRows(2500)
    const metrics = await writeDataFile({ path, schema: allTypesSchema, rowGroupRows: 1000 }, [
      rows.slice(0, 700),
      rows.slice(700, 2100),
      rows.slice(2100),
    ])
    const view = await readWithPyarrow(path, allTypesSchema)

    assert.equal(view.numRows, 2500)
    assert.equal(view.numRowGroups, 3)
    assert.deepEqual(
      view.rowGroups.map((group) => group.numRows),
      [1000, 1000, 500],
    )
    const expectedRows = rows.map((row) => canonical(row, allTypesSchema))
    assert.deepEqual(view.rows, expectedRows)
    assert.deepEqual(withoutArrowTypes(view.fields), withoutArrowTypes(allTypesSchema.fields.map(expectedFieldTree)))
    assert.equal(view.keyValueMetadata['iceberg.schema'], JSON.stringify(allTypesSchema))
    assert.equal(metrics.recordCount, 2500n)
    assert.equal(metrics.fileSizeInBytes, BigInt((await stat(path)).size))
  },
)

test('every primitive gets the Parquet physical and logical type of the Iceberg spec', needsPyarrow, async (t) => {
  const directory = await temporaryDirectory(t)
  const path = join(directory, 'types.parquet')
  await writeDataFile({ path, schema: allTypesSchema }, [allTypesRows(50)])
  const view = await readWithPyarrow(path)
  const timestamp = (utc: boolean) => ({
    Type: 'Timestamp',
    isAdjustedToUTC: utc,
    timeUnit: 'microseconds',
    is_from_converted_type: false,
    force_set_converted_type: false,
  })
  const cases: [string, string, Record<string, unknown>, number?][] = [
    ['flag', 'BOOLEAN', { Type: 'None' }],
    ['count', 'INT32', { Type: 'None' }],
    ['big', 'INT64', { Type: 'None' }],
    ['ratio', 'FLOAT', { Type: 'None' }],
    ['amount', 'DOUBLE', { Type: 'None' }],
    ['price', 'INT32', { Type: 'Decimal', precision: 9, scale: 2 }],
    ['total', 'INT64', { Type: 'Decimal', precision: 18, scale: 6 }],
    ['huge', 'FIXED_LEN_BYTE_ARRAY', { Type: 'Decimal', precision: 38, scale: 10 }, 16],
    ['day', 'INT32', { Type: 'Date' }],
    ['clock', 'INT64', { Type: 'Time', isAdjustedToUTC: false, timeUnit: 'microseconds' }],
    ['local_ts', 'INT64', timestamp(false)],
    ['event_ts', 'INT64', timestamp(true)],
    ['label', 'BYTE_ARRAY', { Type: 'String' }],
    ['id', 'FIXED_LEN_BYTE_ARRAY', { Type: 'UUID' }, 16],
    ['blob', 'BYTE_ARRAY', { Type: 'None' }],
    ['code', 'FIXED_LEN_BYTE_ARRAY', { Type: 'None' }, 4],
  ]
  for (const [path, physicalType, logicalType, length] of cases) {
    const leaf = view.leaves.find((candidate) => candidate.path === path)
    assert.ok(leaf, path)
    assert.equal(leaf.physicalType, physicalType, path)
    assert.deepEqual(leaf.logicalType, logicalType, path)
    if (length !== undefined) assert.equal(leaf.length, length, path)
  }
  // only PLAIN and dictionary pages outside nested columns, which Iceberg's vectorized reader reads
  const topLevelEncodings = new Set(
    view.rowGroups[0]!.columns.filter((chunk) => !chunk.path.includes('.')).flatMap((chunk) => chunk.encodings),
  )
  assert.deepEqual([...topLevelEncodings].sort(), ['PLAIN', 'RLE_DICTIONARY'])
  const arrowTypes = Object.fromEntries(view.fields.map((field) => [field.name, field.arrowType]))
  assert.equal(arrowTypes['event_ts'], 'timestamp[us, tz=UTC]')
  assert.equal(arrowTypes['local_ts'], 'timestamp[us]')
  assert.equal(arrowTypes['huge'], 'decimal128(38, 10)')
  assert.equal(arrowTypes['id'], 'extension<arrow.uuid>')
})

test('each codec is written as asked and reads back in pyarrow', needsPyarrow, async (t) => {
  const directory = await temporaryDirectory(t)
  const cases: { codec: DataFileCodec; level?: number; pyarrow: string }[] = [
    { codec: 'zstd', pyarrow: 'ZSTD' },
    { codec: 'zstd', level: 19, pyarrow: 'ZSTD' },
    { codec: 'snappy', pyarrow: 'SNAPPY' },
    { codec: 'gzip', pyarrow: 'GZIP' },
    { codec: 'lz4', pyarrow: 'LZ4' }, // pyarrow names LZ4_RAW pages LZ4
    { codec: 'gzip', level: 9, pyarrow: 'GZIP' },
    { codec: 'brotli', pyarrow: 'BROTLI' },
    { codec: 'uncompressed', pyarrow: 'UNCOMPRESSED' },
  ]
  const rows = allTypesRows(600, 3)
  const expected = rows.map((row) => canonical(row, allTypesSchema))
  for (const { codec, level, pyarrow } of cases) {
    const path = join(directory, `${codec}-${level ?? 'default'}.parquet`)
    await writeDataFile({ path, schema: allTypesSchema, codec, compressionLevel: level, rowGroupRows: 250 }, [rows])
    const view = await readWithPyarrow(path)
    const codecs = new Set(view.rowGroups.flatMap((group) => group.columns.map((chunk) => chunk.codec)))
    assert.deepEqual([...codecs], [pyarrow], codec)
    assert.equal(view.numRowGroups, 3, codec)
    assert.deepEqual(view.rows, expected, codec)
  }
})

test('bad compression levels are refused before any file is created', async (t) => {
  const directory = await temporaryDirectory(t)
  const cases: Partial<OpenDataFileOptions>[] = [
    { codec: 'zstd', compressionLevel: 0 },
    { codec: 'gzip', compressionLevel: 10 },
    { codec: 'snappy', compressionLevel: 1 },
    { rowGroupRows: 0 },
    { metrics: { default: 'truncate(0)' as never } },
  ]
  for (const [index, options] of cases.entries()) {
    const path = join(directory, `refused-${index}.parquet`)
    await assert.rejects(
      openDataFile({ path, schema: allTypesSchema, ...options } as OpenDataFileOptions),
      (error) => isFloeError(error, 'CONFIG_INVALID'),
      JSON.stringify(options),
    )
    await assert.rejects(stat(path), { code: 'ENOENT' })
  }
})

/** A sink that records what reached it and when, to see row groups leave memory as they fill. */
function recordingSink(): ByteSink & { chunks: Uint8Array[]; closed: boolean } {
  const sink = {
    chunks: [] as Uint8Array[],
    closed: false,
    async write(bytes: Uint8Array) {
      sink.chunks.push(bytes.slice())
    },
    async close() {
      sink.closed = true
    },
    async abort() {},
  }
  return sink
}

test(
  'a file of many row groups hands each row group to the sink as it fills and buffers at most one',
  needsPyarrow,
  async (t) => {
    const directory = await temporaryDirectory(t)
    const sink = recordingSink()
    const rowGroupRows = 400
    const writer = await openDataFile({ sink, schema: allTypesSchema, rowGroupRows })
    const rows = allTypesRows(10_000, 11)
    let largestBuffer = 0
    for (let start = 0; start < rows.length; start += 333) {
      await writer.append(rows.slice(start, start + 333))
      largestBuffer = Math.max(largestBuffer, writer.bufferedRows)
      // one write per completed row group (the first carries the header), each already with the sink
      assert.equal(sink.chunks.length, writer.rowGroupCount)
      assert.equal(writer.rowGroupCount, Math.floor(writer.recordCount / rowGroupRows))
      assert.equal(
        writer.writtenBytes,
        sink.chunks.reduce((total, chunk) => total + chunk.byteLength, 0),
      )
    }
    assert.ok(largestBuffer < rowGroupRows)
    const metrics = await writer.close()
    assert.equal(sink.closed, true)
    assert.equal(metrics.splitOffsets.length, 25)

    const path = join(directory, 'sunk.parquet')
    await writeFile(path, Buffer.concat(sink.chunks))
    assert.equal(metrics.fileSizeInBytes, BigInt((await stat(path)).size))
    const view = await readWithPyarrow(path)
    assert.equal(view.numRowGroups, 25)
    assert.deepEqual(
      view.rows,
      rows.map((row) => canonical(row, allTypesSchema)),
    )
  },
)

test(
  'appends made without waiting are written in call order, and flushRowGroup ends a group early',
  needsPyarrow,
  async (t) => {
    const directory = await temporaryDirectory(t)
    const path = join(directory, 'queued.parquet')
    const writer = await openDataFile({ path, schema: allTypesSchema, rowGroupRows: 1000 })
    const rows = allTypesRows(500, 21)
    const appends = [0, 100, 200, 300, 400].map((start) => writer.append(rows.slice(start, start + 100)))
    const flushed = writer.flushRowGroup()
    const more = writer.append(rows.slice(0, 50))
    await Promise.all([...appends, flushed, more])
    assert.equal(writer.rowGroupCount, 1)
    assert.equal(writer.bufferedRows, 50)
    await writer.close()
    const view = await readWithPyarrow(path)
    assert.deepEqual(
      view.rowGroups.map((group) => group.numRows),
      [500, 50],
    )
    assert.deepEqual(
      view.rows,
      [...rows, ...rows.slice(0, 50)].map((row) => canonical(row, allTypesSchema)),
    )
  },
)

test('row groups are cut when the estimated bytes reach the target', needsPyarrow, async (t) => {
  const directory = await temporaryDirectory(t)
  const path = join(directory, 'by-bytes.parquet')
  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'n', required: true, type: 'long' },
      { id: 2, name: 'payload', required: false, type: 'string' },
    ],
  }
  // 8 + (1000 + 4) estimated bytes per row: the 65th row takes a group past 64 KiB
  const rows = Array.from({ length: 1000 }, (_, i) => ({ n: BigInt(i), payload: 'x'.repeat(1000) }))
  const metrics = await writeDataFile({ path, schema, rowGroupBytes: 64 * 1024 }, [rows])
  const view = await readWithPyarrow(path)
  assert.deepEqual(
    view.rowGroups.map((group) => group.numRows),
    [...Array.from({ length: 15 }, () => 65), 25],
  )
  assert.equal(metrics.splitOffsets.length, 16)
})

test(
  'a batch with a null in a required field is refused whole and the writer stays usable',
  needsPyarrow,
  async (t) => {
    const directory = await temporaryDirectory(t)
    const path = join(directory, 'refused-batch.parquet')
    const writer = await openDataFile({ path, schema: allTypesSchema })
    const [good, bad] = allTypesRows(2, 5) as [StructValue, StructValue]
    await assert.rejects(writer.append([good, { ...bad, event_ts: null }]), (error) => {
      assert.ok(isFloeError(error, 'RECORD_MALFORMED'))
      assert.deepEqual(error.details, { field: 'event_ts', row: 1 })
      return true
    })
    assert.equal(writer.recordCount, 0)
    await writer.append([good])
    const metrics = await writer.close()
    assert.equal(metrics.recordCount, 1n)
    assert.equal((await readWithPyarrow(path)).numRows, 1)
  },
)

test('a value the column cannot encode fails the writer, and abort removes the file', async (t) => {
  const directory = await temporaryDirectory(t)
  const path = join(directory, 'poisoned.parquet')
  const writer = await openDataFile({ path, schema: allTypesSchema })
  const [row] = allTypesRows(1, 5) as [StructValue]
  await writer.append([{ ...row, items: [{ sku: null, qty: 1 }] }])
  await assert.rejects(writer.close(), (error) => isFloeError(error, 'RECORD_MALFORMED'))
  await assert.rejects(writer.append([row]), (error) => isFloeError(error, 'RECORD_MALFORMED'))
  await writer.abort()
  await assert.rejects(stat(path), { code: 'ENOENT' })
})

test('abort deletes the file and the writer refuses later calls', async (t) => {
  const directory = await temporaryDirectory(t)
  const path = join(directory, 'aborted.parquet')
  const writer = await openDataFile({ path, schema: allTypesSchema, rowGroupRows: 10 })
  await writer.append(allTypesRows(25))
  await stat(path)
  await writer.abort()
  await assert.rejects(stat(path), { code: 'ENOENT' })
  await assert.rejects(writer.append(allTypesRows(1)), (error) => isFloeError(error, 'INVARIANT_BROKEN'))
  await assert.rejects(writer.close(), (error) => isFloeError(error, 'INVARIANT_BROKEN'))
})

test('opening an existing path is refused rather than overwriting it', async (t) => {
  const directory = await temporaryDirectory(t)
  const path = join(directory, 'exists.parquet')
  await writeDataFile({ path, schema: allTypesSchema }, [allTypesRows(3)])
  const before = await readFile(path)
  await assert.rejects(openDataFile({ path, schema: allTypesSchema }), (error) =>
    isFloeError(error, 'STORAGE_UNAVAILABLE'),
  )
  assert.deepEqual(await readFile(path), before)
})

test('a Node Writable receives a complete file even when it holds on to the chunks', needsPyarrow, async (t) => {
  const directory = await temporaryDirectory(t)
  const stream = new PassThrough()
  const received: Buffer[] = []
  stream.on('data', (chunk: Buffer) => received.push(chunk))
  const rows = allTypesRows(1200, 9)
  const metrics = await writeDataFile({ sink: writableSink(stream), schema: allTypesSchema, rowGroupRows: 300 }, [rows])
  const path = join(directory, 'streamed.parquet')
  await writeFile(path, Buffer.concat(received))
  assert.equal(metrics.fileSizeInBytes, BigInt(Buffer.concat(received).byteLength))
  const view = await readWithPyarrow(path)
  assert.equal(view.numRowGroups, 4)
  assert.deepEqual(
    view.rows,
    rows.map((row) => canonical(row, allTypesSchema)),
  )
})

test('key-value metadata given at open and at close lands in the footer', needsPyarrow, async (t) => {
  const directory = await temporaryDirectory(t)
  const path = join(directory, 'kv.parquet')
  const writer = await openDataFile({ path, schema: allTypesSchema, keyValueMetadata: { 'floe.topic': 'events' } })
  await writer.append(allTypesRows(5))
  await writer.close({ keyValueMetadata: { 'floe.offsets': '[100,105)' } })
  const view: PyarrowView = await readWithPyarrow(path)
  assert.equal(view.keyValueMetadata['floe.topic'], 'events')
  assert.equal(view.keyValueMetadata['floe.offsets'], '[100,105)')
  assert.match(view.createdBy, /^floe/)
})

test('a file closed without rows is a valid Parquet file with no row groups', needsPyarrow, async (t) => {
  const directory = await temporaryDirectory(t)
  const path = join(directory, 'empty.parquet')
  const metrics = await writeDataFile({ path, schema: allTypesSchema }, [])
  const view = await readWithPyarrow(path)
  assert.equal(view.numRows, 0)
  assert.equal(view.numRowGroups, 0)
  assert.equal(metrics.recordCount, 0n)
  assert.deepEqual(metrics.splitOffsets, [])
  assert.equal(metrics.columnSizes.size, 0)
})
