// Interoperability with the reference implementation: Apache Iceberg Java (the jars the local
// stack's REST catalog runs on) reads the manifest list and manifests Floe writes, through
// ReadWithIcebergJava.java beside this file, compiled into a temporary directory; and Floe reads
// what Iceberg Java writes (WriteWithIcebergJava.java), as it must to merge other engines' manifests.
//
// The spec leaves out fixed[L] partition fields: Iceberg Java up to 1.11 writes and reads Avro
// `fixed` values with a length prefix (a known bug of its Avro codec), so a spec-correct fixed partition
// value, which pyiceberg reads, breaks Java's reader. manifest-interop.test.ts covers it.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { PartitionSpec } from '../types.ts'
import { type ManifestFile, mergeManifests, readManifest, readManifestList } from './index.ts'
import { printedAddedEntry, printedPartitionHead, type SnapshotFiles, writeSnapshotFiles } from './interop-fixture.ts'
import { serializeBoundForTests, wideSpec } from './testing.ts'

const here = dirname(fileURLToPath(import.meta.url))
const jars = join(here, '..', '..', '..', '.stack', 'jars', 'iceberg-rest')
const hasJava = (() => {
  try {
    execFileSync('javac', ['-version'], { stdio: 'ignore' })
    return existsSync(jars) && readdirSync(jars).some((name) => name.startsWith('iceberg-core-'))
  } catch {
    return false
  }
})()

const needsJava = `needs java (javac on PATH) and the Iceberg jars in ${jars}: npm run stack -- setup`

const work = mkdtempSync(join(tmpdir(), 'floe-manifests-java-'))
after(() => rmSync(work, { recursive: true, force: true }))
const classes = join(work, 'classes')
const classpath = `${classes}:${join(jars, '*')}`
let compiled = false

/** Compiles both Java programs with one javac run, the first time a suite needs them. */
function java(program: string, args: string[]): string {
  if (!compiled) {
    const sources = ['ReadWithIcebergJava.java', 'WriteWithIcebergJava.java'].map((file) => join(here, file))
    execFileSync('javac', ['-nowarn', '-cp', join(jars, '*'), '-d', classes, ...sources], { stdio: 'ignore' })
    compiled = true
  }
  return execFileSync('java', ['-cp', classpath, `org.apache.iceberg.${program}`, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  })
}

const javaSpec: PartitionSpec = { ...wideSpec, fields: wideSpec.fields.filter((f) => f.name !== 'code') }

// biome-ignore lint/suspicious/noExplicitAny: the JSON Iceberg Java printed, asserted field by field
type Printed = any

describe('Iceberg Java reads what Floe writes', { skip: !hasJava && needsJava }, () => {
  let printed: Printed
  let files: SnapshotFiles

  before(() => {
    const dir = join(work, 'floe')
    mkdirSync(dir)
    files = writeSnapshotFiles(dir, javaSpec)
    printed = JSON.parse(java('ReadWithIcebergJava', [files.listUri]))
  })

  test('the manifest list records read with sequence numbers assigned and 63-bit ids exact', () => {
    assert.deepEqual(
      printed.map((m: Printed) => [
        m.manifest_path,
        m.sequence_number,
        m.min_sequence_number,
        m.added_snapshot_id,
        m.added_files_count,
        m.existing_files_count,
        m.deleted_files_count,
      ]),
      [
        [files.uri('wide.avro'), '7', '7', '3051729675574597004', '2', '0', '0'],
        [files.uri('merged.avro'), '7', '5', '3051729675574597004', '0', '2', '1'],
      ],
    )
    assert.deepEqual(printed[0].partition_lower_bounds.length, javaSpec.fields.length)
  })

  test('entries read with inherited and explicit sequence numbers, partition values and statistics', () => {
    const [added, nulls] = printed[0].entries
    assert.deepEqual(added, {
      status: 'ADDED',
      ...printedAddedEntry(javaSpec),
      partition: [
        ...printedPartitionHead,
        '-123.45',
        '123e4567-e89b-12d3-a456-426614174000',
        'true',
        { hex: 'ff00' },
        '2.5',
        'eu-west',
        '1704067200000000',
      ],
    })
    assert.deepEqual(
      nulls.partition,
      javaSpec.fields.map(() => null),
    )
    const merged = printed[1].entries.map((e: Printed) => [
      e.file_path.split('/').at(-1),
      e.status,
      e.snapshot_id,
      e.sequence_number,
      e.file_sequence_number,
    ])
    assert.deepEqual(merged, [
      ['5.parquet', 'DELETED', '3051729675574597004', '2', '3'],
      ['3.parquet', 'EXISTING', '3051729675574597002', '5', '5'],
      ['4.parquet', 'EXISTING', '3051729675574597002', '5', '5'],
    ])
  })
})

