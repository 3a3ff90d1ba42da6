import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { parseTableIdentifier, type SqlCatalog } from '../shared/catalog/index.ts'
import type { MaintainRequest, MaintenanceReport } from '../shared/iceberg/maintenance/index.ts'
import { deferred, FloeError } from '../shared/index.ts'
import { markerSnapshots } from '../shared/progress/index.ts'
import { LocalFileStorage } from '../shared/storage/index.ts'
import { createMetrics } from '../shared/telemetry/index.ts'
import {
  MaintenanceRunner,
  type MaintenanceRunnerOptions,
  maintenanceFields,
  recordRunStart,
  tableMaintenance,
} from './maintenance-runner.ts'
import { lastRunProperty } from './maintenance-schedule.ts'
import { TableGauges } from './table-gauges.ts'
import { openTestCatalog } from './test-catalog.ts'

function report(over: { durationMs?: number } = {}): MaintenanceReport {
  return {
    compaction: {
      filesBefore: 12,
      bytesBefore: 12_000n,
      filesAfter: 2,
      bytesAfter: 11_500n,
      partitionsRewritten: 2,
      filesRewritten: 12,
      filesWritten: 2,
      skipped: [],
      snapshotId: 7n,
    },
    expiry: {
      snapshotsBefore: 9,
      snapshotsAfter: 2,
      expired: [1n, 2n, 3n, 4n, 5n, 6n, 8n],
      files: { manifestLists: ['a', 'b'], manifests: ['m'], dataFiles: ['d1', 'd2'], dataBytes: 2_000n },
      failedDeletes: 0,
      attempts: 1,
    },
    orphans: {
      location: 'file:///t',
      listed: 40,
      referenced: 30,
      orphans: [{ location: 'file:///t/data/x.parquet', size: 100, lastModified: 0 }],
      orphanBytes: 100,
      deleted: 1,
      failedDeletes: 0,
      young: 9,
    },
    durationMs: over.durationMs ?? 1_500,
  }
}

