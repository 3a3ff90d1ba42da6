// A routed shared WAL on disk: its claims and tables survive a restart, a manifest whose claims
// do not fit its ranges or files is dropped as unreadable, and each file holds exactly its table's
// rows and says its table in its footer.
import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { describe, test } from 'node:test'
import { parquetMetadata } from 'hyparquet'
import type { StructValue } from '../../shared/iceberg/index.ts'
import { openDataFileReader } from '../../shared/parquet/index.ts'
import type { SharedRotation } from './rotation-manifest.ts'
import { SharedLog } from './shared-log.ts'
import { recoverSharedLog } from './shared-recovery.ts'
import { daysAndCountries, eventSchema, events, SettableClock, temporaryDirectory } from './test-support.ts'

const topic = 'orders'
const names = ['ns.a', 'ns.b', 'ns.c']

/** Each row's table: ids in runs of three per table. */
const tableOf = (row: StructValue) => Number(((row['event_id'] as bigint) / 3n) % 3n)

/**
 * Two routed rotations over partitions 1 and 2 (1: [0,10) [10,20), 2: [50,60) [60,62)), partition 1
 * positioned with table b's floor at 3 (its rows of b start there).
 */
async function routedWal(dir: string, sent?: Map<string, StructValue[]>): Promise<SharedRotation[]> {
  const log = new SharedLog({
    dir,
    topic,
    schema: eventSchema,
    spec: daysAndCountries,
    clock: new SettableClock(),
    route: { names, maxOpenTables: 8 },
  })
  log.read(1, 0n, new Map([['ns.b', 3n]]))
  log.read(2, 50n)
  const append = async (partition: number, rows: StructValue[], next: bigint) => {
    const tables = rows.map(tableOf)
    rows.forEach((row, i) => {
      const name = names[tables[i] as number] as string
      sent?.set(name, [...(sent.get(name) ?? []), row])
    })
    await log.append(partition, rows, next, tables)
  }
  const rotations: SharedRotation[] = []
  // ids 0..2 a, 3..5 b (offsets 3..5, at the floor), 6..9 c and a
  await append(1, events(0, 10), 10n)
  await append(2, events(10, 10), 60n)
  rotations.push((await log.cut('commit')) as SharedRotation)
  await append(1, events(20, 10), 20n)
  await append(2, [], 62n)
  rotations.push((await log.cut('commit')) as SharedRotation)
  await log.close()
  return rotations
}

const tableOffsets = new Map([
  [1, 0n],
  [2, 50n],
])

type ManifestJson = {
  ranges: { partition: number; start: number; end: number }[]
  tables: { table: string; claims: { topic: string; partition: number; start: number; end: number }[] }[]
}

