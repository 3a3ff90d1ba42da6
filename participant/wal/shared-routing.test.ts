// A routed shared WAL: rows carry their table, segments are one per (table, Iceberg partition),
// and every cut claims, per table, the positions of each partition that wrote rows of it.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, test } from 'node:test'
import type { StructValue } from '../../shared/iceberg/index.ts'
import { isFloeError } from '../../shared/index.ts'
import { decodeRotationManifest, decodeSharedSidecar } from './rotation-manifest.ts'
import { partitionKey } from './rotation-walk.ts'
import { SharedLog, type SharedLogOptions } from './shared-log.ts'
import { claimsOf, daysAndCountries, eventSchema, events, SettableClock, temporaryDirectory } from './test-support.ts'

const topic = 'orders'

/** A routed log over a live list of table names, as RouteTables.names hands them out. */
function routedLog(dir: string, names: string[], options: Partial<SharedLogOptions> = {}): SharedLog {
  return new SharedLog({
    dir,
    topic,
    schema: eventSchema,
    spec: daysAndCountries,
    clock: new SettableClock(),
    route: { names, maxOpenTables: 100 },
    ...options,
  })
}

/** Each row's table from its event id (pairs of ids, which test-support puts in two days), so a file's rows say their table. */
const tablesOf = (rows: readonly StructValue[], tables: number) =>
  rows.map((row) => Number(((row['event_id'] as bigint) / 2n) % BigInt(tables)))

const invariantBroken = (error: unknown) => isFloeError(error) && error.code === 'INVARIANT_BROKEN'

