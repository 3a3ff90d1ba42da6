// switchRoute on a real catalog (the embedded SQL catalog, a local warehouse): the mark, the fences,
// the floors, a switch finished by the next one, and an old route's commit that loaded a table
// before the mark and meets the fence and the gate.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type Catalog, parseTableIdentifier } from '../shared/catalog/index.ts'
import { type RouteDefinition, routeFingerprint } from '../shared/config/index.ts'
import { appendFiles } from '../shared/iceberg/commit/index.ts'
import { FloeError, isFloeError } from '../shared/index.ts'
import { LocalFileStorage } from '../shared/storage/index.ts'
import {
  encodeProgress,
  floeSummaryKeys,
  generationOffsetsKey,
  offsetsKey,
  type Progress,
  readProgress,
} from './progress.ts'
import { fenceKey, type RouteRecord } from './route-record.ts'
import { askRouteGate, loadRouteRecord, type RouteSwitchTarget, switchRoute } from './route-switch.ts'
import { commitRoutedRound, type RoutedCommitTarget } from './routed-commit.ts'
import { markerOf, routed } from './routed-fixtures.ts'
import { catalogForFile, oneLongColumn } from './test-catalog.ts'
import { group, rotationReport as report, topic } from './test-fixtures.ts'

const storage = new LocalFileStorage()
const opened = catalogForFile('floe-route-switch-', storage)
let seeds = 0

const route = (ns: string, field = 'region'): { fingerprint: string; definition: RouteDefinition } => {
  const definition = { field, table: `${ns}.events_{value}` }
  return { fingerprint: routeFingerprint(definition), definition }
}

/** A commit of no data that sets `group`'s plain marker: what an old-route round leaves. */
async function mark(table: string, marker: Progress, over: Catalog = opened.catalog) {
  await appendFiles({
    catalog: over,
    storage,
    table: parseTableIdentifier(table),
    commitId: `seed-${++seeds}`,
    commitIdKey: floeSummaryKeys.commitId,
    content: () => ({ files: [], summary: { [offsetsKey(group)]: encodeProgress(marker) } }),
  })
}

/** A namespace per test: the ledger at {0: 100}, tables events_eu at {0: 150}, events_us at {0: 90}, events_ap bare. */
async function dataset(ns: string) {
  await opened.catalog.createNamespace([ns])
  for (const name of ['ledger', 'events_eu', 'events_us', 'events_ap', 'other']) {
    await opened.catalog.createTable(parseTableIdentifier(`${ns}.${name}`), oneLongColumn, { fields: [] })
  }
  await mark(`${ns}.ledger`, markerOf({ 0: 100n }))
  await mark(`${ns}.events_eu`, markerOf({ 0: 150n }))
  await mark(`${ns}.events_us`, markerOf({ 0: 90n }))
  const target = (over: Catalog = opened.catalog): RouteSwitchTarget => ({
    catalog: over,
    storage,
    ledger: parseTableIdentifier(`${ns}.ledger`),
    group,
    retry: { retries: 3, minWaitMs: 1, maxWaitMs: 2 },
  })
  return { target }
}

const floorsOf = (record: RouteRecord) =>
  record.earlier.map((e): [number, string[]] => [
    e.generation,
    [...(e.floors.get(topic) ?? [])].flatMap(([p, tables]) => [...tables].map(([t, o]) => `${p}:${t}@${o}`)),
  ])

async function fenceOf(table: string) {
  return (await opened.catalog.loadTable(parseTableIdentifier(table))).metadata.properties[fenceKey(group)]
}

