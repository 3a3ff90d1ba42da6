// Interoperability: pyiceberg (an independent implementation) reads the manifest list and
// manifests Floe writes, through read_with_pyiceberg.py beside this file.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { printedAddedEntry, printedPartitionHead, type SnapshotFiles, writeSnapshotFiles } from './interop-fixture.ts'
import { serializeBoundForTests, tableSchema, wideSpec } from './testing.ts'

const here = dirname(fileURLToPath(import.meta.url))
const python = join(here, '..', '..', '..', '.stack', 'venv', 'bin', 'python')
const hex = (bytes: Uint8Array | null | undefined) => ({ hex: Buffer.from(bytes ?? []).toString('hex') })

// biome-ignore lint/suspicious/noExplicitAny: the JSON pyiceberg printed, asserted field by field
type Printed = any

describe('pyiceberg reads what Floe writes', {
  skip: !existsSync(python) && `needs python with pyiceberg (the venv ${python}): npm run stack -- setup`,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'floe-manifests-'))
  let printed: Printed
  let files: SnapshotFiles

  before(() => {
    files = writeSnapshotFiles(dir, wideSpec)
    printed = JSON.parse(
      execFileSync(python, [join(here, 'read_with_pyiceberg.py'), files.listUri], { encoding: 'utf8' }),
    )
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  test('the manifest list header and field ids are what the spec names', () => {
    assert.deepEqual(
      { ...printed.list_header.meta, 'avro.schema': undefined },
      {
        'avro.schema': undefined,
        'avro.codec': 'deflate',
        'snapshot-id': '3051729675574597004',
        'parent-snapshot-id': '3051729675574597003',
        'sequence-number': '7',
        'format-version': '2',
      },
    )
    assert.deepEqual(
      printed.list_header.field_ids.map(Number),
      [500, 501, 502, 503, 504, 505, 506, 507, 508, 509, 510, 511, 512, 513, 514, 515, 516, 517, 518, 519],
    )
  })

  test('manifest list records carry counts, sequence numbers and partition bounds', () => {
    const [first, second] = printed.manifests
    assert.deepEqual(
      { ...first, header: undefined, entries: undefined, partitions: undefined },
      {
        manifest_path: files.uri('wide.avro'),
        manifest_length: String(files.wide.bytes.length),
        partition_spec_id: '2',
        content: '0',
        sequence_number: '7',
        min_sequence_number: '7',
        added_snapshot_id: '3051729675574597004',
        added_files_count: '2',
        existing_files_count: '0',
        deleted_files_count: '0',
        added_rows_count: '203',
        existing_rows_count: '0',
        deleted_rows_count: '0',
        key_metadata: null,
        header: undefined,
        entries: undefined,
        partitions: undefined,
      },
    )
    const bound = (name: string) => {
      const field = wideSpec.fields.findIndex((f) => f.name === name)
      return first.partitions[field]
    }
    assert.deepEqual(bound('amount'), {
      contains_null: true,
      contains_nan: false,
      lower_bound: { hex: 'cfc7' },
      upper_bound: { hex: 'cfc7' },
    })
    assert.deepEqual(bound('ts_day').lower_bound, hex(serializeBoundForTests('date', 19_723)))
    assert.deepEqual(bound('id').upper_bound, { hex: '0000000000000080' })
    assert.deepEqual(
      [second.sequence_number, second.min_sequence_number, second.existing_files_count, second.deleted_files_count],
      ['7', '5', '2', '1'],
    )
  })

  test('entries read back with exact ids, inherited sequence numbers and every statistic', () => {
    const [added, nulls] = printed.manifests[0].entries
    assert.deepEqual(added, {
      status: '1',
      ...printedAddedEntry(wideSpec),
      content: '0',
      partition: [
        ...printedPartitionHead,
        { decimal: '-123.45' },
        { uuid: '123e4567-e89b-12d3-a456-426614174000' },
        true,
        { hex: 'ff00' },
        { float: '2.5' },
        { hex: '01020304' },
        'eu-west',
        '1704067200000000',
      ],
      file_size_in_bytes: '4097',
      value_counts: { 1: '10' },
      null_value_counts: { 2: '0' },
      nan_value_counts: { 9: '1' },
      upper_bounds: { 3: { hex: '7a7a' } },
      key_metadata: null,
      equality_ids: null,
      sort_order_id: '0',
    })
    assert.deepEqual(
      nulls.partition,
      wideSpec.fields.map(() => null),
    )
    assert.equal(nulls.column_sizes, null)
  })

  test('merged entries keep their original snapshot ids and sequence numbers', () => {
    const entries = printed.manifests[1].entries.map((e: Printed) => [
      e.file_path.split('/').at(-1),
      e.status,
      e.snapshot_id,
      e.sequence_number,
      e.file_sequence_number,
      e.partition,
    ])
    assert.deepEqual(entries, [
      ['5.parquet', '2', '3051729675574597004', '2', '3', ['19005', 'c5']],
      ['3.parquet', '0', '3051729675574597002', '5', '5', ['19003', 'c3']],
      ['4.parquet', '0', '3051729675574597002', '5', '5', ['19004', 'c4']],
    ])
  })

  test('manifest headers keep the table schema, the spec and every field id', () => {
    const { meta, field_ids } = printed.manifests[0].header
    assert.deepEqual(JSON.parse(meta.schema), tableSchema)
    assert.deepEqual(JSON.parse(meta['partition-spec']), wideSpec.fields)
    assert.deepEqual(
      [meta['schema-id'], meta['partition-spec-id'], meta['format-version'], meta.content],
      ['3', '2', '2', 'data'],
    )
    const expected = [0, 1, 2, 3, 4, 100, 101, 102, 103, 104, 108, 109, 110, 117, 118, 119, 120, 121, 122]
    expected.push(125, 126, 127, 128, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 143)
    expected.push(...wideSpec.fields.map((f) => f['field-id']))
    assert.deepEqual(
      field_ids.map(Number),
      expected.sort((a, b) => a - b),
    )
  })
})