/** A runner on a clock the test moves, with a fake run and record, and its lines and counts. */
function harness(over: Partial<MaintenanceRunnerOptions> = {}) {
  const time = { now: 0 }
  const metrics = createMetrics({ defaultMetrics: false })
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = []
  const at = (level: string) => (fields: Record<string, unknown>, message: string) =>
    lines.push({ level, message, fields })
  const logger = { info: at('info'), warn: at('warn'), error: at('error') }
  const recorded: number[] = []
  const signals: AbortSignal[] = []
  let afterRuns = 0
  const runner = new MaintenanceRunner({
    dataset: 'events',
    intervalMs: 1_000,
    logger,
    metrics,
    now: () => time.now,
    record: async (startedAt) => {
      recorded.push(startedAt)
    },
    run: async (signal) => {
      signals.push(signal)
      return report()
    },
    afterRun: async () => {
      afterRuns++
    },
    ...over,
  })
  const outcomes = async () =>
    Object.fromEntries((await metrics.maintenanceRuns.get()).values.map((v) => [v.labels.outcome, v.value]))
  const durations = async () =>
    (await metrics.maintenanceSeconds.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0
  return { runner, time, lines, recorded, signals, outcomes, durations, afterRuns: () => afterRuns }
}

describe('the coordinator’s maintenance runs', () => {
  test('none at start: the first is due one interval after the coordinator started', async () => {
    const h = harness()
    h.runner.started()
    h.runner.tableRead({})
    assert.equal(h.runner.roundCompleted(), undefined)
    h.time.now = 999
    assert.equal(h.runner.roundCompleted(), undefined)
    h.time.now = 1_000
    assert.equal(await h.runner.roundCompleted(), 'ok')
    assert.deepEqual(h.recorded, [1_000], 'its start is recorded before it runs')
    assert.equal(h.signals.length, 1)
  })

  test('a later run is due one interval after the previous one ended', async () => {
    const h = harness({
      run: async () => {
        h.time.now += 400
        return report()
      },
    })
    h.runner.started()
    h.time.now = 1_000
    assert.equal(await h.runner.roundCompleted(), 'ok')
    h.time.now = 2_399
    assert.equal(h.runner.roundCompleted(), undefined)
    h.time.now = 2_400
    assert.equal(await h.runner.roundCompleted(), 'ok')
  })

  test('at most one run at a time, however many rounds complete meanwhile', async () => {
    const gate = deferred<MaintenanceReport>()
    let runs = 0
    const h = harness({
      run: () => {
        runs++
        return gate.promise
      },
    })
    h.runner.started()
    h.time.now = 1_000
    const first = h.runner.roundCompleted()
    assert.ok(first)
    for (const now of [2_000, 5_000, 50_000]) {
      h.time.now = now
      assert.equal(h.runner.roundCompleted(), undefined)
    }
    assert.equal(h.runner.running, true)
    gate.resolve(report())
    assert.equal(await first, 'ok')
    assert.equal(runs, 1)
    assert.equal(h.runner.running, false)
  })

  test('the table’s record of a recent run puts a restarted coordinator’s first run off, an old one does not', async () => {
    const h = harness()
    h.time.now = 10_000
    h.runner.started()
    h.runner.tableRead({ [lastRunProperty]: '9500' })
    assert.equal(h.runner.roundCompleted(), undefined)
    h.time.now = 10_499
    assert.equal(h.runner.roundCompleted(), undefined)
    h.time.now = 10_500
    assert.equal(await h.runner.roundCompleted(), 'ok')

    const old = harness()
    old.time.now = 10_000
    old.runner.started()
    old.runner.tableRead({ [lastRunProperty]: '2000' })
    assert.equal(await old.runner.roundCompleted(), 'ok')
  })

  test('stopping aborts the run in flight without waiting for it, and starts no other', async () => {
    const signals: AbortSignal[] = []
    const h = harness({
      run: (signal) => {
        signals.push(signal)
        return new Promise<MaintenanceReport>((_, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason), { once: true })
        })
      },
    })
    h.runner.started()
    h.time.now = 1_000
    const run = h.runner.roundCompleted()
    assert.ok(run)
    await new Promise((resolve) => setImmediate(resolve))
    h.runner.stop('partition 0 moved')
    assert.equal(signals[0]?.aborted, true, 'aborted at once, by stop itself')
    assert.equal(await run, 'aborted')
    assert.deepEqual(await h.outcomes(), { aborted: 1 })
    const line = h.lines.find((l) => l.message === 'maintenance run aborted')
    assert.equal(line?.fields['reason'], 'partition 0 moved')
    assert.equal(line?.level, 'info')
    assert.equal(h.afterRuns(), 0, 'a stopped coordinator reads no table for its gauges')
    h.time.now = 100_000
    assert.equal(h.runner.roundCompleted(), undefined, 'a stopped coordinator starts nothing')
  })

  test('a coordinator restarted while its aborted run settles starts no second one beside it', async () => {
    // A run that does not look at its signal (expiry deleting files) settles in its own time.
    const gate = deferred<MaintenanceReport>()
    let runs = 0
    const h = harness({
      run: () => {
        runs++
        return runs === 1 ? gate.promise : Promise.resolve(report())
      },
    })
    h.runner.started()
    h.time.now = 1_000
    const run = h.runner.roundCompleted()
    await new Promise((resolve) => setImmediate(resolve))
    h.runner.stop('stopped')
    h.runner.started()
    h.time.now = 10_000
    assert.equal(h.runner.roundCompleted(), undefined)
    gate.reject(new Error('aborted'))
    assert.equal(await run, 'aborted')
    assert.equal(runs, 1)
    h.time.now = 11_000
    assert.equal(await h.runner.roundCompleted(), 'ok', 'once it settled, the next is due an interval after its end')
    assert.equal(runs, 2)
  })

  test('a failed run is one error line with its code, counted, never thrown; the next is due an interval later', async () => {
    const h = harness({
      run: async () => {
        throw new FloeError('CATALOG_UNAVAILABLE', 'connection refused')
      },
    })
    h.runner.started()
    h.time.now = 1_000
    assert.equal(await h.runner.roundCompleted(), 'failed')
    const errors = h.lines.filter((l) => l.level === 'error')
    assert.equal(errors.length, 1)
    assert.equal(errors[0]?.message, 'maintenance run failed')
    assert.equal(errors[0]?.fields['code'], 'CATALOG_UNAVAILABLE')
    assert.equal(errors[0]?.fields['step'], 'run')
    assert.equal(errors[0]?.fields['dataset'], 'events')
    assert.deepEqual(await h.outcomes(), { failed: 1 })
    assert.equal(await h.durations(), 1)
    assert.equal(h.afterRuns(), 1)
    h.time.now = 1_999
    assert.equal(h.runner.roundCompleted(), undefined)
    h.time.now = 2_000
    assert.equal(await h.runner.roundCompleted(), 'failed')
  })

  test('an error outside the taxonomy is logged as INTERNAL_ERROR', async () => {
    const h = harness({
      run: async () => {
        throw new TypeError('undefined is not a function')
      },
    })
    h.runner.started()
    h.time.now = 1_000
    assert.equal(await h.runner.roundCompleted(), 'failed')
    assert.equal(h.lines.find((l) => l.level === 'error')?.fields['code'], 'INTERNAL_ERROR')
  })

  test('a run whose start cannot be recorded does not run', async () => {
    let runs = 0
    const h = harness({
      record: async () => {
        throw new FloeError('COMMIT_CONFLICT', 'lost three times')
      },
      run: async () => {
        runs++
        return report()
      },
    })
    h.runner.started()
    h.time.now = 1_000
    assert.equal(await h.runner.roundCompleted(), 'failed')
    assert.equal(runs, 0)
    const error = h.lines.find((l) => l.level === 'error')
    assert.deepEqual([error?.fields['step'], error?.fields['code']], ['record', 'COMMIT_CONFLICT'])
  })

  test('a finished run is one info line with what it did, its duration observed, the table read again', async () => {
    const h = harness()
    h.runner.started()
    h.time.now = 1_000
    assert.equal(await h.runner.roundCompleted(), 'ok')
    const done = h.lines.filter((l) => l.message === 'maintenance run finished')
    assert.equal(done.length, 1)
    assert.equal(done[0]?.level, 'info')
    assert.deepEqual(done[0]?.fields, maintenanceFields('events', report()))
    assert.deepEqual(await h.outcomes(), { ok: 1 })
    assert.equal(await h.durations(), 1)
    assert.equal(h.afterRuns(), 1)
  })
})