describe('a routed shared WAL', () => {
  test('mixed tables and partitions make one segment per (table, Iceberg partition) and claims per (table, partition)', async (t) => {
    const dir = await temporaryDirectory(t)
    const names = ['ns.events_a', 'ns.events_b', 'ns.events_c']
    const log = routedLog(dir, names)
    log.read(1, 100n)
    log.read(2, 500n)
    log.read(3, 900n)
    const first = events(0, 12, 2, 1) // two days, one country: two Iceberg partitions
    await log.append(1, first, 112n, tablesOf(first, 2)) // tables a and b
    const second = events(12, 6, 2, 1)
    await log.append(
      2,
      second,
      506n,
      second.map(() => 2),
    ) // table c only
    await log.append(3, [], 905n, []) // every record dead-lettered: a range, no claim
    assert.equal(log.openSegmentCount, 6)
    assert.equal(log.openTableCount, 3)
    const rotation = await log.cut('commit')
    assert.ok(rotation)
    assert.deepEqual(
      rotation.ranges.map((range) => [range.partition, range.start, range.end]),
      [
        [1, 100n, 112n],
        [2, 500n, 506n],
        [3, 900n, 905n],
      ],
    )
    assert.deepEqual(claimsOf(rotation), [
      ['ns.events_a', 1, 100n, 112n],
      ['ns.events_b', 1, 100n, 112n],
      ['ns.events_c', 2, 500n, 506n],
    ])
    const byTable = new Map<string, bigint>()
    for (const segment of rotation.segments) {
      assert.ok(segment.table)
      byTable.set(segment.table, (byTable.get(segment.table) ?? 0n) + segment.dataFile.recordCount)
    }
    assert.equal(rotation.segments.length, 6, 'two days for each of three tables')
    assert.deepEqual(
      byTable,
      new Map([
        ['ns.events_a', 6n],
        ['ns.events_b', 6n],
        ['ns.events_c', 6n],
      ]),
    )
    const manifest = decodeRotationManifest(await readFile(rotation.manifestPath, 'utf8'))
    assert.deepEqual(manifest.tables, rotation.tables)
    for (const segment of rotation.segments) {
      const { segment: sidecar } = decodeSharedSidecar(await readFile(segment.jsonPath, 'utf8'))
      assert.equal(sidecar.table, segment.table)
    }
    await log.close()
  })

  test('a partition that wrote no rows of a table since the last cut gives that table no claim', async (t) => {
    const names = ['ns.a', 'ns.b']
    const log = routedLog(await temporaryDirectory(t), names)
    log.read(1, 0n)
    log.read(2, 0n)
    await log.append(1, events(0, 3), 3n, [0, 1, 0])
    await log.append(2, events(3, 2), 2n, [1, 1])
    assert.deepEqual(claimsOf(await log.cut('commit')), [
      ['ns.a', 1, 0n, 3n],
      ['ns.b', 1, 0n, 3n],
      ['ns.b', 2, 0n, 2n],
    ])
    await log.append(1, events(5, 2), 5n, [1, 1])
    await log.append(2, [], 4n)
    const next = await log.cut('commit')
    assert.deepEqual(
      next?.ranges.map((range) => [range.partition, range.start, range.end]),
      [
        [1, 3n, 5n],
        [2, 2n, 4n],
      ],
    )
    assert.deepEqual(claimsOf(next), [['ns.b', 1, 3n, 5n]], 'table a wrote nothing: no claim of it')
    await log.append(2, [], 6n)
    const empty = await log.cut('age')
    assert.deepEqual(empty?.tables, [], 'a routed rotation without rows claims no table')
    assert.equal(empty?.segments.length, 0)
    await log.close()
  })

  test('skip floors raise a claim start until the partition is positioned again', async (t) => {
    const log = routedLog(await temporaryDirectory(t), ['ns.a', 'ns.b'])
    // table a holds partition 1 up to 105 already: the decoder skips its records below
    log.read(1, 100n, new Map([['ns.a', 105n]]))
    const rows = events(0, 10)
    const tables = [1, 1, 1, 1, 1, 0, 0, 1, 0, 0] // offsets 100..109, table a only from 105 on
    await log.append(1, rows, 110n, tables)
    assert.deepEqual(claimsOf(await log.cut('commit')), [
      ['ns.a', 1, 105n, 110n],
      ['ns.b', 1, 100n, 110n],
    ])
    await log.append(1, events(10, 2), 112n, [0, 0])
    assert.deepEqual(claimsOf(await log.cut('commit')), [['ns.a', 1, 110n, 112n]], 'a floor behind the range')
    // a floor past the next range while the table writes nothing there: no claim, no complaint
    log.read(1, 112n, new Map([['ns.a', 200n]]))
    await log.append(1, events(12, 2), 114n, [1, 1])
    assert.deepEqual(claimsOf(await log.cut('commit')), [['ns.b', 1, 112n, 114n]])
    await log.close()
  })

  test('a walk gives the partitions it moves their new floors and keeps the floors of the others', async (t) => {
    const log = routedLog(await temporaryDirectory(t), ['ns.a', 'ns.b'])
    log.read(1, 0n, new Map([['ns.a', 30n]]))
    log.read(2, 0n)
    await log.append(2, events(0, 10), 10n, new Array(10).fill(1))
    const rejected = await log.cut('commit')
    const walked = await log.walk({
      from: new Map([
        [partitionKey(topic, 1), 0n],
        [partitionKey(topic, 2), 0n],
      ]),
      assigned: [1, 2],
      rejected: new Set([rejected?.id as string]),
      floors: new Map([[partitionKey(topic, 2), new Map([['ns.b', 4n]])]]),
      reason: 'resync',
    })
    assert.deepEqual(walked.rewound, [2])
    await log.append(1, events(30, 10), 40n, new Array(10).fill(0))
    await log.append(2, events(4, 6), 10n, new Array(6).fill(1))
    assert.deepEqual(claimsOf(await log.cut('commit')), [
      ['ns.a', 1, 30n, 40n],
      ['ns.b', 2, 4n, 10n],
    ])
    await log.close()
  })

  test('rows of a table below its floor in a cut break an invariant: the log fails and discarding reads them again', async (t) => {
    const log = routedLog(await temporaryDirectory(t), ['ns.a'])
    log.read(1, 0n, new Map([['ns.a', 50n]]))
    await log.append(1, events(0, 10), 10n, new Array(10).fill(0)) // the decoder should have skipped them
    await assert.rejects(log.cut('commit'), invariantBroken)
    assert.equal(log.state, 'failed')
    assert.deepEqual(await log.discardOpen(), new Map([[1, 0n]]))
    assert.equal(log.state, 'open')
    await log.append(1, [], 10n)
    const rotation = await log.cut('commit')
    assert.deepEqual(rotation?.tables, [], 'the discarded rows are claimed by no table')
    await log.close()
  })

  test('a routed log refuses rows without tables, and an unrouted one refuses tables and floors', async (t) => {
    const routed = routedLog(await temporaryDirectory(t), ['ns.a'])
    routed.read(1, 0n)
    await assert.rejects(routed.append(1, events(0, 2), 2n), invariantBroken)
    await assert.rejects(routed.append(1, events(0, 2), 2n, [0]), invariantBroken, 'one table per row')
    await assert.rejects(routed.append(1, events(0, 2), 2n, [0, 1]), invariantBroken, 'a number not handed out')
    await assert.rejects(
      routed.appendFetched([{ partition: 1, from: 0n, rows: events(0, 2), next: 2n }]),
      invariantBroken,
    )
    assert.equal(routed.state, 'open', 'a refused batch writes nothing')
    assert.equal(routed.openSegmentCount, 0)
    assert.equal(routed.hasUncut(1), false)
    const batch = { partition: 1, from: 0n, rows: events(0, 2), next: 2n, tables: [0, 0] }
    assert.deepEqual(await routed.appendFetched([batch]), [true])
    assert.deepEqual(claimsOf(await routed.cut('commit')), [['ns.a', 1, 0n, 2n]])
    await routed.close()

    const unrouted = new SharedLog({
      dir: await temporaryDirectory(t),
      topic,
      schema: eventSchema,
      spec: daysAndCountries,
    })
    unrouted.read(1, 0n)
    await assert.rejects(unrouted.append(1, events(0, 2), 2n, [0, 0]), invariantBroken)
    assert.throws(() => unrouted.read(2, 0n, new Map([['ns.a', 1n]])), invariantBroken)
    await assert.rejects(
      unrouted.walk({
        from: new Map([[partitionKey(topic, 1), 0n]]),
        assigned: [1],
        floors: new Map([[partitionKey(topic, 1), new Map([['ns.a', 1n]])]]),
        reason: 'resync',
      }),
      invariantBroken,
    )
    await unrouted.append(1, events(0, 2), 2n)
    const rotation = await unrouted.cut('commit')
    assert.ok(rotation && !('tables' in rotation), 'an unrouted rotation has no tables')
    assert.ok(rotation.segments.every((segment) => !('table' in segment)))
    await unrouted.close()
    assert.throws(
      () => routedLog('/never-made', [], { route: { names: [], maxOpenTables: 0 } }),
      (error: unknown) => isFloeError(error) && error.code === 'CONFIG_INVALID',
    )
  })
})
