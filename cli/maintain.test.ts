import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, test } from 'node:test'
import { parseTableIdentifier, SqlCatalog } from '../shared/catalog/index.ts'
import type { DatasetConfig } from '../shared/config/index.ts'
import { appendFiles } from '../shared/iceberg/commit/index.ts'
import type { OrphanResult } from '../shared/iceberg/maintenance/index.ts'
import { LocalFileStorage, localPath } from '../shared/storage/index.ts'
import { describeExpiry, describeOrphans, parseMaintainArguments, runMaintain } from './maintain.ts'
import { writeSqlConfig } from './test-config.ts'

const dataset = { name: 'events', table: 'db.events' } as DatasetConfig

function expiry(expired: number, over: { failedDeletes?: number; dataFiles?: string[] } = {}) {
  return {
    snapshotsBefore: 10,
    snapshotsAfter: 10 - expired,
    expired: Array.from({ length: expired }, (_, i) => BigInt(i + 1)),
    files: {
      manifestLists: Array.from({ length: expired }, (_, i) => `s3://b/m/snap-${i}.avro`),
      manifests: ['s3://b/m/a.avro'],
      dataFiles: over.dataFiles ?? [],
      dataBytes: BigInt((over.dataFiles ?? []).length * 1000),
    },
    failedDeletes: over.failedDeletes ?? 0,
    attempts: 1,
  }
}

describe('floe maintain: the command line', () => {
  test('takes the config, one dataset and --dry-run', () => {
    assert.deepEqual(parseMaintainArguments(['maintain', '-c', 'f.yaml', '--dataset', 'events', '--dry-run']), {
      configPath: 'f.yaml',
      dataset: 'events',
      dryRun: true,
    })
    assert.deepEqual(parseMaintainArguments(['maintain', '--config', 'f.yaml']), {
      configPath: 'f.yaml',
      dataset: undefined,
      dryRun: false,
    })
  })

  test('refuses an unknown option and a stray argument, since it deletes files', () => {
    const unknown = parseMaintainArguments(['maintain', '--dryrun'])
    assert.ok('error' in unknown && /--dryrun/.test(unknown.error), JSON.stringify(unknown))
    const stray = parseMaintainArguments(['maintain', 'events'])
    assert.deepEqual(stray, { error: "unexpected argument 'events'" })
  })

  test('bad arguments: one line naming the problem, the usage, exit 2', async () => {
    let stderr = ''
    const code = await runMaintain(parseMaintainArguments(['maintain', '--everything']), {
      stdout: { write: () => true },
      stderr: { write: (text: string) => (stderr += text) },
    })
    assert.equal(code, 2)
    assert.match(stderr, /^floe maintain: .*--everything.*\nusage: floe maintain --config FILE/)
  })
})

describe('floe maintain: what it prints', () => {
  test('a run names the snapshots before and after and every kind of file deleted', () => {
    assert.equal(
      describeExpiry(dataset, expiry(8, { dataFiles: ['a', 'b'] }), false),
      'dataset events (table db.events): expired 8 snapshot(s), 10 -> 2; deleted 8 manifest list(s), 1 manifest(s), 2 data file(s) of 2000 bytes',
    )
  })

  test('a dry run says what it would do; failed deletions are named as orphans', () => {
    assert.match(
      describeExpiry(dataset, expiry(3), true),
      /dry run: would expire 3 of 10 snapshot\(s\) and delete 3 manifest list/,
    )
    assert.match(
      describeExpiry(dataset, expiry(3, { failedDeletes: 2 }), false),
      /; 2 deletion\(s\) failed \(orphans, never read\)$/,
    )
  })

  test('nothing to expire is one short line', () => {
    assert.equal(
      describeExpiry(dataset, expiry(0), false),
      'dataset events (table db.events): 10 snapshot(s), none to expire',
    )
  })
})

function orphans(found: number, over: Partial<OrphanResult> = {}): OrphanResult {
  const list = Array.from({ length: found }, (_, i) => ({
    location: `s3://b/t/data/${i}.parquet`,
    size: 100,
    lastModified: 0,
  }))
  return {
    location: 's3://b/t',
    listed: 120,
    referenced: 115,
    orphans: list,
    orphanBytes: found * 100,
    deleted: found,
    failedDeletes: 0,
    young: 2,
    ...over,
  }
}

