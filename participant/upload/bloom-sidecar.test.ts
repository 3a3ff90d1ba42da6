import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { promisify } from 'node:util'
import { isFloeError } from '../../shared/errors.ts'
import type { IcebergValue, PrimitiveType, Schema } from '../../shared/iceberg/index.ts'
import type { BloomFilterLocation } from '../../shared/parquet/index.ts'
import { encodeBloomSidecar, probeBloomSidecar, readBloomSidecar, writeBloomSidecar } from './index.ts'
import { temporaryDirectory, writeSegment } from './test-support.ts'

const python = '/work/main/.stack/venv/bin/python'
const fpp = 0.01

const longValue = (i: number) => BigInt(i) * 7919n - 5n
const stringValue = (i: number) => `user-${i}`
const columns = [
  { fieldId: 1, type: 'string' as const, value: stringValue },
  { fieldId: 2, type: 'long' as const, value: longValue },
]

/** Every value of each row group probes true; returns the false-positive rate of absent values per filter. */
function checkMembership(
  sidecar: Uint8Array,
  rows: number,
  rowsPerGroup: number,
): { fieldId: number; rowGroup: number; rate: number }[] {
  const decoded = readBloomSidecar(sidecar)
  const rates = []
  for (const { fieldId, rowGroup } of decoded.filters) {
    const column = columns.find((c) => c.fieldId === fieldId)!
    const first = rowGroup * rowsPerGroup
    for (let i = first; i < Math.min(rows, first + rowsPerGroup); i++) {
      if (!decoded.mightContain(fieldId, column.value(i), column.type, rowGroup)) {
        assert.fail(`field ${fieldId} row group ${rowGroup} lost value ${i}`)
      }
    }
    const absent = 20_000
    let falsePositives = 0
    for (let k = 0; k < absent; k++) {
      if (decoded.mightContain(fieldId, column.value(10_000_000 + k), column.type, rowGroup)) falsePositives++
    }
    rates.push({ fieldId, rowGroup, rate: falsePositives / absent })
  }
  return rates
}

/** The bitset bytes Parquet stores, at the end of each filter's `header + bitset` range. */
async function assertBitsetsCopiedVerbatim(
  path: string,
  locations: readonly BloomFilterLocation[],
  sidecar: Uint8Array,
) {
  const file = await readFile(path)
  const filters = readBloomSidecar(sidecar).filters
  assert.equal(filters.length, locations.length)
  for (const location of locations) {
    const filter = filters.find((f) => f.fieldId === location.fieldId && f.rowGroup === location.rowGroup)
    assert.ok(filter, `field ${location.fieldId} row group ${location.rowGroup} is in the sidecar`)
    const end = Number(location.offset) + location.length
    assert.deepEqual(Buffer.from(filter.bitset), file.subarray(end - filter.bitset.byteLength, end))
  }
}

