import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { type IcebergType, isPrimitive, type Schema } from '../iceberg/index.ts'
import type { DataFileMetrics, OpenDataFileOptions } from './index.ts'
import {
  canonical,
  compareCanonical,
  needsPyarrow,
  readWithPyarrow,
  temporaryDirectory,
  writeDataFile,
} from './test-support.ts'
import { allTypesRows, allTypesSchema } from './testdata/all-types.ts'

function leafTypes(schema: Schema): Map<number, IcebergType> {
  const types = new Map<number, IcebergType>()
  const visit = (id: number, type: IcebergType) => {
    if (isPrimitive(type)) types.set(id, type)
    else if (type.type === 'struct') for (const field of type.fields) visit(field.id, field.type)
    else if (type.type === 'list') visit(type['element-id'], type.element)
    else {
      visit(type['key-id'], type.key)
      visit(type['value-id'], type.value)
    }
  }
  for (const field of schema.fields) visit(field.id, field.type)
  return types
}

function stringKeyed<V, W>(map: Map<number, V>, convert: (id: number, value: V) => W): Record<string, W> {
  return Object.fromEntries([...map].map(([id, value]) => [String(id), convert(id, value)]))
}

test(
  'the gathered metrics equal the footer statistics pyarrow reads and the metrics pyiceberg derives',
  needsPyarrow,
  async (t) => {
    const directory = await temporaryDirectory(t)
    const path = join(directory, 'metrics.parquet')
    const metrics = await writeDataFile({ path, schema: allTypesSchema, rowGroupRows: 900 }, [allTypesRows(2000, 7)])
    const view = await readWithPyarrow(path, allTypesSchema)
    const types = leafTypes(allTypesSchema)
    const leafIds = [...types.keys()]

    // per leaf, summed over row groups, straight from pyarrow's footer view
    const chunksOf = (index: number) => view.rowGroups.map((group) => group.columns[index]!)
    leafIds.forEach((fieldId, index) => {
      const chunks = chunksOf(index)
      const sum = (pick: (chunk: (typeof chunks)[number]) => number) =>
        BigInt(chunks.reduce((total, chunk) => total + pick(chunk), 0))
      assert.equal(
        metrics.columnSizes.get(fieldId),
        sum((chunk) => chunk.totalCompressedSize),
        `size ${fieldId}`,
      )
      assert.equal(
        metrics.valueCounts.get(fieldId),
        sum((chunk) => chunk.numValues),
        `values ${fieldId}`,
      )
      assert.equal(
        metrics.nullValueCounts.get(fieldId),
        sum((chunk) => chunk.statistics!.nullCount!),
        `nulls ${fieldId}`,
      )
    })
    assert.deepEqual(
      metrics.splitOffsets,
      view.rowGroups.map((group) => BigInt(group.columns[0]!.dictionaryPageOffset ?? group.columns[0]!.dataPageOffset)),
    )

    // bounds of leaves outside lists and maps: min/max over the row groups' footer statistics
    const boundedIds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 21]
    assert.deepEqual(
      [...metrics.lowerBounds.keys()].sort((a, b) => a - b),
      boundedIds,
    )
    assert.deepEqual(
      [...metrics.upperBounds.keys()].sort((a, b) => a - b),
      boundedIds,
    )
    for (const fieldId of boundedIds) {
      const type = types.get(fieldId)!
      const statistics = chunksOf(leafIds.indexOf(fieldId)).map((chunk) => chunk.statistics!)
      const mins = statistics.filter((s) => s.hasMinMax).map((s) => s.min)
      const maxes = statistics.filter((s) => s.hasMinMax).map((s) => s.max)
      const lowest = mins.reduce((a, b) => (compareCanonical(type, a, b) <= 0 ? a : b))
      const highest = maxes.reduce((a, b) => (compareCanonical(type, a, b) >= 0 ? a : b))
      assert.deepEqual(canonical(metrics.lowerBounds.get(fieldId)!, type), lowest, `lower ${fieldId}`)
      assert.deepEqual(canonical(metrics.upperBounds.get(fieldId)!, type), highest, `upper ${fieldId}`)
    }

    // and they are the true extremes and counts of the data pyarrow read back
    for (const field of allTypesSchema.fields.filter((f) => isPrimitive(f.type))) {
      const values = view.rows.map((row) => row[field.name]).filter((value) => value !== null)
      const numbers = values.filter((value) => value !== 'NaN')
      const sorted = [...numbers].sort((a, b) => compareCanonical(field.type, a, b))
      assert.deepEqual(canonical(metrics.lowerBounds.get(field.id)!, field.type), sorted[0], `true min ${field.name}`)
      assert.deepEqual(
        canonical(metrics.upperBounds.get(field.id)!, field.type),
        sorted.at(-1),
        `true max ${field.name}`,
      )
      assert.equal(metrics.nullValueCounts.get(field.id), BigInt(view.rows.length - values.length), field.name)
      if (field.type === 'float' || field.type === 'double') {
        assert.equal(metrics.nanValueCounts.get(field.id), BigInt(values.length - numbers.length), field.name)
      }
    }

    // pyiceberg keeps no bounds for any nested leaf (Java Iceberg keeps them for struct fields)
    const iceberg = view.iceberg!
    const counts = (map: Map<number, bigint>) => stringKeyed(map, (_, value) => String(value))
    assert.equal(iceberg.recordCount, String(metrics.recordCount))
    assert.deepEqual(iceberg.columnSizes, counts(metrics.columnSizes))
    assert.deepEqual(iceberg.valueCounts, counts(metrics.valueCounts))
    assert.deepEqual(iceberg.nullValueCounts, counts(metrics.nullValueCounts))
    assert.deepEqual(iceberg.splitOffsets, metrics.splitOffsets.map(String))
    const topLevel = (map: Map<number, unknown>) =>
      new Map([...map].filter(([id]) => allTypesSchema.fields.some((field) => field.id === id)))
    const bounds = (map: Map<number, unknown>) =>
      stringKeyed(topLevel(map), (id, value) => canonical(value as never, types.get(id)!))
    assert.deepEqual(iceberg.lowerBounds, bounds(metrics.lowerBounds))
    assert.deepEqual(iceberg.upperBounds, bounds(metrics.upperBounds))
    assert.deepEqual(
      [...metrics.nanValueCounts.keys()].sort((a, b) => a - b),
      [4, 5, 21],
    )
  },
)

