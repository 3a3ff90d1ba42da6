import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { DatasetConfig } from '../../shared/config/index.ts'
import type { NestedField, Schema } from '../../shared/iceberg/index.ts'
import { applyUpdates, currentSchema, newTableMetadata, planWidening } from '../../shared/iceberg/metadata/index.ts'
import { isFloeError } from '../../shared/index.ts'
import { compileDecoder, type Decoder, MAX_INFERRED_FIELDS, SchemaWidening } from './index.ts'
import type { RecordCoordinates } from './kafka-columns.ts'
import { inferredOf } from './test-support.ts'

const json = (value: unknown) => Buffer.from(JSON.stringify(value))
const field = (name: string, type: NestedField['type']): NestedField => ({ id: 0, name, required: false, type })

/** Decodes, widening the schema (as the participant does with the table) whenever the decoder asks. */
class Table {
  metadata
  readonly decoder: Decoder
  widenings = 0
  constructor(dataset: DatasetConfig) {
    this.metadata = newTableMetadata({ location: 'file:///t', schema: dataset.icebergSchema, nowMs: 0 })
    this.decoder = compileDecoder(dataset, { maxRecordBytes: 1 << 20 }, this.schema)
  }
  get schema(): Schema {
    return currentSchema(this.metadata)
  }
  decode(value: unknown, record?: RecordCoordinates) {
    for (;;) {
      try {
        return this.decoder.decode(json(value), record)
      } catch (error) {
        if (!(error instanceof SchemaWidening)) throw error
        this.widen(error.fields)
      }
    }
  }
  widen(fields: readonly NestedField[]): void {
    const change = planWidening(this.metadata, fields)
    assert.ok(change.commit, 'a widening the table already has')
    this.metadata = applyUpdates(this.metadata, change.commit.updates, ++this.widenings)
    this.decoder.useSchema?.(this.schema)
  }
}

function refusal(decode: () => unknown): { reason: unknown; message: string } {
  try {
    decode()
  } catch (error) {
    assert.ok(isFloeError(error, 'RECORD_MALFORMED'), String(error))
    return { reason: error.details.reason, message: error.message }
  }
  assert.fail('decoded')
}