describe('recovering a routed shared WAL', () => {
  test('every rotation comes back with its claims per table and each file with its table', async (t) => {
    const dir = await temporaryDirectory(t)
    const written = await routedWal(dir)
    const [first] = written
    assert.deepEqual(
      first?.tables?.map(({ table, claims }) => [
        table,
        claims.map((claim) => [claim.partition, claim.start, claim.end]),
      ]),
      [
        [
          'ns.a',
          [
            [1, 0n, 10n],
            [2, 50n, 60n],
          ],
        ],
        [
          'ns.b',
          [
            [1, 3n, 10n],
            [2, 50n, 60n],
          ],
        ],
        [
          'ns.c',
          [
            [1, 0n, 10n],
            [2, 50n, 60n],
          ],
        ],
      ],
    )
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets, assigned: [1, 2] })
    assert.deepEqual(
      recovered.rotations.map((rotation) => rotation.tables),
      written.map((rotation) => rotation.tables),
    )
    assert.deepEqual(
      recovered.rotations.map((rotation) => rotation.segments.map(({ uuid, table }) => [uuid, table]).sort()),
      written.map((rotation) => rotation.segments.map(({ uuid, table }) => [uuid, table]).sort()),
    )
    assert.deepEqual(
      recovered.next,
      new Map([
        [1, 20n],
        [2, 62n],
      ]),
    )
    assert.deepEqual(recovered.deleted, [])
  })

  const corruptions: Array<[string, (manifest: ManifestJson) => void]> = [
    ['a claim ending before its range ends', (m) => (m.tables[0]!.claims[0]!.end -= 1)],
    ['a claim starting before its range', (m) => (m.tables[1]!.claims[1]!.start = 49)],
    ['a claim of a partition the rotation has no range of', (m) => (m.tables[0]!.claims[1]!.partition = 7)],
    ['a table claimed with no file', (m) => m.tables.push({ table: 'ns.z', claims: [{ ...m.tables[0]!.claims[0]! }] })],
    ['a file whose table no claim names', (m) => m.tables.splice(2, 1)],
    ['tables out of name order', (m) => m.tables.reverse()],
  ]
  for (const [what, corrupt] of corruptions) {
    test(`a manifest with ${what} is unreadable: deleted, its files unclaimed, the rotations after it dropped`, async (t) => {
      const dir = await temporaryDirectory(t)
      const [first, second] = await routedWal(dir)
      assert.ok(first && second)
      const manifest = JSON.parse(await readFile(first.manifestPath, 'utf8')) as ManifestJson
      corrupt(manifest)
      await writeFile(first.manifestPath, JSON.stringify(manifest))
      const recovered = await recoverSharedLog(dir, { topic, tableOffsets, assigned: [1, 2] })
      assert.deepEqual(recovered.rotations, [])
      assert.deepEqual(recovered.next, tableOffsets)
      const reasons = new Map(recovered.deleted.map(({ file, reason }) => [file, reason]))
      assert.equal(reasons.get(basename(first.manifestPath)), 'unreadable-manifest')
      for (const segment of first.segments) assert.equal(reasons.get(`segment_${segment.uuid}.parquet`), 'unclaimed')
      assert.equal(reasons.get(basename(second.manifestPath)), 'gap')
    })
  }

  test('a routed file holds exactly its table rows and names its table in its footer', async (t) => {
    const dir = await temporaryDirectory(t)
    const sent = new Map<string, StructValue[]>()
    const [first] = await routedWal(dir, sent)
    assert.ok(first)
    const read = new Map<string, StructValue[]>()
    for (const segment of first.segments) {
      const bytes = await readFile(segment.localPath)
      const reader = openDataFileReader(bytes, eventSchema, segment.localPath)
      const rows: StructValue[] = []
      for (let group = 0; group < reader.rowGroupCount; group++) rows.push(...(await reader.readRowGroup(group)))
      assert.equal(BigInt(rows.length), segment.dataFile.recordCount)
      for (const row of rows) assert.equal(names[tableOf(row)], segment.table, `row ${row['event_id']}`)
      read.set(segment.table as string, [...(read.get(segment.table as string) ?? []), ...rows])
      const footer = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
      const metadata = new Map(footer.key_value_metadata?.map(({ key, value }) => [key, value]))
      assert.equal(metadata.get('floe.table'), segment.table)
      assert.equal(metadata.get('floe.rotation'), first.id)
    }
    // the first rotation holds ids 0..19; what each table was sent of them, it holds, and nothing else
    const ids = (rows: readonly StructValue[] = []) => rows.map((row) => row['event_id'] as bigint).sort()
    for (const name of names) {
      assert.deepEqual(ids(read.get(name)), ids(sent.get(name)?.filter((row) => (row['event_id'] as bigint) < 20n)))
    }
  })

  test('an unrouted file says no table and its manifest holds no tables', async (t) => {
    const dir = join(await temporaryDirectory(t), 'shared')
    const log = new SharedLog({ dir, topic, schema: eventSchema, spec: daysAndCountries })
    log.read(1, 0n)
    await log.append(1, events(0, 4), 4n)
    const rotation = await log.cut('commit')
    await log.close()
    assert.ok(rotation?.segments[0])
    const manifest = JSON.parse(await readFile(rotation.manifestPath, 'utf8')) as Record<string, unknown>
    assert.deepEqual(Object.keys(manifest), ['format', 'version', 'id', 'sequence', 'files', 'ranges'])
    const sidecar = JSON.parse(await readFile(rotation.segments[0].jsonPath, 'utf8')) as Record<string, unknown>
    assert.equal('table' in sidecar, false)
    const bytes = await readFile(rotation.segments[0].localPath)
    const footer = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
    assert.deepEqual(
      footer.key_value_metadata?.map(({ key }) => key).filter((key) => key.startsWith('floe.')),
      ['floe.rotation', 'floe.ranges'],
    )
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets: new Map([[1, 0n]]), assigned: [1] })
    assert.equal(recovered.rotations.length, 1)
    assert.equal('tables' in (recovered.rotations[0] as object), false)
    assert.ok(recovered.rotations[0]?.segments.every((segment) => !('table' in segment)))
  })
})
