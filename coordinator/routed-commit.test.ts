// commitRoutedRound on a real catalog (the embedded SQL catalog, a local warehouse): the tables'
// commits, the ledger's starts and advance, and what the ACK says when one of them fails.
import assert from 'node:assert/strict'
import { rm } from 'node:fs/promises'
import { after, before, describe, test } from 'node:test'
import type { RotationStatus } from '../protocol/index.ts'
import { type Catalog, parseTableIdentifier, type SqlCatalog } from '../shared/catalog/index.ts'
import { appendFiles } from '../shared/iceberg/commit/index.ts'
import { readManifest, readManifestList } from '../shared/iceberg/manifests/index.ts'
import { currentSnapshot } from '../shared/iceberg/metadata/index.ts'
import { FloeError } from '../shared/index.ts'
import { LocalFileStorage } from '../shared/storage/index.ts'
import { encodeProgress, floeSummaryKeys, offsetsKey, readProgress } from './progress.ts'
import { commitRoutedRound, type RoutedCommitTarget, routedRoundAck } from './routed-commit.ts'
import { markerOf, routed } from './routed-fixtures.ts'
import { openTestCatalog } from './test-catalog.ts'
import { group, rotationReport as report, topic } from './test-fixtures.ts'

const storage = new LocalFileStorage()
const schema = {
  type: 'struct' as const,
  'schema-id': 0,
  fields: [{ id: 1, name: 'id', required: false, type: 'long' as const }],
}
let dir: string
let catalog: SqlCatalog
let round = 0

before(async () => {
  ;({ dir, catalog } = await openTestCatalog('floe-routed-', parseTableIdentifier('setup.ledger'), storage))
})
after(async () => {
  await catalog.close()
  await rm(dir, { recursive: true, force: true })
})

/** A namespace of its own per test: the ledger and tables a, b, c, the ledger at `ledger`. */
async function dataset(ns: string, ledger: Record<number, bigint> = {}) {
  await catalog.createNamespace([ns])
  for (const name of ['ledger', 'a', 'b', 'c']) {
    await catalog.createTable(parseTableIdentifier(`${ns}.${name}`), schema, { fields: [] })
  }
  const ledgerId = parseTableIdentifier(`${ns}.ledger`)
  if (Object.keys(ledger).length > 0) {
    const marker = encodeProgress(markerOf(ledger))
    await appendFiles({
      catalog,
      storage,
      table: ledgerId,
      commitId: `${ns}-seed`,
      commitIdKey: floeSummaryKeys.commitId,
      content: () => ({ files: [], summary: { [offsetsKey(group)]: marker } }),
    })
  }
  const names = { a: `${ns}.a`, b: `${ns}.b`, c: `${ns}.c` }
  const target = (over: Catalog = catalog): RoutedCommitTarget => ({
    catalog: over,
    storage,
    ledger: ledgerId,
    group,
    retry: { retries: 2, minWaitMs: 1, maxWaitMs: 2 },
  })
  return { names, target, ledgerId }
}

/** Two rotations over partitions 0 and 1 routing into a, b and c, from a ledger at {0: 100, 1: 10}. */
function twoRotations({ a, b, c }: { a: string; b: string; c: string }): RotationStatus[] {
  return [
    routed(
      'r1',
      [
        [0, 100n, 150n],
        [1, 10n, 20n],
      ],
      [
        [a, [[0, 100n, 150n]]],
        [
          b,
          [
            [0, 100n, 150n],
            [1, 10n, 20n],
          ],
        ],
      ],
    ),
    routed(
      'r2',
      [
        [0, 150n, 200n],
        [1, 20n, 30n],
      ],
      [
        [b, [[1, 20n, 30n]]],
        [c, [[0, 150n, 200n]]],
      ],
    ),
  ]
}

async function markerAt(table: string) {
  const { metadata } = await catalog.loadTable(parseTableIdentifier(table))
  return Object.fromEntries(readProgress(metadata, group).get(topic) ?? [])
}

/** The data files live in a table's current snapshot. */
async function filesOf(table: string): Promise<string[]> {
  const { metadata } = await catalog.loadTable(parseTableIdentifier(table))
  const snapshot = currentSnapshot(metadata)
  if (!snapshot) return []
  const files: string[] = []
  for (const manifest of readManifestList(await storage.get(snapshot['manifest-list'])).manifests) {
    const read = readManifest(await storage.get(manifest.manifestPath), { inheritFrom: manifest })
    files.push(...read.entries.map((entry) => entry.dataFile.filePath))
  }
  return files.sort()
}