describe('bloom-filter sidecar of a file written by floe', () => {
  test('holds every inserted long and string value and rejects absent ones near the configured rate', async (t) => {
    const directory = await temporaryDirectory(t)
    const rows = 20_000
    const segment = await writeSegment(directory, {
      rows,
      rowGroupRows: 5_000,
      bloomFilters: columns.map(({ fieldId }) => ({ fieldId, fpp })),
    })
    assert.equal(segment.bloomFilters.length, 8)
    const sidecar = await writeBloomSidecar(segment.localPath, segment.bloomFilters)
    await assertBitsetsCopiedVerbatim(segment.localPath, segment.bloomFilters, sidecar)
    const rates = checkMembership(sidecar, rows, 5_000)
    const worst = Math.max(...rates.map((r) => r.rate))
    t.diagnostic(`false-positive rates per filter: ${rates.map((r) => r.rate.toFixed(4)).join(' ')}`)
    assert.ok(worst < 2 * fpp, `worst false-positive rate ${worst} with fpp ${fpp}`)
    assert.equal(probeBloomSidecar(sidecar, 2, longValue(12_345), 'long'), true)
    assert.equal(probeBloomSidecar(sidecar, 1, stringValue(19_999), 'string'), true)
  })

  test('orders its filters by field id, then row group, and aligns every bitset to a 32-byte block', async (t) => {
    const directory = await temporaryDirectory(t)
    const segment = await writeSegment(directory, {
      rows: 3_000,
      rowGroupRows: 1_000,
      bloomFilters: [{ fieldId: 2 }, { fieldId: 1 }],
    })
    const sidecar = await writeBloomSidecar(segment.localPath, segment.bloomFilters)
    const view = new DataView(sidecar.buffer, sidecar.byteOffset, sidecar.byteLength)
    assert.equal(new TextDecoder().decode(sidecar.subarray(0, 4)), 'FLBF')
    assert.equal(view.getUint16(4, true), 1, 'version')
    assert.equal(view.getUint16(6, true), 24, 'directory entry size')
    assert.equal(view.getUint32(8, true), 6, 'entry count')
    const entries = Array.from({ length: 6 }, (_, index) => {
      const entry = 16 + 24 * index
      return {
        fieldId: view.getInt32(entry, true),
        rowGroup: view.getInt32(entry + 4, true),
        offset: Number(view.getBigUint64(entry + 8, true)),
        numBytes: view.getUint32(entry + 16, true),
        codes: [...sidecar.subarray(entry + 20, entry + 24)],
      }
    })
    assert.deepEqual(
      entries.map((e) => [e.fieldId, e.rowGroup]),
      [
        [1, 0],
        [1, 1],
        [1, 2],
        [2, 0],
        [2, 1],
        [2, 2],
      ],
    )
    let expectedOffset = Math.ceil((16 + 24 * 6) / 32) * 32
    for (const entry of entries) {
      assert.equal(entry.offset, expectedOffset)
      assert.equal(entry.offset % 32, 0)
      assert.deepEqual(entry.codes, [0, 0, 0, 0])
      expectedOffset += entry.numBytes
    }
    assert.equal(sidecar.byteLength, expectedOffset)
  })

  // the writer turns each Iceberg type into its physical value; the probe must hash the same bytes
  const keyTypes: { type: PrimitiveType; value: (i: number) => IcebergValue }[] = [
    { type: 'int', value: (i) => i - 500 },
    { type: 'date', value: (i) => 19_000 + i },
    { type: 'timestamptz', value: (i) => 1_700_000_000_000_000n + BigInt(i) * 1_000n },
    {
      type: 'uuid',
      value: (i) => Uint8Array.from({ length: 16 }, (_, k) => (k === 15 ? i & 0xff : k === 14 ? i >> 8 : 7)),
    },
    { type: 'decimal(9,2)', value: (i) => BigInt(i * 100 + 1) },
    { type: 'decimal(18,2)', value: (i) => BigInt(-i * 100 - 1) },
    { type: 'decimal(30,2)', value: (i) => 10n ** 25n + BigInt(i) },
    { type: 'fixed[4]', value: (i) => Uint8Array.of(1, 2, i >> 8, i & 0xff) },
  ]
  for (const { type, value } of keyTypes) {
    test(`probes a ${type} column as the writer hashed it`, async (t) => {
      const directory = await temporaryDirectory(t)
      const schema: Schema = {
        type: 'struct',
        'schema-id': 0,
        fields: [{ id: 7, name: 'key', required: false, type }],
      }
      const segment = await writeSegment(directory, {
        rows: 1_000,
        schema,
        row: (i) => ({ key: value(i) }),
        bloomFilters: [{ fieldId: 7, fpp }],
      })
      const sidecar = readBloomSidecar(await writeBloomSidecar(segment.localPath, segment.bloomFilters))
      for (let i = 0; i < 1_000; i++) assert.ok(sidecar.mightContain(7, value(i), type), `value ${i}`)
      let falsePositives = 0
      for (let i = 2_000; i < 3_000; i++) if (sidecar.mightContain(7, value(i), type)) falsePositives++
      assert.ok(falsePositives < 50, `${falsePositives} false positives in 1000`)
    })
  }
})