const stringsSchema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 's', required: false, type: 'string' },
    { id: 2, name: 'f', required: false, type: 'float' },
    { id: 3, name: 'd', required: false, type: 'double' },
    { id: 4, name: 'b', required: false, type: 'binary' },
  ],
}

test('string bounds follow UTF-8 byte order, not JavaScript UTF-16 order', needsPyarrow, async (t) => {
  const directory = await temporaryDirectory(t)
  const path = join(directory, 'utf8.parquet')
  // in UTF-16, U+FFFF sorts above U+1F600 (a surrogate pair); in UTF-8 and code points it is below
  const rows = ['\uFFFF', '\u{1F600}', 'a', 'Z'].map((s) => ({ s, f: null, d: null, b: null }))
  const metrics = await writeDataFile({ path, schema: stringsSchema }, [rows])
  assert.equal(metrics.lowerBounds.get(1), 'Z')
  assert.equal(metrics.upperBounds.get(1), '\u{1F600}')
  const footer = (await readWithPyarrow(path)).rowGroups[0]!.columns[0]!.statistics!
  assert.equal(footer.max, '\u{1F600}')
})

test('NaN is counted and kept out of float and double bounds', async (t) => {
  const directory = await temporaryDirectory(t)
  const path = join(directory, 'nan.parquet')
  const floats = [Number.NaN, 1.1, -2.5, null, Number.NaN, 0.1]
  const rows = floats.map((value) => ({ s: null, f: value, d: value === null ? null : Number.NaN, b: null }))
  const metrics = await writeDataFile({ path, schema: stringsSchema }, [rows])
  assert.equal(metrics.nanValueCounts.get(2), 2n)
  assert.equal(metrics.nanValueCounts.get(3), 5n)
  assert.equal(metrics.nullValueCounts.get(2), 1n)
  assert.equal(metrics.lowerBounds.get(2), -2.5)
  // a float bound is the stored 32-bit value
  assert.equal(metrics.upperBounds.get(2), Math.fround(1.1))
  assert.equal(metrics.lowerBounds.has(3), false)
  assert.equal(metrics.upperBounds.has(3), false)
  assert.equal(metrics.lowerBounds.has(1), false)
  assert.equal(metrics.nullValueCounts.get(1), 6n)
})