describe('Floe reads what Iceberg Java writes', { skip: !hasJava && needsJava }, () => {
  let list: ReturnType<typeof readManifestList>
  let manifestBytes: Uint8Array

  before(() => {
    const dir = join(work, 'java')
    mkdirSync(dir)
    java('WriteWithIcebergJava', [dir])
    list = readManifestList(readFileSync(join(dir, 'java-list.avro')))
    manifestBytes = readFileSync(join(dir, 'java-manifest.avro'))
  })

  test('a Java manifest list reads with its header and counts', () => {
    const { manifests, ...header } = list
    assert.deepEqual(header, {
      snapshotId: 3051729675574597004n,
      parentSnapshotId: 3051729675574597003n,
      sequenceNumber: 7n,
      formatVersion: 2,
    })
    const manifest = manifests[0] as ManifestFile
    assert.deepEqual(
      [manifest.sequenceNumber, manifest.minSequenceNumber, manifest.addedFilesCount, manifest.existingFilesCount],
      [7n, 5n, 1, 1],
    )
    assert.deepEqual(
      [manifest.deletedFilesCount, manifest.addedRowsCount, manifest.manifestLength],
      [1, 101n, BigInt(manifestBytes.length)],
    )
  })

  test('a Java manifest reads with every partition type, statistic and inherited number', () => {
    const read = readManifest(manifestBytes, { inheritFrom: list.manifests[0] })
    assert.deepEqual(
      read.partitionSpec.fields.map((f) => [f.name, f.transform, f['field-id']]),
      [
        ['ts_day', 'day', 1000],
        ['category', 'identity', 1001],
        ['id_bucket', 'bucket[16]', 1002],
        ['amount', 'identity', 1003],
        ['device', 'identity', 1004],
      ],
    )
    const [added, existing, deleted] = read.entries
    assert.deepEqual(added, {
      status: 1,
      snapshotId: 3051729675574597004n,
      sequenceNumber: 7n,
      fileSequenceNumber: 7n,
      dataFile: {
        content: 0,
        filePath: 'file:///warehouse/db/t/data/1.parquet',
        fileFormat: 'PARQUET',
        specId: 0,
        partition: {
          ts_day: 19_723,
          category: 'ünïcode ✓',
          id_bucket: 7,
          amount: -12_345n,
          device: Uint8Array.from(Buffer.from('123e4567e89b12d3a456426614174000', 'hex')),
        },
        recordCount: 101n,
        fileSizeInBytes: 4097n,
        columnSizes: new Map([
          [1, 123n],
          [2, 9_007_199_254_740_993n],
        ]),
        valueCounts: new Map([[1, 10n]]),
        nullValueCounts: new Map([[2, 0n]]),
        nanValueCounts: new Map(),
        lowerBounds: new Map([[1, Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0)]]),
        upperBounds: new Map([[3, Uint8Array.of(0x7a, 0x7a)]]),
        splitOffsets: [4n],
        sortOrderId: 0,
      },
    })
    assert.deepEqual(
      [existing?.status, existing?.snapshotId, existing?.sequenceNumber, existing?.fileSequenceNumber],
      [0, 3051729675574597002n, 5n, 6n],
    )
    assert.deepEqual([deleted?.status, deleted?.sequenceNumber, deleted?.dataFile.partition.amount], [2, 2n, 1n])
  })

  test("rewriting a Java manifest reproduces Java's counts and partition summaries", () => {
    const manifest = list.manifests[0] as ManifestFile
    const read = readManifest(manifestBytes)
    assert.ok(read.schema)
    const rewritten = mergeManifests({
      schema: read.schema,
      spec: read.partitionSpec,
      snapshotId: manifest.addedSnapshotId,
      serializeBound: serializeBoundForTests,
      manifests: [{ manifest, bytes: manifestBytes }],
    })
    assert.deepEqual(rewritten.summary.partitions, manifest.partitions)
    const { sequenceNumber, minSequenceNumber, ...counts } = rewritten.summary
    assert.deepEqual(
      { ...counts, partitions: null },
      {
        partitionSpecId: 0,
        content: 'data',
        addedSnapshotId: manifest.addedSnapshotId,
        addedFilesCount: 1,
        existingFilesCount: 1,
        deletedFilesCount: 1,
        addedRowsCount: 101n,
        existingRowsCount: 102n,
        deletedRowsCount: 103n,
        partitions: null,
        keyMetadata: null,
      },
    )
    assert.deepEqual([sequenceNumber, minSequenceNumber], [null, 5n])
  })
})