describe('switchRoute', () => {
  test('fences every table the route can name and records the markers above the ledger as floors', async () => {
    const { target } = await dataset('first')
    const result = await switchRoute(target(), route('first'))
    assert.equal(result.switched, true)
    assert.deepEqual(
      result.fenced,
      ['first.events_ap', 'first.events_eu', 'first.events_us'],
      'the bare table too, never the ledger or another name',
    )
    assert.equal(result.floors, 1)
    assert.deepEqual(floorsOf(result.record), [[0, ['0:first.events_eu@150']]])
    for (const table of result.fenced) assert.equal(await fenceOf(table), '1')
    assert.equal(await fenceOf('first.other'), undefined)
    const ledger = (await opened.catalog.loadTable(target().ledger)).metadata
    assert.deepEqual(readProgress(ledger, group), markerOf({ 0: 100n }), 'the ledger marker is untouched')
    assert.deepEqual(await askRouteGate(target(), route('first').fingerprint), { open: true, generation: 1 })

    const again = await switchRoute(target(), route('first'))
    assert.equal(again.switched, false, 'at the route already: nothing to commit')
  })

  test('a switch that died after its mark is finished by the next one, and stalls the old route meanwhile', async () => {
    const { target } = await dataset('died')
    await switchRoute(target(), route('died'))
    const toKind = route('died', 'kind')
    const dying = new Proxy(opened.catalog, {
      get(real, property) {
        if (property === 'commitTable') {
          return async (...args: Parameters<Catalog['commitTable']>) => {
            if (args[0].name !== 'ledger') throw new Error('the catalog went away')
            return real.commitTable(...args)
          }
        }
        const value = Reflect.get(real, property, real)
        return typeof value === 'function' ? value.bind(real) : value
      },
    }) as Catalog
    await assert.rejects(switchRoute(target(dying), toKind), /went away/)
    const left = await loadRouteRecord(opened.catalog, target().ledger, group)
    assert.equal(left?.switchingFrom?.generation, 1)
    assert.equal((await askRouteGate(target(), route('died').fingerprint)).open, false, 'the old route is stalled')
    assert.equal((await askRouteGate(target(), toKind.fingerprint)).open, false, 'and the new one waits')

    // A third route's coordinator takes over: the route that last ran is still generation 1.
    const third = route('died', 'zone')
    const result = await switchRoute(target(), third)
    assert.equal(result.record.generation, 3)
    assert.equal(result.record.fingerprint, third.fingerprint)
    // generation 1 wrote nothing above the ledger; generation 0's floor stays until the ledger passes it
    assert.deepEqual(floorsOf(result.record), [[0, ['0:died.events_eu@150']]])
    assert.deepEqual(await askRouteGate(target(), third.fingerprint), { open: true, generation: 3 })
  })

  test("an old route's commit that loaded a table before the mark loses to the fence and meets the gate", async () => {
    // The ledger has no route record: the old route is generation 0, whose markers are the plain key.
    const { target } = await dataset('late')
    const old = route('late')
    let attempts = 0
    let switched: RouteRecord | undefined
    const late = appendFiles({
      catalog: opened.catalog,
      storage,
      table: parseTableIdentifier('late.events_eu'),
      commitId: 'late-round',
      commitIdKey: floeSummaryKeys.commitId,
      content: async () => {
        attempts++
        const gate = await askRouteGate(target(), old.fingerprint)
        if (!gate.open) throw new FloeError('COMMIT_REJECTED', gate.why)
        // Passed the gate with the table loaded: the switch runs now, before the request goes.
        if (attempts === 1) switched = (await switchRoute(target(), route('late', 'kind'))).record
        return { files: [], summary: { [offsetsKey(group)]: encodeProgress(markerOf({ 0: 200n })) } }
      },
    })
    await assert.rejects(
      late,
      (error) => isFloeError(error, 'COMMIT_REJECTED') && /switching|at route/.test(error.message),
    )
    assert.equal(attempts, 2)
    const table = (await opened.catalog.loadTable(parseTableIdentifier('late.events_eu'))).metadata
    assert.deepEqual(readProgress(table, group), markerOf({ 0: 150n }), 'the late commit did not land')
    assert.deepEqual(floorsOf(switched as RouteRecord), [[0, ['0:late.events_eu@150']]])
  })
})