describe('bloom-filter sidecar of a file written by Arrow C++ (pyarrow)', () => {
  test('holds every value Arrow inserted and rejects absent ones near the configured rate', async (t) => {
    const directory = await temporaryDirectory(t)
    const path = join(directory, 'arrow.parquet')
    const rows = 10_000
    const script = join(import.meta.dirname, 'testdata', 'pyarrow_bloom.py')
    const { stdout } = await promisify(execFile)(python, [script, path, String(rows), '4000', String(fpp)])
    const locations = (
      JSON.parse(stdout) as { fieldId: number; rowGroup: number; offset: number; length: number }[]
    ).map((l) => ({ ...l, offset: BigInt(l.offset) }))
    assert.equal(locations.length, 6)
    const sidecar = await writeBloomSidecar(path, locations)
    await assertBitsetsCopiedVerbatim(path, locations, sidecar)
    const rates = checkMembership(sidecar, rows, 4_000)
    t.diagnostic(`false-positive rates per filter: ${rates.map((r) => r.rate.toFixed(4)).join(' ')}`)
    assert.ok(Math.max(...rates.map((r) => r.rate)) < 2 * fpp)
  })
})

describe('reading a sidecar', () => {
  const bitset = new Uint8Array(64).fill(0xff)
  const sidecar = encodeBloomSidecar([{ fieldId: 2, rowGroup: 0, bitset }])

  test('says maybe for a field it has no filter for, and for null', () => {
    assert.equal(probeBloomSidecar(sidecar, 9, 1n, 'long'), true)
    assert.equal(probeBloomSidecar(encodeBloomSidecar([]), 2, 1n, 'long'), true)
    assert.equal(
      probeBloomSidecar(encodeBloomSidecar([{ fieldId: 2, rowGroup: 0, bitset: new Uint8Array(32) }]), 2, null, 'long'),
      true,
    )
  })

  test('says no for any value when the filter is empty, and only in the row group asked about', () => {
    const empty = encodeBloomSidecar([
      { fieldId: 2, rowGroup: 0, bitset: new Uint8Array(32) },
      { fieldId: 2, rowGroup: 1, bitset },
    ])
    assert.equal(probeBloomSidecar(empty, 2, 5n, 'long', { rowGroup: 0 }), false)
    assert.equal(probeBloomSidecar(empty, 2, 5n, 'long', { rowGroup: 1 }), true)
    assert.equal(probeBloomSidecar(empty, 2, 5n, 'long'), true)
  })

  const corruptions: { name: string; change: (bytes: Uint8Array) => Uint8Array; code: string }[] = [
    {
      name: 'a flipped bit in a bitset',
      change: (b) => {
        b[b.byteLength - 1]! ^= 1
        return b
      },
      code: 'PROTOCOL_UNDECODABLE',
    },
    {
      name: 'a wrong magic',
      change: (b) => {
        b.set([0x50, 0x41, 0x52, 0x31], 0)
        return b
      },
      code: 'PROTOCOL_UNDECODABLE',
    },
    { name: 'a cut-off end', change: (b) => b.subarray(0, 30), code: 'PROTOCOL_UNDECODABLE' },
    { name: 'a header only', change: (b) => b.subarray(0, 10), code: 'PROTOCOL_UNDECODABLE' },
    {
      name: 'a newer version',
      change: (b) => {
        new DataView(b.buffer).setUint16(4, 2, true)
        return b
      },
      code: 'PROTOCOL_VERSION_UNSUPPORTED',
    },
  ]
  for (const { name, change, code } of corruptions) {
    test(`refuses a sidecar with ${name}`, () => {
      const bytes = change(Uint8Array.from(sidecar))
      assert.throws(
        () => readBloomSidecar(bytes),
        (e) => isFloeError(e) && e.code === code,
      )
    })
  }
})

describe('writing a sidecar', () => {
  test('refuses a filter location that holds no bloom filter', async (t) => {
    const directory = await temporaryDirectory(t)
    const segment = await writeSegment(directory, { rows: 100, bloomFilters: [{ fieldId: 2 }] })
    const [location] = segment.bloomFilters
    const cases = [
      { ...location!, offset: 4n },
      { ...location!, length: location!.length - 1 },
      { ...location!, offset: BigInt(segment.sizeBytes - 8) },
    ]
    for (const wrong of cases) {
      await assert.rejects(writeBloomSidecar(segment.localPath, [wrong]), (e) => isFloeError(e, 'INVARIANT_BROKEN'))
    }
  })

  test('says STORAGE_NOT_FOUND for a file that does not exist', async (t) => {
    const directory = await temporaryDirectory(t)
    await assert.rejects(
      writeBloomSidecar(join(directory, 'gone.parquet'), [{ fieldId: 1, rowGroup: 0, offset: 4n, length: 40 }]),
      (e) => isFloeError(e, 'STORAGE_NOT_FOUND'),
    )
  })
})
