import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { DatasetConfig } from '../shared/config/index.ts'
import { describeExpiry, parseMaintainArguments, runMaintain } from './maintain.ts'

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