describe('a routed round under the gate', () => {
  const roundOf = (ns: string) => [
    report(1, 'w1', [
      routed(
        'r1',
        [[0, 100n, 200n]],
        [
          [`${ns}.events_eu`, [[0, 100n, 200n]]],
          [`${ns}.events_us`, [[0, 100n, 200n]]],
        ],
      ),
    ]),
  ]
  const roundTarget = (target: RouteSwitchTarget, fingerprint: string, over?: Catalog): RoutedCommitTarget => ({
    ...target,
    ...(over ? { catalog: over } : {}),
    route: fingerprint,
  })
  const markerIn = async (table: string, key: string) =>
    (await opened.catalog.loadTable(parseTableIdentifier(table))).metadata.properties[key]

  test("commits under the new generation's markers, judged from the ledger, not the old markers", async () => {
    const { target } = await dataset('gen')
    const { fingerprint } = route('gen')
    await switchRoute(target(), route('gen'))
    // events_eu's old marker (150) is above the ledger: under generation 1 a claim from 100 is right.
    const result = await commitRoutedRound(roundTarget(target(), fingerprint), {
      commitId: 'gen-1',
      reports: roundOf('gen'),
    })
    assert.equal(result.ledger.landed, true)
    const key = generationOffsetsKey(group, 1)
    assert.equal(await markerIn('gen.events_eu', key), encodeProgress(markerOf({ 0: 200n })))
    const eu = (await opened.catalog.loadTable(parseTableIdentifier('gen.events_eu'))).metadata
    assert.deepEqual(readProgress(eu, group), markerOf({ 0: 150n }), 'the old marker stays')
    // the ledger passed events_eu's floor (150): the route record keeps no earlier generation
    assert.deepEqual((await loadRouteRecord(opened.catalog, target().ledger, group))?.earlier, [])
  })

  test('a coordinator of another route commits nothing', async () => {
    const { target } = await dataset('other')
    await switchRoute(target(), route('other'))
    await assert.rejects(
      commitRoutedRound(roundTarget(target(), route('other', 'kind').fingerprint), {
        commitId: 'other-1',
        reports: roundOf('other'),
      }),
      (error) => isFloeError(error, 'COMMIT_REJECTED') && /at route/.test(error.message),
    )
  })

  test('a switch that lands while the round commits: its tables lose to the fences and the gate, the ledger stays', async () => {
    const { target } = await dataset('mid')
    const { fingerprint } = route('mid')
    await switchRoute(target(), route('mid'))
    let switched = false
    const switching = new Proxy(opened.catalog, {
      get(real, property) {
        if (property === 'commitTable') {
          return async (...args: Parameters<Catalog['commitTable']>) => {
            // The first table request goes out after its table was loaded and the gate passed: the switch runs first.
            if (!switched && args[0].name.startsWith('events_')) {
              switched = true
              await switchRoute(target(), route('mid', 'kind'))
            }
            return real.commitTable(...args)
          }
        }
        const value = Reflect.get(real, property, real)
        return typeof value === 'function' ? value.bind(real) : value
      },
    }) as Catalog
    const result = await commitRoutedRound(roundTarget(target(), fingerprint, switching), {
      commitId: 'mid-1',
      reports: roundOf('mid'),
    })
    console.log(JSON.stringify([...result.tables].map(([t, c]) => [t, c.fate.commit, c.attempts, c.error])))
    assert.equal(switched, true)
    assert.equal(result.ledger.landed, false)
    // Each table either took the round before its fence (so the switch recorded it as a floor) or
    // lost to the fence and met the gate: never took it after the fence.
    const record = (await loadRouteRecord(opened.catalog, target().ledger, group)) as RouteRecord
    const floors = new Map(floorsOf(record))
    let refused = 0
    for (const table of ['mid.events_eu', 'mid.events_us']) {
      const marker = await markerIn(table, generationOffsetsKey(group, 1))
      if (result.tables.get(table)?.fate.commit === 'landed') {
        assert.equal(marker, encodeProgress(markerOf({ 0: 200n })))
        assert.ok((floors.get(1) as string[]).includes(`0:${table}@200`), `${table} landed before its fence: a floor`)
      } else {
        refused++
        assert.equal(marker, undefined, `${table} took nothing of the round`)
        assert.match(result.tables.get(table)?.error ?? '', /the ledger is at route/)
      }
    }
    assert.ok(refused >= 1, 'the table whose request started the switch lost to its fence')
    assert.deepEqual(
      readProgress((await opened.catalog.loadTable(target().ledger)).metadata, group),
      markerOf({ 0: 100n }),
    )
  })
})
