import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseTableIdentifier } from '../../catalog/index.ts'
import { FloeError } from '../../errors.ts'
import type { MaintainRequest, MaintenanceReport } from './maintain.ts'
import { maintainTables, sumReports } from './several.ts'

function report(n: number, skipped: { partition: string; reason: string }[] = []): MaintenanceReport {
  return {
    compaction: {
      filesBefore: 10 * n,
      bytesBefore: BigInt(1000 * n),
      filesAfter: n,
      bytesAfter: BigInt(900 * n),
      partitionsRewritten: n,
      filesRewritten: 9 * n,
      filesWritten: n,
      skipped,
      snapshotId: BigInt(n),
    },
    expiry: {
      snapshotsBefore: 5 * n,
      snapshotsAfter: 1,
      expired: [BigInt(n)],
      files: { manifestLists: [`l${n}`], manifests: [`m${n}`], dataFiles: [`d${n}`], dataBytes: BigInt(n) },
      failedDeletes: 0,
      attempts: 1,
    },
    orphans: {
      location: `file:///t${n}`,
      listed: n,
      referenced: n,
      orphans: [],
      orphanBytes: 0,
      deleted: 0,
      failedDeletes: 0,
      young: 0,
    },
    durationMs: 10 * n,
  }
}

const tables = ['ns.a', 'ns.b', 'ns.c'].map(parseTableIdentifier)
const policy = {
  compaction: { targetFileSizeBytes: 1, minInputFiles: 2 },
  retention: { maxSnapshotAgeMs: 1, minSnapshotsToKeep: 1 },
  orphanAgeMs: 1,
}
const request = { catalog: undefined as never, storage: undefined as never, policy }

describe('maintenance of several tables', () => {
  test('adds the reports up; one table is reported as it was', () => {
    const sum = sumReports([report(1), report(2)])
    assert.equal(sum.compaction.filesBefore, 30)
    assert.equal(sum.compaction.bytesAfter, 2700n)
    assert.equal(sum.compaction.snapshotId, undefined)
    assert.deepEqual(sum.expiry.expired, [1n, 2n])
    assert.deepEqual(sum.expiry.files.dataFiles, ['d1', 'd2'])
    assert.equal(sum.expiry.files.dataBytes, 3n)
    assert.equal(sum.expiry.snapshotsAfter, 2)
    assert.equal(sum.orphans.listed, 3)
    assert.equal(sum.orphans.location, '')
    assert.equal(sum.durationMs, 30)
    assert.deepEqual(sumReports([report(4)]).compaction, report(4).compaction)
    assert.equal(sumReports([report(4)]).orphans.location, 'file:///t4')
  })

  test('goes on past a failed table, names it, and names skipped partitions with their table', async () => {
    const seen: string[] = []
    const finished: string[] = []
    const result = await maintainTables(request, tables, {
      maintain: async (one: MaintainRequest) => {
        seen.push(one.table.name)
        if (one.table.name === 'b') throw new FloeError('COMMIT_CONFLICT', 'lost three races')
        return report(1, [{ partition: 'day=2026-12-01', reason: 'lost a race' }])
      },
      onTable: (table, one) => finished.push(`${table.name} ${one.compaction.filesRewritten}`),
    })
    assert.deepEqual(seen, ['a', 'b', 'c'])
    assert.deepEqual(finished, ['a 9', 'c 9'])
    assert.equal(result.tables, 3)
    assert.deepEqual(
      result.failed.map(({ table }) => table.name),
      ['b'],
    )
    assert.equal(result.report.compaction.filesRewritten, 18)
    assert.deepEqual(
      result.report.compaction.skipped.map(({ partition }) => partition),
      ['ns.a: day=2026-12-01', 'ns.c: day=2026-12-01'],
    )
  })

  test('an abort stops the run between tables and inside one, and is not a failed table', async () => {
    const controller = new AbortController()
    const seen: string[] = []
    await assert.rejects(
      maintainTables({ ...request, signal: controller.signal }, tables, {
        maintain: async (one: MaintainRequest) => {
          seen.push(one.table.name)
          controller.abort()
          throw new Error('aborted inside')
        },
      }),
      /aborted inside/,
    )
    assert.deepEqual(seen, ['a'])
  })
})