describe('a dataset that infers its columns', () => {
  test('the first record makes the columns; later ones fill them by name, and leave out what they lack', () => {
    const table = new Table(inferredOf())
    assert.deepEqual(table.decode({ id: 'a', n: 1, ok: true, user: { name: 'x' }, tags: ['t'] }), {
      id: 'a',
      n: 1,
      ok: true,
      user: { name: 'x' },
      tags: ['t'],
    })
    assert.equal(table.widenings, 1)
    // a row holds the fields its record has: the writer reads a missing column as null
    assert.deepEqual(table.decode({ n: 2, id: 'b', ok: null }), { id: 'b', n: 2 })
    assert.equal(table.widenings, 1, 'known fields need no change')
    assert.deepEqual(table.decoder.columns, ['id', 'n', 'ok', 'user', 'tags'])
  })

  test('a new field, nested or not, asks for a wider schema before the record decodes', () => {
    const table = new Table(inferredOf())
    table.decode({ id: 'a', user: { name: 'x' } })
    assert.throws(
      () => table.decoder.decode(json({ id: 'b', user: { name: 'y', age: 3 } })),
      (error: unknown) =>
        error instanceof SchemaWidening &&
        error.fields.some((f) => f.name === 'user' && typeof f.type === 'object' && f.type.type === 'struct'),
    )
    assert.deepEqual(table.decode({ id: 'b', user: { name: 'y', age: 3 }, score: 1.5 }), {
      id: 'b',
      user: { name: 'y', age: 3 },
      score: 1.5,
    })
    assert.deepEqual(
      table.schema.fields.map((f) => f.name),
      ['id', 'user', 'score'],
    )
  })

  test('an int column widens to long for a value beyond 32 bits; a fraction in it is refused', () => {
    const table = new Table(inferredOf())
    table.decode({ n: 1 })
    assert.deepEqual(table.decode({ n: 2 ** 40 }), { n: 2n ** 40n })
    assert.equal(table.schema.fields[0]?.type, 'long')
    assert.deepEqual(table.decode({ n: 5 }), { n: 5n })
    const refused = refusal(() => table.decode({ n: 1.5 }))
    assert.equal(refused.reason, 'conversion-failed')
    assert.match(
      refused.message,
      /column n: expected long, .*Iceberg cannot widen an integer column to double: rename the column and declare/,
    )
  })

  test('a record that needs no more than a schema the catalog refused is dead-lettered until the schema changes', () => {
    const table = new Table(inferredOf())
    table.decode({ id: 'a' })
    table.decoder.refuseWidening?.([field('Bad', 'int')], 'invalid column name')
    const refused = refusal(() => table.decoder.decode(json({ id: 'b', Bad: 1 })))
    assert.equal(refused.reason, 'schema-refused')
    assert.match(refused.message, /the catalog refused the columns this record needs: invalid column name/)
    // a record that needs more asks again; once the schema changes, nothing is held against it
    assert.throws(() => table.decoder.decode(json({ Bad: 1, other: 2 })), SchemaWidening)
    table.decode({ good: true })
    assert.deepEqual(table.decode({ Bad: 1 }), { Bad: 1 })
  })

  test('a value that asks for a widening no column can make is refused, not asked for again and again', () => {
    const table = new Table(inferredOf())
    table.decode({ ids: [1, 2] })
    // a 64-bit integer beside a fraction: the elements join to double, which an int list cannot become
    assert.equal(refusal(() => table.decode({ ids: [0.5, 2 ** 32] })).reason, 'conversion-failed')
    assert.equal(table.widenings, 1)
    assert.deepEqual(table.decode({ ids: [2 ** 32] }), { ids: [2n ** 32n] })
  })

  test('a value of another kind than its column is refused, never a narrowing or a new type', () => {
    const table = new Table(inferredOf())
    table.decode({ s: 'text', o: { a: 1 } })
    assert.equal(refusal(() => table.decode({ s: 3 })).reason, 'conversion-failed')
    assert.equal(refusal(() => table.decode({ o: [1] })).reason, 'conversion-failed')
    assert.equal(table.widenings, 1)
  })

  test('a declared column takes what inference would have typed otherwise: 0 then 0.5 in a double', () => {
    const table = new Table(inferredOf({ schema: { amount: 'double' } }))
    assert.deepEqual(table.decode({ amount: 0 }), { amount: 0 })
    assert.deepEqual(table.decode({ amount: 0.5, id: 'x' }), { amount: 0.5, id: 'x' })
  })

  test('timestampFields are timestamptz columns from the start, and nested paths when they appear', () => {
    const table = new Table(inferredOf({ timestampFields: ['at', 'ctx.seen'], partitionSpec: ['day(at)'] }))
    assert.deepEqual(
      table.schema.fields.map((f) => [f.name, f.type]),
      [['at', 'timestamptz']],
    )
    const row = table.decode({ at: '2026-12-05T10:00:00Z', ctx: { seen: '2026-12-05T10:00:01.5+01:00' } })
    assert.deepEqual(row, { at: 1_796_464_800_000_000n, ctx: { seen: 1_796_461_201_500_000n } })
  })

  test('a partition by a Kafka source fills its column from the coordinates; a field of that name is refused', () => {
    const table = new Table(inferredOf({ partitionSpec: ['day($kafka.timestamp)'] }))
    const record = { timestampMs: 1_764_547_200_123n } as RecordCoordinates
    assert.deepEqual(table.decode({ id: 'a' }, record), { id: 'a', kafka_timestamp: 1_764_547_200_123_000n })
    const refused = refusal(() => table.decode({ kafka_timestamp: 5 }, record))
    assert.equal(refused.reason, 'field-name')
    assert.equal(table.decoder.readsCoordinates, true)
  })

  test('a record with no field to make a column of is refused while the table has none', () => {
    const table = new Table(inferredOf())
    assert.equal(refusal(() => table.decode({ a: null, b: {} })).reason, 'conversion-failed')
    table.decode({ a: 1 })
    assert.deepEqual(table.decode({ b: {} }), {})
  })

  test('new fields that would pass the field limit refuse their record; known ones still decode', () => {
    const table = new Table(inferredOf())
    const wide = Object.fromEntries(Array.from({ length: MAX_INFERRED_FIELDS - 1 }, (_, i) => [`f${i}`, i]))
    table.decode(wide)
    const refused = refusal(() => table.decode({ x: 1, y: 2 }))
    assert.equal(refused.reason, 'too-many-columns')
    assert.deepEqual(table.decode({ x: 1 }).x, 1)
    assert.equal(refusal(() => table.decode({ y: 1 })).reason, 'too-many-columns')
  })
})