/** The catalog, with `fail(table, n)` deciding per commitTable call (n counts that table's calls). */
function failing(fail: (table: string, call: number) => 'fail' | 'lose-reply' | undefined): Catalog {
  const calls = new Map<string, number>()
  return new Proxy(catalog, {
    get(real, property) {
      if (property === 'commitTable') {
        return async (...args: Parameters<Catalog['commitTable']>) => {
          const name = [...args[0].namespace, args[0].name].join('.')
          const call = (calls.get(name) ?? 0) + 1
          calls.set(name, call)
          const how = fail(name, call)
          if (how === 'fail') throw new Error(`${name} refused the commit`)
          const result = await real.commitTable(...args)
          if (how === 'lose-reply') throw new FloeError('COMMIT_STATE_UNKNOWN', `${name}: the reply was lost`)
          return result
        }
      }
      const value = Reflect.get(real, property, real)
      return typeof value === 'function' ? value.bind(real) : value
    },
  }) as Catalog
}

const floorsOf = (floors: ReadonlyArray<{ table: string; offset: bigint }> = []) =>
  floors.map((f) => [f.table, f.offset]).sort(([x], [y]) => String(x).localeCompare(String(y)))

const commitId = () => `round-${++round}`

describe('commitRoutedRound', () => {
  test('two rotations into three tables: each table lands its files and marker, the ledger moves', async () => {
    const { names, target, ledgerId } = await dataset('full', { 0: 100n, 1: 10n })
    const id = commitId()
    const result = await commitRoutedRound(target(), { commitId: id, reports: [report(1, 'w1', twoRotations(names))] })
    assert.deepEqual(result.ack.acceptedRotations, ['r1', 'r2'])
    assert.equal(result.ledger.landed, true)
    for (const name of Object.values(names)) {
      assert.equal(result.tables.get(name)?.fate.commit, 'landed')
      assert.deepEqual(await markerAt(name), { 0: 200n, 1: 30n })
    }
    assert.deepEqual(await markerAt(`full.ledger`), { 0: 200n, 1: 30n })
    assert.deepEqual((await filesOf(names.a)).length, 1)
    assert.deepEqual((await filesOf(names.b)).length, 2)
    assert.deepEqual((await filesOf(names.c)).length, 1)
    assert.deepEqual(await filesOf(`full.ledger`), [])
    const { metadata } = await catalog.loadTable(ledgerId)
    assert.equal(currentSnapshot(metadata)?.summary[floeSummaryKeys.commitId], id)

    const ack = routedRoundAck(id, result)
    assert.equal(ack.snapshotId, result.ledger.snapshotId)
    assert.deepEqual(ack.acceptedRotations, ['r1', 'r2'])
    assert.deepEqual(
      ack.committed.map((c) => [c.partition, c.range.start, c.offset, c.filePaths.length]),
      [
        [0, 100n, 200n, 0],
        [1, 10n, 30n, 0],
      ],
    )
    assert.deepEqual(ack.rejected, [])
  })

  test('a new partition: the ledger starts it before any table commits', async () => {
    const { names, target } = await dataset('fresh')
    const order: string[] = []
    const watching = failing((table) => {
      order.push(table)
      return undefined
    })
    const rotations = [routed('r1', [[2, 500n, 510n]], [[names.a, [[2, 500n, 510n]]]])]
    const result = await commitRoutedRound(target(watching), {
      commitId: commitId(),
      reports: [report(1, 'w1', rotations, { origin: 'offset-reset' })],
    })
    assert.deepEqual(order, ['fresh.ledger', names.a, 'fresh.ledger'])
    assert.equal(result.ledger.startsLanded, true)
    assert.deepEqual(result.ack.acceptedRotations, ['r1'])
    assert.deepEqual(await markerAt(names.a), { 2: 510n })
    assert.deepEqual(await markerAt('fresh.ledger'), { 2: 510n })
  })

  test("one table's commit fails: the others land, nothing is accepted, the next round rejects with floors", async () => {
    const { names, target } = await dataset('onefails', { 0: 100n, 1: 10n })
    const reports = [report(1, 'w1', twoRotations(names))]
    const result = await commitRoutedRound(target(failing((table) => (table === names.b ? 'fail' : undefined))), {
      commitId: commitId(),
      reports,
    })
    assert.equal(result.tables.get(names.b)?.fate.commit, 'unconfirmed')
    assert.equal(result.tables.get(names.a)?.fate.commit, 'landed')
    assert.equal(result.tables.get(names.c)?.fate.commit, 'landed')
    assert.deepEqual(result.ack.acceptedRotations, [])
    assert.deepEqual(await markerAt('onefails.ledger'), { 0: 100n, 1: 10n })
    assert.deepEqual(await filesOf(names.b), [])

    const id = commitId()
    const again = await commitRoutedRound(target(), { commitId: id, reports })
    assert.deepEqual(again.ack.acceptedRotations, [])
    const stopped = again.check.rotations.rejected.find((r) => r.id === 'r1')
    assert.equal(stopped?.reason, 'behind-table')
    const ack = routedRoundAck(id, again)
    assert.equal(ack.snapshotId, undefined)
    const byPartition = Object.fromEntries(
      ack.rejected.map((r) => [r.partition, [r.tableOffset, floorsOf(r.skipFloors)]]),
    )
    assert.deepEqual(byPartition, {
      0: [
        100n,
        [
          [names.a, 200n],
          [names.c, 200n],
        ],
      ],
      1: [
        10n,
        [
          [names.a, 30n],
          [names.c, 30n],
        ],
      ],
    })
    assert.deepEqual((await filesOf(names.a)).length, 1)
  })

  test('the ledger commit fails after every table landed; a round claiming from the floors moves it', async () => {
    const { names, target } = await dataset('ledgerfails', { 0: 100n, 1: 10n })
    const result = await commitRoutedRound(
      target(failing((table) => (table === 'ledgerfails.ledger' ? 'fail' : undefined))),
      { commitId: commitId(), reports: [report(1, 'w1', twoRotations(names))] },
    )
    assert.deepEqual(result.ack.acceptedRotations, [])
    assert.equal(result.ledger.landed, false)
    for (const name of Object.values(names)) assert.deepEqual(await markerAt(name), { 0: 200n, 1: 30n })
    assert.deepEqual(await markerAt('ledgerfails.ledger'), { 0: 100n, 1: 10n })

    // The participant read again from the ledger, skipping below each table's floor.
    const reread = routed(
      'r3',
      [
        [0, 100n, 250n],
        [1, 10n, 40n],
      ],
      [
        [names.a, [[0, 200n, 250n]]],
        [names.b, [[1, 30n, 40n]]],
      ],
    )
    const next = await commitRoutedRound(target(), { commitId: commitId(), reports: [report(2, 'w1', [reread])] })
    assert.deepEqual(next.ack.acceptedRotations, ['r3'])
    assert.deepEqual(await markerAt('ledgerfails.ledger'), { 0: 250n, 1: 40n })
    assert.deepEqual(await markerAt(names.a), { 0: 250n, 1: 40n })
    assert.deepEqual((await filesOf(names.a)).length, 2)
  })

  test('a reply lost after a table landed: its part is unconfirmed, the ledger waits for it, no file twice', async () => {
    const { names, target } = await dataset('lost', { 0: 100n, 1: 10n })
    const reports = [report(1, 'w1', twoRotations(names))]
    const result = await commitRoutedRound(
      target(failing((table, call) => (table === names.c && call === 1 ? 'lose-reply' : undefined))),
      { commitId: commitId(), reports },
    )
    assert.equal(result.tables.get(names.c)?.fate.commit, 'unconfirmed')
    // r1 has no part in c: it lands whole; r2's range of partition 0 waits for c.
    assert.deepEqual(result.ack.acceptedRotations, ['r1'])
    assert.deepEqual(await markerAt('lost.ledger'), { 0: 150n, 1: 30n })
    assert.deepEqual((await filesOf(names.c)).length, 1)

    const again = await commitRoutedRound(target(), {
      commitId: commitId(),
      reports: [report(1, 'w1', [reports[0]?.rotations[1] as RotationStatus])],
    })
    assert.deepEqual(again.ack.acceptedRotations, [])
    const rejection = again.ack.rejections.find((r) => r.partition === 0)
    // The tables the round names, at 200: b passed r2's range without rows, c holds it by its lost reply.
    assert.deepEqual(
      [rejection?.rereadFrom, floorsOf(rejection?.floors)],
      [
        150n,
        [
          [names.b, 200n],
          [names.c, 200n],
        ],
      ],
    )
    assert.deepEqual((await filesOf(names.c)).length, 1)
  })

  for (const sameId of [true, false]) {
    test(`two coordinators commit the same round at once (${sameId ? 'same' : 'own'} commit ids): no file twice`, async () => {
      const ns = sameId ? 'twice' : 'twiceown'
      const { names, target } = await dataset(ns, { 0: 100n, 1: 10n })
      const reports = [report(1, 'w1', twoRotations(names))]
      const first = commitId()
      const results = await Promise.all([
        commitRoutedRound(target(), { commitId: first, reports }),
        commitRoutedRound(target(), { commitId: sameId ? first : commitId(), reports }),
      ])
      for (const [name, count] of [
        [names.a, 1],
        [names.b, 2],
        [names.c, 1],
      ] as const) {
        const files = await filesOf(name)
        assert.equal(files.length, count, name)
        assert.equal(new Set(files).size, files.length)
        assert.deepEqual(await markerAt(name), { 0: 200n, 1: 30n })
      }
      const ledger = await markerAt(`${ns}.ledger`)
      const accepted = results.flatMap((r) => r.ack.acceptedRotations)
      // Whichever coordinator won a table, the ledger never passes what the tables hold.
      assert.ok(ledger[0] !== undefined && ledger[0] <= 200n && ledger[1] !== undefined && ledger[1] <= 30n)
      assert.equal(new Set(accepted).size, accepted.length)
    })
  }
})
