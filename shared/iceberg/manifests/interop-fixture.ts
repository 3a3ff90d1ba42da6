// Test support for the interoperability tests (pyiceberg and Iceberg Java): one snapshot's manifest
// list with a new manifest of every partition type and a merged manifest, written to a directory.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { PartitionSpec } from '../types.ts'
import {
  type ContentFile,
  ManifestEntryStatus,
  manifestFileOf,
  mergeManifests,
  type WrittenManifest,
  writeManifest,
  writeManifestList,
} from './index.ts'
import { dataFile, daySpec, fullStatisticsFile, serializeBoundForTests, tableSchema, widePartition } from './testing.ts'

export const snapshotId = 3051729675574597004n
export const parentSnapshotId = 3051729675574597003n
export const earlierSnapshotId = 3051729675574597002n

export function fullFile(spec: PartitionSpec): ContentFile {
  const partition = Object.fromEntries(spec.fields.map((f) => [f.name, widePartition[f.name] ?? null]))
  return {
    ...fullStatisticsFile(1, partition, spec['spec-id']),
    splitOffsets: [4n, 2_048n], // ascending and below the file size, else Java drops them
  }
}

/**
 * How both independent readers (pyiceberg, Iceberg Java) print the added entry of `spec`'s
 * manifest as JSON text: the fields and leading partition values they print alike. Each test adds
 * what its reader prints its own way.
 */
export function printedAddedEntry(spec: PartitionSpec) {
  return {
    snapshot_id: snapshotId.toString(),
    sequence_number: '7',
    file_sequence_number: '7',
    file_path: fullFile(spec).filePath,
    file_format: 'PARQUET',
    spec_id: '2',
    record_count: '101',
    column_sizes: { 1: '123', 2: '9007199254740993' },
    lower_bounds: { 1: { hex: '0100000000000000' } },
    split_offsets: ['4', '2048'],
  }
}

/** The first five partition values of `widePartition` as both readers print them. */
export const printedPartitionHead = ['19723', '473352', 'ünïcode ✓', '7', '-9223372036854775808']

export interface SnapshotFiles {
  uri(name: string): string
  listUri: string
  wide: WrittenManifest
  merged: WrittenManifest
}

/**
 * Snapshot `snapshotId` (sequence number 7): `wide.avro` adds a file with every value of `spec`
 * and one with only nulls; `merged.avro` holds this snapshot's delete of f5 and, as EXISTING, the
 * two files an earlier snapshot (sequence number 5) added.
 */
export function writeSnapshotFiles(dir: string, spec: PartitionSpec): SnapshotFiles {
  const uri = (name: string) => pathToFileURL(join(dir, name)).href
  const wide = writeManifest({
    schema: tableSchema,
    spec,
    formatVersion: 2,
    content: 'data',
    snapshotId,
    serializeBound: serializeBoundForTests,
    entries: [
      { status: ManifestEntryStatus.ADDED, dataFile: fullFile(spec) },
      {
        status: ManifestEntryStatus.ADDED,
        dataFile: dataFile(2, Object.fromEntries(spec.fields.map((f) => [f.name, null])), spec['spec-id']),
      },
    ],
  })
  const day = (n: number) => dataFile(n, { ts_day: 19_000 + n, category: `c${n}` })
  const write = (id: bigint, entries: Parameters<typeof writeManifest>[0]['entries']) =>
    writeManifest({
      schema: tableSchema,
      spec: daySpec,
      formatVersion: 2,
      content: 'data',
      snapshotId: id,
      serializeBound: serializeBoundForTests,
      entries,
    })
  const earlier = write(earlierSnapshotId, [
    { status: ManifestEntryStatus.ADDED, dataFile: day(3) },
    { status: ManifestEntryStatus.ADDED, dataFile: day(4) },
  ])
  const own = write(snapshotId, [
    { status: ManifestEntryStatus.DELETED, snapshotId, sequenceNumber: 2n, fileSequenceNumber: 3n, dataFile: day(5) },
  ])
  const merged = mergeManifests({
    schema: tableSchema,
    spec: daySpec,
    snapshotId,
    serializeBound: serializeBoundForTests,
    manifests: [
      { manifest: manifestFileOf(own, uri('own.avro')), bytes: own.bytes },
      {
        manifest: { ...manifestFileOf(earlier, uri('earlier.avro')), sequenceNumber: 5n, minSequenceNumber: 5n },
        bytes: earlier.bytes,
      },
    ],
  })
  writeFileSync(join(dir, 'wide.avro'), wide.bytes)
  writeFileSync(join(dir, 'merged.avro'), merged.bytes)
  const list = writeManifestList({
    snapshotId,
    parentSnapshotId,
    sequenceNumber: 7n,
    manifests: [manifestFileOf(wide, uri('wide.avro')), manifestFileOf(merged, uri('merged.avro'))],
  })
  writeFileSync(join(dir, 'snap.avro'), list)
  return { uri, listUri: uri('snap.avro'), wide, merged }
}
