import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { unreadByLayout } from './other-layout.ts'
import {
  activeFileName,
  encodeRotationManifest,
  partitionLogDirectory,
  readyFileName,
  rotationManifestName,
  sharedActiveName,
  sharedLogDirectory,
} from './wal/index.ts'

const dataset = 'events'
const topic = 'orders'

async function withWalDir(run: (walDir: string) => Promise<void>): Promise<void> {
  const walDir = await mkdtemp(join(tmpdir(), 'floe-other-layout-'))
  try {
    await run(walDir)
  } finally {
    await rm(walDir, { recursive: true, force: true })
  }
}

/** One ready rotation of the per-partition layout: a data file and its sidecar. */
async function readyRotation(walDir: string, partition: number, start: bigint, end: bigint, of = topic): Promise<void> {
  const dir = partitionLogDirectory(walDir, dataset, of, partition)
  await mkdir(dir, { recursive: true })
  const uuid = randomUUID()
  await writeFile(join(dir, readyFileName(of, partition, start, end, uuid, 'parquet')), 'PAR1')
  await writeFile(join(dir, readyFileName(of, partition, start, end, uuid, 'json')), '{}')
}

/** One rotation of the shared layout: its manifest names `files` data files and holds `ranges`. */
async function sharedRotation(
  walDir: string,
  sequence: bigint,
  files: number,
  ranges: { partition: number; start: bigint; end: bigint; topic?: string }[],
): Promise<void> {
  const dir = sharedLogDirectory(walDir, dataset)
  await mkdir(dir, { recursive: true })
  const id = randomUUID()
  const manifest = encodeRotationManifest({
    id,
    sequence,
    files: Array.from({ length: files }, () => randomUUID()),
    ranges: ranges.map((range) => ({ topic, ...range })),
  })
  await writeFile(join(dir, rotationManifestName(sequence, id)), manifest)
}

describe('files the other WAL layout left', () => {
  test('a shared-layout worker counts the per-partition ready files that hold rows past the table', async () => {
    await withWalDir(async (walDir) => {
      await readyRotation(walDir, 0, 0n, 100n) // behind the table: held
      await readyRotation(walDir, 0, 100n, 150n) // ahead
      await readyRotation(walDir, 1, 40n, 60n) // straddles the table's 50: some rows lacking
      await readyRotation(walDir, 2, 0n, 10n) // a partition the table never committed
      await readyRotation(walDir, 3, 0n, 10n, 'other-topic')
      const active = partitionLogDirectory(walDir, dataset, topic, 4)
      await mkdir(active, { recursive: true })
      // an open segment: neither layout reuses its rows
      await writeFile(join(active, activeFileName(topic, 4, randomUUID())), 'PAR1')
      const tableOffsets = new Map([
        [0, 100n],
        [1, 50n],
        [4, 0n],
      ])
      const unread = await unreadByLayout('shared', { walDir, dataset, topic, tableOffsets })
      assert.deepEqual(unread, { layout: 'partition', dir: join(walDir, dataset), files: 3, partitions: [0, 1, 2] })
    })
  })

  test('a per-partition worker counts the shared rotations with a range past the table', async () => {
    await withWalDir(async (walDir) => {
      await sharedRotation(walDir, 1n, 3, [
        { partition: 0, start: 0n, end: 100n },
        { partition: 1, start: 0n, end: 50n },
      ]) // every range held
      await sharedRotation(walDir, 2n, 2, [
        { partition: 0, start: 100n, end: 120n },
        { partition: 1, start: 50n, end: 70n },
      ])
      await sharedRotation(walDir, 3n, 1, [{ partition: 5, start: 0n, end: 9n }])
      await sharedRotation(walDir, 4n, 1, [{ partition: 6, start: 0n, end: 9n, topic: 'other-topic' }])
      await writeFile(join(sharedLogDirectory(walDir, dataset), sharedActiveName(randomUUID())), 'PAR1')
      const tableOffsets = new Map([
        [0, 100n],
        [1, 50n],
      ])
      const unread = await unreadByLayout('partition', { walDir, dataset, topic, tableOffsets })
      assert.deepEqual(unread, {
        layout: 'shared',
        dir: sharedLogDirectory(walDir, dataset),
        files: 3,
        partitions: [0, 1, 5],
      })
    })
  })

  test('nothing to say when the other layout left nothing the table lacks, or no folder at all', async () => {
    await withWalDir(async (walDir) => {
      const tableOffsets = new Map([[0, 100n]])
      assert.equal(await unreadByLayout('shared', { walDir, dataset, topic, tableOffsets }), undefined)
      assert.equal(await unreadByLayout('partition', { walDir, dataset, topic, tableOffsets }), undefined)
      await readyRotation(walDir, 0, 0n, 100n)
      await sharedRotation(walDir, 1n, 1, [{ partition: 0, start: 50n, end: 100n }])
      assert.equal(await unreadByLayout('shared', { walDir, dataset, topic, tableOffsets }), undefined)
      assert.equal(await unreadByLayout('partition', { walDir, dataset, topic, tableOffsets }), undefined)
    })
  })
})
