import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../errors.ts'
import { readContainer } from './avro-container.ts'
import { type ManifestFile, readManifestList, writeManifestList } from './index.ts'
import { bigSnapshotId, listed } from './testing.ts'

const carried: ManifestFile = listed('file:///w/m-old.avro', 7000, {
  addedSnapshotId: bigSnapshotId - 7n,
  sequenceNumber: 3n,
  minSequenceNumber: 2n,
  addedFilesCount: 0,
  existingFilesCount: 12,
  deletedFilesCount: 0,
  addedRowsCount: 0n,
  existingRowsCount: 9_007_199_254_740_993n,
  partitions: [
    {
      containsNull: true,
      containsNan: false,
      lowerBound: Uint8Array.of(1, 0, 0, 0),
      upperBound: Uint8Array.of(9, 0, 0, 0),
    },
    { containsNull: false, containsNan: null, lowerBound: null, upperBound: null },
  ],
  keyMetadata: Uint8Array.of(7),
})
const fresh: ManifestFile = listed('file:///w/m-new.avro', 3523, {
  addedSnapshotId: bigSnapshotId,
  sequenceNumber: null,
  minSequenceNumber: null,
  partitionSpecId: 1,
})
const deletes: ManifestFile = listed('file:///w/d.avro', 100, { content: 'deletes', addedSnapshotId: 5n })

describe('writeManifestList and readManifestList', () => {
  test('a manifest list reads back as written, with the new manifest given the snapshot sequence number', () => {
    const bytes = writeManifestList({
      snapshotId: bigSnapshotId,
      parentSnapshotId: bigSnapshotId - 7n,
      sequenceNumber: 4n,
      manifests: [fresh, carried, deletes],
    })
    const read = readManifestList(bytes)
    assert.deepEqual(read, {
      snapshotId: bigSnapshotId,
      parentSnapshotId: bigSnapshotId - 7n,
      sequenceNumber: 4n,
      formatVersion: 2,
      manifests: [{ ...fresh, sequenceNumber: 4n, minSequenceNumber: 4n }, carried, deletes],
    })
  })

  test('the header carries snapshot-id, parent-snapshot-id, sequence-number and format-version', () => {
    const { metadata } = readContainer(
      writeManifestList({ snapshotId: bigSnapshotId, parentSnapshotId: null, sequenceNumber: 1n, manifests: [fresh] }),
    )
    assert.equal(metadata.get('snapshot-id'), '3051729675574597004')
    assert.equal(metadata.get('parent-snapshot-id'), 'null')
    assert.equal(metadata.get('sequence-number'), '1')
    assert.equal(metadata.get('format-version'), '2')
  })

  test('the header schema keeps the field ids of manifest_file and field_summary', () => {
    const { schema } = readContainer(
      writeManifestList({ snapshotId: 1n, parentSnapshotId: null, sequenceNumber: 1n, manifests: [] }),
    )
    const fields = (schema as { fields: { name: string; 'field-id': number; type: unknown }[] }).fields
    assert.deepEqual(
      fields.map((f) => [f.name, f['field-id']]),
      [
        ['manifest_path', 500],
        ['manifest_length', 501],
        ['partition_spec_id', 502],
        ['content', 517],
        ['sequence_number', 515],
        ['min_sequence_number', 516],
        ['added_snapshot_id', 503],
        ['added_files_count', 504],
        ['existing_files_count', 505],
        ['deleted_files_count', 506],
        ['added_rows_count', 512],
        ['existing_rows_count', 513],
        ['deleted_rows_count', 514],
        ['partitions', 507],
        ['key_metadata', 519],
      ],
    )
    const partitions = (fields[13]?.type as unknown[] | undefined)?.[1] as {
      'element-id': number
      items: { fields: { name: string; 'field-id': number }[] }
    }
    assert.equal(partitions['element-id'], 508)
    assert.deepEqual(
      partitions.items.fields.map((f) => [f.name, f['field-id']]),
      [
        ['contains_null', 509],
        ['contains_nan', 518],
        ['lower_bound', 510],
        ['upper_bound', 511],
      ],
    )
  })

  test('an empty manifest list is valid', () => {
    const read = readManifestList(
      writeManifestList({ snapshotId: 1n, parentSnapshotId: null, sequenceNumber: 1n, manifests: [] }),
    )
    assert.deepEqual(read.manifests, [])
    assert.equal(read.parentSnapshotId, null)
  })

  const refused: [string, ManifestFile][] = [
    ['a manifest of an earlier snapshot without a sequence number', { ...carried, sequenceNumber: null }],
    ['a manifest of an earlier snapshot without a min sequence number', { ...carried, minSequenceNumber: null }],
    ['a manifest with an unknown file count', { ...carried, addedFilesCount: null }],
    ['a manifest with an unknown row count', { ...carried, deletedRowsCount: null }],
    ['a manifest length that is a number', { ...carried, manifestLength: 5 as unknown as bigint }],
  ]
  for (const [what, manifest] of refused) {
    test(`writing refuses ${what}`, () => {
      assert.throws(
        () =>
          writeManifestList({
            snapshotId: bigSnapshotId,
            parentSnapshotId: null,
            sequenceNumber: 4n,
            manifests: [manifest],
          }),
        (e) => isFloeError(e, 'INVARIANT_BROKEN'),
      )
    })
  }
})
