// A routed shared WAL at its route's maxOpenTables: a table about to open closes the least recently
// used tables' segments early, and they wait for the cut, which takes them with the open ones
// under unchanged claims; a batch naming more tables than fit writes each table's rows into one file;
// evicted files count toward the age trigger and, past the open segments' limit, make the cut
// due; a discarded or crashed log keeps none of them.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { describe, test } from 'node:test'
import { parquetMetadata } from 'hyparquet'
import type { StructValue } from '../../shared/iceberg/index.ts'
import { openDataFileReader } from '../../shared/parquet/index.ts'
import { decodeRotationManifest, decodeSharedSidecar, type SharedRotation } from './rotation-manifest.ts'
import { SharedLog, type SharedLogOptions } from './shared-log.ts'
import { recoverSharedLog } from './shared-recovery.ts'
import { claimsOf, daysAndCountries, eventSchema, events, SettableClock, temporaryDirectory } from './test-support.ts'

const topic = 'orders'

interface Evicting {
  log: SharedLog
  names: string[]
  clock: SettableClock
  /** What each onEvict call said. */
  evictions: number[]
}

function evictingLog(dir: string, maxOpenTables: number, options: Partial<SharedLogOptions> = {}): Evicting {
  const names = ['ns.a', 'ns.b', 'ns.c', 'ns.d']
  const clock = new SettableClock()
  const evictions: number[] = []
  const log = new SharedLog({
    dir,
    topic,
    schema: eventSchema,
    spec: daysAndCountries,
    clock,
    route: { names, maxOpenTables },
    onEvict: (tables) => evictions.push(tables),
    ...options,
  })
  return { log, names, clock, evictions }
}

/** `count` events from `from`, all of one table, in one day and country (one Iceberg partition). */
const rowsOf = (from: number, count: number) => events(from, count, 1, 1)
const all = (table: number, rows: readonly StructValue[]) => rows.map(() => table)

/** A rotation's files' tables with their row counts, sorted. */
const filesOf = (rotation: SharedRotation | undefined) =>
  (rotation?.segments ?? []).map((segment) => [segment.table, Number(segment.dataFile.recordCount)]).sort()

async function footerOf(path: string): Promise<Map<string, string | undefined>> {
  const bytes = await readFile(path)
  const footer = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
  return new Map(footer.key_value_metadata?.map(({ key, value }) => [key, value]))
}

