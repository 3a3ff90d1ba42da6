import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  ancestorsOf,
  ancestorsOfRef,
  applyUpdates,
  currentSchema,
  currentSnapshot,
  defaultSpec,
  metadataFileLocation,
  metadataFileVersion,
  newSnapshotId,
  nextSequenceNumber,
  parseTableMetadata,
  refSnapshotId,
  snapshotById,
} from './index.ts'
import { ids, metadataText } from './test-fixtures.ts'

const table = parseTableMetadata(metadataText)

describe('snapshot lookups', () => {
  test('find the current snapshot and a snapshot by its 63-bit id', () => {
    assert.equal(currentSnapshot(table)?.['snapshot-id'], ids.third)
    assert.equal(snapshotById(table, ids.second)?.summary['floe.commit-id'], 'c2')
    assert.equal(snapshotById(table, ids.second + 1n), undefined)
  })

  test('walk the ancestors of main newest first', () => {
    assert.deepEqual(
      [...ancestorsOfRef(table)].map((s) => s['snapshot-id']),
      [ids.third, ids.second, ids.first],
    )
  })

  test('stop the walk where a parent has expired', () => {
    const expired = applyUpdates(table, [{ action: 'remove-snapshots', 'snapshot-ids': [ids.first] }], Date.now())
    assert.deepEqual(
      [...ancestorsOf(expired, ids.third)].map((s) => s['snapshot-id']),
      [ids.third, ids.second],
    )
  })

  test('yield nothing for a table without snapshots or a missing ref', () => {
    assert.deepEqual([...ancestorsOf(table, null)], [])
    assert.deepEqual([...ancestorsOfRef(table, 'nope')], [])
    assert.equal(refSnapshotId(table, 'nope'), null)
  })

  test('give the next sequence number and the schema and spec to write with', () => {
    assert.equal(nextSequenceNumber(table), 4n)
    assert.equal(currentSchema(table)['schema-id'], 0)
    assert.equal(defaultSpec(table).fields[0]?.name, 'ts_day')
  })

  test('make positive 63-bit snapshot ids that the table does not use', () => {
    for (let i = 0; i < 1000; i++) {
      const id = newSnapshotId(table)
      assert.ok(id > 0n && id < 2n ** 63n)
      assert.equal(snapshotById(table, id), undefined)
    }
  })
})

describe('metadata file names', () => {
  const cases = [
    { location: 'file:///w/t/metadata/00000-7bb5765a-f79b-464d-9f9b-c2d23e228042.metadata.json', version: 0 },
    { location: 'file:/w/t/metadata/00042-7bb5765a-f79b-464d-9f9b-c2d23e228042.metadata.json', version: 42 },
    {
      location: 'abfs://c@a.dfs.core.windows.net/t/metadata/123456-7bb5765a-f79b-464d-9f9b-c2d23e228042.metadata.json',
      version: 123456,
    },
    { location: 'file:///w/t/metadata/v3.metadata.json', version: -1 },
    { location: 'file:///w/t/metadata/00001-not-a-uuid.metadata.json', version: -1 },
  ]
  for (const { location, version } of cases) {
    test(`read version ${version} from ${location.slice(location.lastIndexOf('/') + 1)}`, () => {
      assert.equal(metadataFileVersion(location), version)
    })
  }

  test('are made under the table location, or write.metadata.path when set', () => {
    const uuid = '7bb5765a-f79b-464d-9f9b-c2d23e228042'
    assert.equal(
      metadataFileLocation({ location: 'file:///w/t/', properties: {} }, 7, uuid),
      `file:///w/t/metadata/00007-${uuid}.metadata.json`,
    )
    assert.equal(
      metadataFileLocation({ location: 'file:///w/t', properties: { 'write.metadata.path': 'file:///m/' } }, 1, uuid),
      `file:///m/00001-${uuid}.metadata.json`,
    )
  })
})
