import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type ContentFile, DataFileContent } from '../manifests/index.ts'
import { planCompaction } from './compaction-plan.ts'

const MiB = 1024 * 1024
const policy = { targetFileSizeBytes: 128 * MiB, minInputFiles: 5 }
let serial = 0

function file(bytes: number, partition: Record<string, string> = {}, over: Partial<ContentFile> = {}): ContentFile {
  return {
    filePath: `s3://b/t/data/${++serial}.parquet`,
    fileFormat: 'PARQUET',
    specId: 0,
    partition,
    recordCount: BigInt(bytes / 1024),
    fileSizeInBytes: BigInt(bytes),
    ...over,
  }
}

test('a partition is rewritten once it has minInputFiles small files, in the order given', () => {
  const files = Array.from({ length: 5 }, () => file(MiB))
  const plan = planCompaction(files, policy)
  assert.equal(plan.groups.length, 1)
  assert.deepEqual(plan.groups[0]?.files, files)
  assert.equal(plan.groups[0]?.bytes, BigInt(5 * MiB))
  assert.equal(plan.groups[0]?.records, BigInt((5 * MiB) / 1024))
  assert.equal(planCompaction(files.slice(0, 4), policy).groups.length, 0)
  assert.equal(planCompaction(files.slice(0, 4), policy).smallFilesLeft, 4)
})

test('two small files that add up to a target-sized file qualify however few they are', () => {
  const plan = planCompaction([file(70 * MiB), file(70 * MiB)], policy)
  assert.equal(plan.groups.length, 1)
  assert.equal(planCompaction([file(90 * MiB)], policy).groups.length, 0)
})

test('files of three quarters of the target or more are left alone, and counted as live', () => {
  const big = file(96 * MiB)
  const small = Array.from({ length: 5 }, () => file(MiB))
  const plan = planCompaction([big, ...small], policy)
  assert.equal(plan.liveFiles, 6)
  assert.equal(plan.liveBytes, BigInt(101 * MiB))
  assert.ok(!plan.groups[0]?.files.includes(big))
})

test('partitions and specs are planned apart; delete files and other formats never', () => {
  const eu = Array.from({ length: 5 }, () => file(MiB, { region: 'eu' }))
  const us = Array.from({ length: 3 }, () => file(MiB, { region: 'us' }))
  const euOldSpec = Array.from({ length: 5 }, () => file(MiB, { region: 'eu' }, { specId: 1 }))
  const orc = Array.from({ length: 5 }, () => file(MiB, { region: 'us' }, { fileFormat: 'ORC' }))
  const deletes = Array.from({ length: 5 }, () =>
    file(MiB, { region: 'us' }, { content: DataFileContent.POSITION_DELETES }),
  )
  const plan = planCompaction([...eu, ...us, ...euOldSpec, ...orc, ...deletes], policy)
  assert.deepEqual(
    plan.groups.map((g) => [g.specId, g.partition, g.files.length]),
    [
      [0, { region: 'eu' }, 5],
      [1, { region: 'eu' }, 5],
    ],
  )
  assert.equal(plan.smallFilesLeft, 3)
  assert.equal(plan.liveFiles, 18)
})