describe('a routed shared WAL evicting tables', () => {
  test('the least recently used table is closed early and its file joins the cut, claims unchanged', async (t) => {
    const dir = await temporaryDirectory(t)
    const { log, evictions } = evictingLog(dir, 2)
    log.read(1, 0n)
    log.read(2, 100n)
    await log.append(1, rowsOf(0, 3), 3n, all(0, rowsOf(0, 3))) // a
    await log.append(1, rowsOf(3, 2), 5n, all(1, rowsOf(3, 2))) // b
    await log.append(1, rowsOf(5, 1), 6n, all(0, rowsOf(5, 1))) // a again: b is the least recent
    assert.deepEqual(evictions, [])
    await log.append(2, rowsOf(6, 4), 104n, all(2, rowsOf(6, 4))) // c: b makes room
    assert.deepEqual(evictions, [1])
    assert.equal(log.openTableCount, 2)
    assert.equal(log.evictedSegmentCount, 1, "b's one file waits for the cut")
    // b comes back (a new file) and a, now the least recent, goes
    await log.append(2, rowsOf(10, 2), 106n, all(1, rowsOf(10, 2)))
    assert.deepEqual(evictions, [1, 1])
    assert.equal(log.evictedSegmentCount, 2)
    assert.equal(log.rotationDue(), undefined, 'two evicted files are below the open segments limit')

    const rotation = await log.cut('commit')
    assert.ok(rotation)
    assert.deepEqual(filesOf(rotation), [
      ['ns.a', 4],
      ['ns.b', 2],
      ['ns.b', 2],
      ['ns.c', 4],
    ])
    assert.deepEqual(
      claimsOf(rotation),
      [
        ['ns.a', 1, 0n, 6n],
        ['ns.b', 1, 0n, 6n],
        ['ns.b', 2, 100n, 106n],
        ['ns.c', 2, 100n, 106n],
      ],
      'a table evicted is claimed as if it had stayed open',
    )
    assert.equal(log.evictedSegmentCount, 0)
    assert.equal(log.openSegmentCount, 0)
    const manifest = decodeRotationManifest(await readFile(rotation.manifestPath, 'utf8'))
    assert.deepEqual([...manifest.files].sort(), rotation.segments.map((segment) => segment.uuid).sort())
    for (const segment of rotation.segments) {
      const { segment: sidecar } = decodeSharedSidecar(await readFile(segment.jsonPath, 'utf8'))
      assert.equal(sidecar.rotation, rotation.id)
      assert.equal(sidecar.table, segment.table)
      const bytes = await readFile(segment.localPath)
      const reader = openDataFileReader(bytes, eventSchema, segment.localPath)
      let rows = 0
      for (let group = 0; group < reader.rowGroupCount; group++) rows += (await reader.readRowGroup(group)).length
      assert.equal(BigInt(rows), segment.dataFile.recordCount)
      const footer = await footerOf(segment.localPath)
      assert.equal(footer.get('floe.rotation'), rotation.id, 'an evicted file names the cut it joined')
      assert.equal(footer.get('floe.table'), segment.table)
    }
    const withoutRanges = await Promise.all(
      rotation.segments.map(async (segment) => (await footerOf(segment.localPath)).has('floe.ranges')),
    )
    assert.equal(withoutRanges.filter((has) => !has).length, 2, 'the two evicted files say no ranges')
    await log.close()
  })

  test('evicted files reaching the open segments limit make the cut due; their age counts', async (t) => {
    const { log, clock } = evictingLog(await temporaryDirectory(t), 1, {
      limits: { maxOpenSegments: 3, maxFileAgeMs: 1000 },
    })
    const opened = clock.time
    log.read(1, 0n)
    await log.append(1, rowsOf(0, 1), 1n, [0])
    clock.time = opened + 600
    await log.append(1, rowsOf(1, 1), 2n, [1]) // a, opened at 0, makes room
    assert.equal(log.rotationDue(), undefined)
    clock.time = opened + 1000
    assert.equal(log.rotationDue(), 'age', "the evicted file's first row is 1,000 ms old")
    clock.time = opened
    await log.append(1, rowsOf(2, 1), 3n, [2])
    assert.equal(log.evictedSegmentCount, 2)
    assert.equal(log.rotationDue(), undefined)
    await log.append(1, rowsOf(3, 1), 4n, [3])
    assert.equal(log.evictedSegmentCount, 3)
    assert.equal(log.rotationDue(), 'tables')
    const rotation = await log.cut('tables')
    assert.equal(rotation?.segments.length, 4)
    assert.equal(log.rotationDue(), undefined)
    await log.close()
  })

  test('a discarded log and a crashed one keep no evicted file', async (t) => {
    const dir = join(await temporaryDirectory(t), 'shared')
    const { log } = evictingLog(dir, 1)
    log.read(1, 0n)
    await log.append(1, rowsOf(0, 2), 2n, [0, 0])
    const kept = await log.cut('commit')
    await log.append(1, rowsOf(2, 1), 3n, [1])
    await log.append(1, rowsOf(3, 1), 4n, [2])
    assert.equal(log.evictedSegmentCount, 1)
    assert.deepEqual(await log.discardOpen(), new Map([[1, 2n]]))
    assert.equal(log.evictedSegmentCount, 0)
    await log.append(1, rowsOf(2, 1), 3n, [3])
    const after = await log.cut('commit')
    assert.deepEqual(filesOf(after), [['ns.d', 1]], 'the discarded evicted file is in no cut')

    // evicted, then the process ends before the cut
    await log.append(1, rowsOf(3, 1), 4n, [0])
    await log.append(1, rowsOf(4, 1), 5n, [1])
    assert.equal(log.evictedSegmentCount, 1)
    await log.close()
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets: new Map([[1, 0n]]), assigned: [1] })
    assert.deepEqual(
      recovered.rotations.map((rotation) => rotation.id),
      [kept?.id, after?.id],
    )
    const deleted = recovered.deleted.filter((deletion) => deletion.reason === 'active').map((d) => basename(d.file))
    assert.equal(deleted.length, 1, 'the evicted file (closing the log removed the open one)')
    assert.equal(recovered.next.get(1), 3n, 'read again from the last cut')
  })

  test('a batch naming more tables than fit writes each table of it into one file, never past the bound', async (t) => {
    const { log, evictions } = evictingLog(await temporaryDirectory(t), 2)
    log.read(1, 0n)
    await log.append(1, rowsOf(0, 1), 1n, [3]) // d open before the batch
    const rows = rowsOf(1, 12)
    // a, b, c, d, a, b, ... interleaved, and in two Iceberg partitions for c
    const tables = rows.map((_, i) => i % 4)
    const mixed = rows.map((row, i) => (i % 4 === 2 && i > 4 ? (events(100 + i, 1, 2, 2)[0] ?? row) : row))
    await log.append(1, mixed, 13n, tables)
    assert.ok(log.openTableCount <= 2)
    // d, open, takes its rows first; then a opens, and b needs room for itself and c: d and a go together
    assert.deepEqual(evictions, [2])
    const rotation = await log.cut('commit')
    const perTable = new Map<string, number>()
    for (const segment of rotation?.segments ?? [])
      perTable.set(segment.table as string, (perTable.get(segment.table as string) ?? 0) + 1)
    assert.deepEqual(
      [...perTable].sort(),
      [
        ['ns.a', 1],
        ['ns.b', 1],
        ['ns.c', 2],
        ['ns.d', 1],
      ],
      'one file per table and Iceberg partition of the batch; d, open before it, in the same file',
    )
    assert.equal(
      rotation?.segments.reduce((sum, segment) => sum + Number(segment.dataFile.recordCount), 0),
      13,
    )
    await log.close()
  })

  test("of one batch's tables, the one with fewer rows is evicted first: a fetch's busy table stays open", async (t) => {
    const { log, evictions } = evictingLog(await temporaryDirectory(t), 2)
    log.read(1, 0n)
    const rows = rowsOf(0, 7)
    await log.append(1, rows, 7n, [0, 0, 1, 0, 0, 2, 0]) // a five rows, b one, c one: c needs b's place
    assert.deepEqual(evictions, [1])
    await log.append(1, rowsOf(7, 2), 9n, [0, 0]) // a is still open
    assert.deepEqual(evictions, [1])
    const rotation = await log.cut('commit')
    assert.deepEqual(filesOf(rotation), [
      ['ns.a', 7],
      ['ns.b', 1],
      ['ns.c', 1],
    ])
    await log.close()
  })

  test("a fetch's batches go in as one: each table's rows of every partition in one file", async (t) => {
    const { log, evictions } = evictingLog(await temporaryDirectory(t), 1)
    log.read(1, 0n)
    log.read(2, 100n)
    log.read(3, 200n)
    const batch = (partition: number, from: bigint, first: number) => {
      const rows = rowsOf(first, 8)
      return { partition, from, rows, next: from + 8n, tables: rows.map((_, i) => i % 4) }
    }
    const taken = await log.appendFetched([batch(1, 0n, 0), batch(2, 100n, 8), batch(3, 150n, 16)])
    assert.deepEqual(taken, [true, true, false], 'partition 3 no longer reads at 150')
    assert.deepEqual([log.position(1), log.position(2), log.position(3)], [8n, 108n, 200n])
    assert.deepEqual(evictions, [1, 1, 1], 'four tables, one at a time')
    const rotation = await log.cut('commit')
    assert.deepEqual(filesOf(rotation), [
      ['ns.a', 4],
      ['ns.b', 4],
      ['ns.c', 4],
      ['ns.d', 4],
    ])
    assert.deepEqual(
      claimsOf(rotation),
      ['ns.a', 'ns.b', 'ns.c', 'ns.d'].flatMap((table) => [
        [table, 1, 0n, 8n],
        [table, 2, 100n, 108n],
      ]),
    )
    await log.close()
  })
})
