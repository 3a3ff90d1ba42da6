import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type ErrorCode, isFloeError } from '../../errors.ts'
import {
  applyUpdates,
  parseTableMetadata,
  serializeTableMetadata,
  type TableMetadata,
  type TableUpdate,
} from './index.ts'
import { baseMs, ids, metadataText, snapshot } from './test-fixtures.ts'

const base = parseTableMetadata(metadataText)
const nowMs = baseMs + 60_000
const previous = 'file:///warehouse/db/events/metadata/00003-b.metadata.json'
const fourth = 1234567890123456789n
const added = snapshot(fourth, ids.third, 4n, baseMs + 30_000)

const cases: {
  name: string
  updates: TableUpdate[]
  expect?: (result: TableMetadata) => void
  error?: ErrorCode
}[] = [
  {
    name: 'add-snapshot appends the snapshot and takes its sequence number and time',
    updates: [{ action: 'add-snapshot', snapshot: added }],
    expect: (m) => {
      assert.deepEqual(m.snapshots.at(-1), added)
      assert.equal(m['last-sequence-number'], 4n)
      assert.equal(m['last-updated-ms'], added['timestamp-ms'])
      assert.equal(m['current-snapshot-id'], ids.third, 'main does not move without set-snapshot-ref')
    },
  },
  {
    name: 'add-snapshot with set-snapshot-ref on main makes it current and logs it',
    updates: [
      { action: 'add-snapshot', snapshot: added },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': fourth },
      { action: 'set-properties', updates: { 'floe.offsets.g': '{"t":{"0":10}}' } },
    ],
    expect: (m) => {
      assert.equal(m['current-snapshot-id'], fourth)
      assert.deepEqual(m.refs.main, { type: 'branch', 'snapshot-id': fourth })
      assert.deepEqual(m['snapshot-log'].at(-1), { 'timestamp-ms': added['timestamp-ms'], 'snapshot-id': fourth })
      assert.equal(m['snapshot-log'].length, 4)
      assert.equal(m.properties['floe.offsets.g'], '{"t":{"0":10}}')
      assert.equal(m.properties.owner, 'floe')
      assert.deepEqual(m['metadata-log'].at(-1), { 'metadata-file': previous, 'timestamp-ms': base['last-updated-ms'] })
    },
  },
  {
    name: 'add-snapshot refuses an id the table already has',
    updates: [{ action: 'add-snapshot', snapshot: snapshot(ids.second, ids.third, 4n, nowMs) }],
    error: 'CATALOG_BAD_REQUEST',
  },
  {
    name: 'add-snapshot refuses a sequence number not above the last one',
    updates: [{ action: 'add-snapshot', snapshot: snapshot(fourth, ids.third, 3n, nowMs) }],
    error: 'CATALOG_BAD_REQUEST',
  },
  {
    name: 'set-snapshot-ref refuses an unknown snapshot',
    updates: [{ action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 42n }],
    error: 'CATALOG_BAD_REQUEST',
  },
  {
    name: 'set-snapshot-ref refuses main as a tag',
    updates: [{ action: 'set-snapshot-ref', 'ref-name': 'main', type: 'tag', 'snapshot-id': ids.first }],
    error: 'CATALOG_BAD_REQUEST',
  },
  {
    name: 'set-snapshot-ref on a tag leaves the current snapshot alone',
    updates: [{ action: 'set-snapshot-ref', 'ref-name': 'audit', type: 'tag', 'snapshot-id': ids.first }],
    expect: (m) => {
      assert.equal(m['current-snapshot-id'], ids.third)
      assert.deepEqual(m.refs.audit, { type: 'tag', 'snapshot-id': ids.first })
      assert.equal(m['snapshot-log'].length, 3)
      assert.equal(m['last-updated-ms'], nowMs)
    },
  },
  {
    name: 'set-snapshot-ref moving main back to an old snapshot logs it at now',
    updates: [{ action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': ids.first }],
    expect: (m) => {
      assert.equal(m['current-snapshot-id'], ids.first)
      assert.deepEqual(m['snapshot-log'].at(-1), { 'timestamp-ms': nowMs, 'snapshot-id': ids.first })
    },
  },
  {
    name: 'set-properties and remove-properties change only the named keys',
    updates: [
      { action: 'set-properties', updates: { a: '1', b: '2' } },
      { action: 'remove-properties', removals: ['a', 'owner', 'missing'] },
    ],
    expect: (m) => assert.deepEqual(m.properties, { b: '2' }),
  },
  {
    name: 'add-schema with set-current-schema -1 adds schema 1 and raises last-column-id',
    updates: [
      {
        action: 'add-schema',
        schema: {
          type: 'struct',
          'schema-id': -1,
          fields: [...(base.schemas[0]?.fields ?? []), { id: 3, name: 'kind', required: false, type: 'string' }],
        },
      },
      { action: 'set-current-schema', 'schema-id': -1 },
    ],
    expect: (m) => {
      assert.equal(m['current-schema-id'], 1)
      assert.equal(m.schemas[1]?.['schema-id'], 1)
      assert.equal(m['last-column-id'], 3)
    },
  },
  {
    name: 'add-schema of an identical schema reuses its id and changes nothing',
    updates: [
      { action: 'add-schema', schema: { ...base.schemas[0]!, 'schema-id': 9 } },
      { action: 'set-current-schema', 'schema-id': -1 },
    ],
    expect: (m) => assert.equal(m, base),
  },
  {
    name: 'set-current-schema -1 without an added schema is a bad request',
    updates: [{ action: 'set-current-schema', 'schema-id': -1 }],
    error: 'CATALOG_BAD_REQUEST',
  },
  {
    name: 'add-spec assigns field ids after last-partition-id and set-default-spec -1 selects it',
    updates: [
      { action: 'add-spec', spec: { fields: [{ name: 'id_bucket', transform: 'bucket[8]', 'source-id': 1 }] } },
      { action: 'set-default-spec', 'spec-id': -1 },
    ],
    expect: (m) => {
      assert.deepEqual(m['partition-specs'][1], {
        'spec-id': 1,
        fields: [{ name: 'id_bucket', transform: 'bucket[8]', 'source-id': 1, 'field-id': 1001 }],
      })
      assert.equal(m['default-spec-id'], 1)
      assert.equal(m['last-partition-id'], 1001)
    },
  },
  {
    name: 'add-sort-order numbers a sorted order from 1',
    updates: [
      {
        action: 'add-sort-order',
        'sort-order': {
          'order-id': 5,
          fields: [{ transform: 'identity', 'source-id': 1, direction: 'asc', 'null-order': 'nulls-first' }],
        },
      },
      { action: 'set-default-sort-order', 'sort-order-id': -1 },
    ],
    expect: (m) => {
      assert.equal(m['default-sort-order-id'], 1)
      assert.equal(m['sort-orders'][1]?.['order-id'], 1)
    },
  },
  {
    name: 'remove-snapshots drops the snapshot, its refs and the log before it',
    updates: [
      { action: 'set-snapshot-ref', 'ref-name': 'old', type: 'tag', 'snapshot-id': ids.second },
      { action: 'remove-snapshots', 'snapshot-ids': [ids.second] },
    ],
    expect: (m) => {
      assert.deepEqual(
        m.snapshots.map((s) => s['snapshot-id']),
        [ids.first, ids.third],
      )
      assert.equal(m.refs.old, undefined)
      assert.deepEqual(
        m['snapshot-log'].map((e) => e['snapshot-id']),
        [ids.third],
      )
      assert.equal(m['current-snapshot-id'], ids.third)
    },
  },
  {
    name: 'remove-snapshots of the current snapshot leaves no current snapshot',
    updates: [{ action: 'remove-snapshots', 'snapshot-ids': [ids.third] }],
    expect: (m) => {
      assert.equal(m['current-snapshot-id'], null)
      assert.equal(m.refs.main, undefined)
    },
  },
  {
    name: 'remove-snapshot-ref of main clears the current snapshot',
    updates: [{ action: 'remove-snapshot-ref', 'ref-name': 'main' }],
    expect: (m) => assert.equal(m['current-snapshot-id'], null),
  },
  {
    name: 'upgrade-format-version refuses a downgrade',
    updates: [{ action: 'upgrade-format-version', 'format-version': 1 }],
    error: 'CATALOG_BAD_REQUEST',
  },
  {
    name: 'upgrade-format-version refuses v3, which Floe cannot maintain',
    updates: [{ action: 'upgrade-format-version', 'format-version': 3 }],
    error: 'CATALOG_BAD_REQUEST',
  },
  {
    name: 'set-location and assign-uuid replace their fields',
    updates: [
      { action: 'set-location', location: 'file:///elsewhere' },
      { action: 'assign-uuid', uuid: 'c0000000-0000-0000-0000-000000000000' },
    ],
    expect: (m) => {
      assert.equal(m.location, 'file:///elsewhere')
      assert.equal(m['table-uuid'], 'c0000000-0000-0000-0000-000000000000')
    },
  },
  {
    name: 'a snapshot stamped over a minute before the last update is refused',
    updates: [
      { action: 'add-snapshot', snapshot: snapshot(fourth, ids.third, 4n, baseMs - 120_000) },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': fourth },
    ],
    error: 'CATALOG_BAD_REQUEST',
  },
  {
    name: 'an unknown update is a bad request',
    updates: [{ action: 'add-encryption-key' } as unknown as TableUpdate],
    error: 'CATALOG_BAD_REQUEST',
  },
  { name: 'no updates return the base itself', updates: [], expect: (m) => assert.equal(m, base) },
  {
    name: 'restating a property or removing a missing one changes nothing',
    updates: [
      { action: 'set-properties', updates: { owner: 'floe' } },
      { action: 'remove-properties', removals: ['missing'] },
    ],
    expect: (m) => assert.equal(m, base),
  },
]

describe('applyUpdates', () => {
  for (const { name, updates, expect, error } of cases) {
    test(`says ${name}`, () => {
      const before = serializeTableMetadata(base)
      if (error !== undefined) {
        assert.throws(
          () => applyUpdates(base, updates, nowMs, previous),
          (e) => isFloeError(e, error),
        )
      } else {
        expect?.(applyUpdates(base, updates, nowMs, previous))
      }
      assert.equal(serializeTableMetadata(base), before, 'the base is never modified')
    })
  }

  test('keeps the metadata log to write.metadata.previous-versions-max entries', () => {
    let metadata = applyUpdates(
      base,
      [{ action: 'set-properties', updates: { 'write.metadata.previous-versions-max': '2' } }],
      nowMs,
    )
    for (let i = 0; i < 4; i++) {
      metadata = applyUpdates(
        metadata,
        [{ action: 'set-properties', updates: { n: String(i) } }],
        nowMs + i,
        `file:///m/${i}`,
      )
    }
    assert.deepEqual(
      metadata['metadata-log'].map((e) => e['metadata-file']),
      ['file:///m/2', 'file:///m/3'],
    )
  })

  test('drops a snapshot added and superseded on main in the same commit from the log', () => {
    const fifth = fourth + 1n
    const result = applyUpdates(
      base,
      [
        { action: 'add-snapshot', snapshot: added },
        { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': fourth },
        { action: 'add-snapshot', snapshot: snapshot(fifth, fourth, 5n, baseMs + 31_000) },
        { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': fifth },
      ],
      nowMs,
    )
    assert.deepEqual(
      result['snapshot-log'].slice(3).map((e) => e['snapshot-id']),
      [fifth],
    )
    assert.equal(result['last-sequence-number'], 5n)
  })

  test('keeps keys the model does not know through an update', () => {
    const result = applyUpdates(base, [{ action: 'set-properties', updates: { a: 'b' } }], nowMs)
    assert.match(serializeTableMetadata(result), /"x-engine-extension":\{"kept":\[1,2,3\]\}/)
  })
})