test('metrics modes choose between no metrics, counts, truncated and full bounds', async (t) => {
  const directory = await temporaryDirectory(t)
  const rows = [
    { s: 'abcdefghijklmnopqrstuvwxyz', f: 1, d: 2, b: Uint8Array.from([1, 2, 0xff, 0xff, 9]) },
    { s: 'abc', f: 3, d: 4, b: Uint8Array.from([1]) },
  ]
  const cases: { name: string; options: OpenDataFileOptions['metrics']; check: (m: DataFileMetrics) => void }[] = [
    {
      name: 'default truncate(16)',
      options: undefined,
      check: (m) => {
        assert.equal(m.lowerBounds.get(1), 'abc')
        assert.equal(m.upperBounds.get(1), 'abcdefghijklmnoq')
        assert.deepEqual(m.upperBounds.get(4), Uint8Array.from([1, 2, 0xff, 0xff, 9]))
      },
    },
    {
      name: 'truncate(3) for binary, full for strings',
      options: { default: 'full', columns: new Map([[4, 'truncate(3)']]) },
      check: (m) => {
        assert.equal(m.upperBounds.get(1), 'abcdefghijklmnopqrstuvwxyz')
        assert.deepEqual(m.lowerBounds.get(4), Uint8Array.from([1]))
        assert.deepEqual(m.upperBounds.get(4), Uint8Array.from([1, 3]))
      },
    },
    {
      name: 'counts',
      options: { default: 'counts' },
      check: (m) => {
        assert.equal(m.lowerBounds.size, 0)
        assert.equal(m.valueCounts.get(1), 2n)
        assert.equal(m.nullValueCounts.get(1), 0n)
        assert.equal(m.nanValueCounts.get(2), 0n)
      },
    },
    {
      name: 'none for one column',
      options: { columns: new Map([[1, 'none']]) },
      check: (m) => {
        assert.equal(m.columnSizes.has(1), true)
        assert.equal(m.valueCounts.has(1), false)
        assert.equal(m.nullValueCounts.has(1), false)
        assert.equal(m.lowerBounds.has(1), false)
        assert.equal(m.lowerBounds.get(3), 2)
      },
    },
  ]
  for (const [index, { name, options, check }] of cases.entries()) {
    const metrics = await writeDataFile(
      { path: join(directory, `mode-${index}.parquet`), schema: stringsSchema, metrics: options },
      [rows],
    )
    await t.test(name, () => check(metrics))
  }
})

test(
  'without statistics the footer has none and the metrics keep only sizes and value counts',
  needsPyarrow,
  async (t) => {
    const directory = await temporaryDirectory(t)
    const path = join(directory, 'no-stats.parquet')
    const metrics = await writeDataFile({ path, schema: allTypesSchema, statistics: false }, [allTypesRows(100)])
    const view = await readWithPyarrow(path)
    assert.ok(view.rowGroups[0]!.columns.every((chunk) => chunk.statistics === null))
    assert.equal(metrics.valueCounts.get(13), 100n)
    assert.equal(metrics.columnSizes.size, 27)
    assert.equal(metrics.nullValueCounts.size, 0)
    assert.equal(metrics.nanValueCounts.size, 0)
    assert.equal(metrics.lowerBounds.size, 0)
  },
)