describe('the facts of a run', () => {
  test('are those floe maintain prints: compaction, expiry, orphans and the duration', () => {
    assert.deepEqual(maintenanceFields('events', report()), {
      dataset: 'events',
      durationMs: 1_500,
      compaction: {
        filesBefore: 12,
        filesAfter: 2,
        bytesBefore: '12000',
        bytesAfter: '11500',
        partitionsRewritten: 2,
        filesRewritten: 12,
        filesWritten: 2,
        skipped: [],
      },
      expiry: {
        snapshotsBefore: 9,
        snapshotsAfter: 2,
        expired: 7,
        deletedManifestLists: 2,
        deletedManifests: 1,
        deletedDataFiles: 2,
        deletedDataBytes: '2000',
        failedDeletes: 0,
      },
      orphans: { listed: 40, referenced: 30, young: 9, found: 1, bytes: 100, deleted: 1, failedDeletes: 0 },
    })
  })
})

describe('maintenance on a real table (the embedded SQL catalog)', () => {
  const table = parseTableIdentifier('maint.events')
  const policy = {
    compaction: { targetFileSizeBytes: 1024, minInputFiles: 2 },
    retention: { maxSnapshotAgeMs: 1, minSnapshotsToKeep: 1 },
    orphanAgeMs: 1,
  }
  /** What every runner of these tests maintains, and how often. */
  const target = () => ({ dataset: 'events', catalog, storage, table, intervalMs: 1_000, policy })
  const storage = new LocalFileStorage()
  let dir: string
  let catalog: SqlCatalog
  before(async () => {
    ;({ dir, catalog } = await openTestCatalog('floe-maintenance-runner-', table, storage))
  })
  after(async () => {
    await catalog.close()
    await rm(dir, { recursive: true, force: true })
  })

  test("a run's start is a table property, the table's other properties and snapshots untouched", async () => {
    const before = (await catalog.loadTable(table)).metadata
    await recordRunStart(catalog, table, 1_764_600_000_000)
    const after = (await catalog.loadTable(table)).metadata
    assert.equal(after.properties[lastRunProperty], '1764600000000')
    assert.deepEqual(
      { ...after.properties, [lastRunProperty]: undefined },
      { ...before.properties, [lastRunProperty]: undefined },
    )
    assert.deepEqual(after.snapshots, before.snapshots)
    assert.equal(after['table-uuid'], before['table-uuid'])
  })

  test('the runner calls maintainTable keeping the marker snapshots, with its signal, in an emptied work directory', async () => {
    const workDirectory = join(dir, 'wal', 'events', 'maintenance')
    const leftover = join(workDirectory, 'floe-compaction-dead', 'part.parquet')
    await mkdir(join(workDirectory, 'floe-compaction-dead'), { recursive: true })
    await writeFile(leftover, 'a file its dead worker left')
    const metrics = createMetrics({ defaultMetrics: false })
    const requests: MaintainRequest[] = []
    let now = 5_000
    const runner = tableMaintenance({
      ...target(),
      workDirectory,
      companionsOf: (location) => [`${location}.bloom`],
      gauges: new TableGauges(metrics, 'events'),
      logger: { info: () => {}, warn: () => {}, error: () => {} },
      metrics,
      now: () => now,
      maintain: async (request) => {
        requests.push(request)
        assert.equal(existsSync(leftover), false, 'what a dead run left is gone first')
        return report()
      },
    })
    runner.started()
    now = 6_000
    assert.equal(await runner.roundCompleted(), 'ok')
    const request = requests[0]
    assert.ok(request)
    assert.equal(request.keep, markerSnapshots)
    assert.equal(request.workDirectory, workDirectory)
    assert.equal(request.signal?.aborted, false)
    assert.deepEqual(request.companionsOf?.('file:///d/a.parquet'), ['file:///d/a.parquet.bloom'])
    assert.equal((await catalog.loadTable(table)).metadata.properties[lastRunProperty], '6000')
    const files = (await metrics.tableDataFiles.get()).values
    assert.deepEqual(
      files.map((v) => [v.labels.dataset, v.value]),
      [['events', 0]],
      'the gauges read the table after the run (no snapshot yet: no files)',
    )
  })

  test("a routed dataset's run maintains the ledger, then every routed table; one failing fails the run once all are done", async () => {
    const metrics = createMetrics({ defaultMetrics: false })
    const maintained: string[] = []
    const lines: { level: string; fields: Record<string, unknown>; message: string }[] = []
    const line = (level: string) => (fields: Record<string, unknown>, message: string) =>
      lines.push({ level, fields, message })
    let now = 5_000
    let failing: string | undefined
    const runner = tableMaintenance({
      ...target(),
      gauges: new TableGauges(metrics, 'events'),
      logger: { info: line('info'), warn: line('warn'), error: line('error') },
      metrics,
      now: () => now,
      routedTables: async () =>
        ['analytics.events_a', 'analytics.events_b', 'analytics.events_c'].map(parseTableIdentifier),
      maintain: async (request) => {
        const name = [...request.table.namespace, request.table.name].join('.')
        maintained.push(name)
        if (name === failing) throw new FloeError('CATALOG_UNAVAILABLE', 'the catalog did not answer')
        return report({ durationMs: 100 })
      },
    })
    runner.started()
    now = 6_000
    assert.equal(await runner.roundCompleted(), 'ok')
    assert.deepEqual(maintained, ['maint.events', 'analytics.events_a', 'analytics.events_b', 'analytics.events_c'])
    const finished = lines.find((l) => l.message === 'maintenance run finished')
    assert.ok(finished)
    assert.equal(finished.fields.tables, 4)
    assert.equal((finished.fields.compaction as { filesRewritten: number }).filesRewritten, 48, 'four tables added up')
    assert.equal(finished.fields.durationMs, 400)

    maintained.length = 0
    failing = 'analytics.events_b'
    now = 8_000
    assert.equal(await runner.roundCompleted(), 'failed')
    assert.deepEqual(maintained, ['maint.events', 'analytics.events_a', 'analytics.events_b', 'analytics.events_c'])
    const warned = lines.find((l) => l.message === 'maintenance of a routed table failed')
    assert.deepEqual(warned?.fields, {
      dataset: 'events',
      table: 'analytics.events_b',
      code: 'CATALOG_UNAVAILABLE',
      error: 'the catalog did not answer',
    })
    const failed = lines.find((l) => l.message === 'maintenance run failed')
    assert.equal(failed?.fields.code, 'CATALOG_UNAVAILABLE')
    assert.match(
      String(failed?.fields.error),
      /1 of 3 routed tables \(the first, analytics\.events_b: the catalog did not answer\)/,
    )
  })
})
