import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../errors.ts'
import { parseJson } from '../../json/index.ts'
import { parseTableMetadata, serializeTableMetadata } from './index.ts'
import { baseMs, ids, metadataText } from './test-fixtures.ts'

describe('parseTableMetadata', () => {
  test('keeps 63-bit snapshot ids exact', () => {
    const metadata = parseTableMetadata(metadataText)
    assert.deepEqual(
      metadata.snapshots.map((s) => s['snapshot-id']),
      [ids.first, ids.second, ids.third],
    )
    assert.equal(metadata['current-snapshot-id'], ids.third)
    assert.equal(metadata.refs.main?.['snapshot-id'], ids.third)
    assert.equal(metadata.snapshots[1]?.['parent-snapshot-id'], ids.first)
  })

  test('gives every int64 id and sequence number the bigint type, small or not', () => {
    const metadata = parseTableMetadata(metadataText)
    assert.equal(metadata['last-sequence-number'], 3n)
    assert.equal(metadata.snapshots[0]?.['sequence-number'], 1n)
    assert.equal(metadata['snapshot-log'][0]?.['snapshot-id'], ids.first)
    assert.equal(metadata['last-updated-ms'], baseMs + 2000)
  })

  test('reads bytes as well as text', () => {
    assert.deepEqual(parseTableMetadata(new TextEncoder().encode(metadataText)), parseTableMetadata(metadataText))
  })

  const noCurrent = [
    { name: '-1', value: '-1' },
    { name: 'null', value: 'null' },
  ]
  for (const { name, value } of noCurrent) {
    test(`reads a current-snapshot-id of ${name} as no current snapshot`, () => {
      const text = metadataText
        .replace(`"current-snapshot-id": ${ids.third}`, `"current-snapshot-id": ${value}`)
        .replace(/"refs": \{[^}]*\}\}/, '"refs": {}')
      assert.equal(parseTableMetadata(text)['current-snapshot-id'], null)
      assert.deepEqual(parseTableMetadata(text).refs, {})
    })
  }

  test('derives the main branch from current-snapshot-id when refs are missing', () => {
    const text = metadataText.replace(/"refs": \{[^}]*\}\},/, '')
    assert.deepEqual(parseTableMetadata(text).refs, { main: { type: 'branch', 'snapshot-id': ids.third } })
  })

  test('fills what a format v1 file may leave out', () => {
    const v1 = JSON.stringify({
      'format-version': 1,
      'table-uuid': 'a0000000-0000-0000-0000-000000000000',
      location: 'file:///t',
      'last-updated-ms': 1,
      'last-column-id': 1,
      schema: { type: 'struct', fields: [{ id: 1, name: 'a', required: false, type: 'int' }] },
      'partition-spec': [],
      snapshots: [{ 'snapshot-id': 5, 'timestamp-ms': 1, 'manifest-list': 'file:///t/m.avro' }],
      'current-snapshot-id': 5,
    })
    const metadata = parseTableMetadata(v1)
    assert.equal(metadata.schemas[0]?.['schema-id'], 0)
    assert.deepEqual(metadata['partition-specs'], [{ 'spec-id': 0, fields: [] }])
    assert.equal(metadata['last-partition-id'], 999)
    assert.equal(metadata['last-sequence-number'], 0n)
    assert.equal(metadata.snapshots[0]?.['sequence-number'], 0n)
    assert.equal(metadata.snapshots[0]?.summary.operation, 'append')
  })

  const broken = [
    { name: 'text that is not JSON', text: '{"format-version":' },
    { name: 'a format version of 4', text: metadataText.replace('"format-version": 2', '"format-version": 4') },
    {
      name: 'a missing table uuid',
      text: metadataText.replace('"table-uuid": "ec733cac-84a5-4f1c-8dd7-f46e63f2e13a",', ''),
    },
    {
      name: 'a snapshot id that is a string',
      text: metadataText.replace(`{"snapshot-id": ${ids.first},`, '{"snapshot-id": "x",'),
    },
    {
      name: 'a snapshot without summary',
      text: metadataText.replace(', "summary": {"operation": "append"}, "schema-id": 0}', '}'),
    },
  ]
  for (const { name, text } of broken) {
    test(`refuses ${name} with CATALOG_BAD_REQUEST`, () => {
      assert.throws(
        () => parseTableMetadata(text),
        (error) => isFloeError(error, 'CATALOG_BAD_REQUEST'),
      )
    })
  }
})

describe('serializeTableMetadata', () => {
  test('writes back what it read, including keys the model does not know', () => {
    const written = serializeTableMetadata(parseTableMetadata(metadataText))
    assert.deepEqual(parseJson(written), parseJson(metadataText))
    assert.match(written, /"x-engine-extension":\{"kept":\[1,2,3\]\}/)
    assert.match(written, new RegExp(`"snapshot-id":${ids.third}`))
  })

  test('writes no current snapshot as -1, as Iceberg does', () => {
    const metadata = { ...parseTableMetadata(metadataText), 'current-snapshot-id': null }
    assert.match(serializeTableMetadata(metadata), /"current-snapshot-id":-1/)
  })

  test('round-trips to an identical model', () => {
    const metadata = parseTableMetadata(metadataText)
    assert.deepEqual(parseTableMetadata(serializeTableMetadata(metadata)), metadata)
  })
})