describe('floe maintain: the orphans line', () => {
  test('names the files and bytes deleted, and what was listed, referenced and kept for being young', () => {
    assert.equal(
      describeOrphans(dataset, orphans(3), false, 72),
      'dataset events (table db.events): orphans: 3 file(s) of 300 bytes deleted (of 120 listed, 115 referenced, 2 younger than 72 h kept)',
    )
  })

  test('a dry run says what it would delete; failed deletions are counted; none is one short line', () => {
    assert.equal(
      describeOrphans(dataset, orphans(3, { deleted: 0 }), true, 72),
      'dataset events (table db.events): orphans: dry run: would delete 3 file(s) of 300 bytes (of 120 listed, 115 referenced, 2 younger than 72 h kept)',
    )
    assert.match(
      describeOrphans(dataset, orphans(3, { deleted: 2, failedDeletes: 1 }), false, 72),
      /orphans: 2 of 3 file\(s\) of 300 bytes deleted \(.*\); 1 deletion\(s\) failed, tried again on the next run$/,
    )
    assert.equal(
      describeOrphans(dataset, orphans(0, { young: 0 }), false, 0.5),
      'dataset events (table db.events): orphans: none to delete (of 120 listed, 115 referenced, 0 younger than 0.5 h kept)',
    )
  })

  test('a run on a SQL catalog deletes an old orphan and keeps the table’s files and its data file’s sidecar', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'floe-maintain-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    const storage = new LocalFileStorage()
    const catalog = await SqlCatalog.open({
      path: join(dir, 'catalog.db'),
      name: 'floe',
      warehouse: `file://${dir}/warehouse`,
      storage,
    })
    const table = parseTableIdentifier('db.events')
    await catalog.createNamespace(['db'])
    const { metadata } = await catalog.createTable(
      table,
      { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'string' }] },
      { fields: [] },
    )
    const put = async (location: string) => {
      await mkdir(dirname(localPath(location)), { recursive: true })
      await writeFile(localPath(location), 'rows')
      return location
    }
    const data = await put(`${metadata.location}/data/a.parquet`)
    await appendFiles({
      catalog,
      storage,
      table,
      commitId: 'c1',
      commitIdKey: 'test.commit-id',
      content: () => ({
        files: [
          { filePath: data, fileFormat: 'PARQUET', specId: 0, partition: {}, recordCount: 1n, fileSizeInBytes: 4n },
        ],
      }),
    })
    await catalog.close()
    const sidecar = await put(`${data}.bloom`)
    const orphan = await put(`${metadata.location}/data/never-committed.parquet`)
    const root = localPath(metadata.location)
    const files = (await readdir(root, { recursive: true, withFileTypes: true })).filter((e) => e.isFile())
    const tenDaysAgo = new Date(Date.now() - 10 * 86_400_000)
    for (const file of files) await utimes(join(file.parentPath, file.name), tenDaysAgo, tenDaysAgo)
    const config = await writeSqlConfig(
      dir,
      '  - {name: events, topic: events, table: db.events, customMapping: {id: id}, schema: {id: string}, badRecords: skip}\n',
    )
    let stdout = ''
    let stderr = ''
    const io = { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } }
    const dry = await runMaintain(parseMaintainArguments(['maintain', '--config', config, '--dry-run']), io)
    assert.equal(dry, 0, stderr)
    assert.match(stdout, /orphans: dry run: would delete 1 file\(s\) of 4 bytes \(of \d+ listed/)
    assert.ok(existsSync(localPath(orphan)), 'the dry run deleted nothing')
    stdout = ''
    const code = await runMaintain(parseMaintainArguments(['maintain', '--config', config]), io)
    assert.equal(code, 0, stderr)
    const lines = stdout.trim().split('\n')
    assert.equal(lines.length, 3, 'compaction, expiry and orphans, one line each')
    assert.match(
      lines[2]!,
      new RegExp(
        `^dataset events \\(table db.events\\): orphans: 1 file\\(s\\) of 4 bytes deleted \\(of ${files.length} listed, ${files.length - 1} referenced, 0 younger than 72 h kept\\)$`,
      ),
    )
    assert.ok(!existsSync(localPath(orphan)), 'the old orphan is deleted')
    for (const file of files) {
      const path = join(file.parentPath, file.name)
      if (path !== localPath(orphan)) assert.ok(existsSync(path), `${path} stays`)
    }
    assert.ok(existsSync(localPath(sidecar)), 'the referenced data file’s sidecar stays')
  })
})
