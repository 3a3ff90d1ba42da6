// The ledger's route record: what a switch marks and commits, the floors it keeps, the gate.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { routeDefinitionOf, routeFingerprint } from '../shared/config/index.ts'
import type { TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { isFloeError } from '../shared/index.ts'
import { generationOffsetsKey, isGroupOffsetsKey, isOffsetsKey, offsetsKey } from './progress.ts'
import {
  encodeRouteRecord,
  markedRecord,
  type RouteRecord,
  readRouteRecord,
  routeGate,
  routeRecordKey,
  switchDue,
  switchedRecord,
  withoutPassedFloors,
} from './route-record.ts'
import { markerOf } from './routed-fixtures.ts'
import { group, topic } from './test-fixtures.ts'

const byRegion = { field: 'region', table: 'ns.events_{value}' }
const byKind = { field: 'kind', table: 'ns.kinds_{value}', values: ['a', 'b'], fallback: 'ns.other' }
const next = (definition: typeof byRegion | typeof byKind) => ({
  fingerprint: routeFingerprint(definition),
  definition,
})

const ledgerWith = (record: RouteRecord | undefined): TableMetadata =>
  ({ properties: record ? { [routeRecordKey(group)]: encodeRouteRecord(record) } : {} }) as unknown as TableMetadata

const floors = (record: RouteRecord) =>
  record.earlier.map((e) => ({
    generation: e.generation,
    floors: [...e.floors].flatMap(([t, ps]) =>
      [...ps].flatMap(([p, tables]) => [...tables].map(([table, o]) => `${t}/${p}/${table}@${o}`)),
    ),
  }))

describe('the route fingerprint', () => {
  test('is the same for the values in another order and for another writer bound', () => {
    const one = routeDefinitionOf({
      field: 'kind',
      table: 'ns.k_{value}',
      values: new Set(['b', 'a']),
      fallback: undefined,
    })
    const two = routeDefinitionOf({
      field: 'kind',
      table: 'ns.k_{value}',
      values: new Set(['a', 'b']),
      fallback: undefined,
    })
    assert.equal(routeFingerprint(one), routeFingerprint(two))
  })
  test('changes with the field, the template, the values or the fallback', () => {
    const prints = new Set(
      [
        byKind,
        { ...byKind, field: 'type' },
        { ...byKind, table: 'ns.kind_{value}' },
        { ...byKind, values: ['a'] },
        { ...byKind, fallback: 'ns.rest' },
        { field: byKind.field, table: byKind.table, values: byKind.values },
      ].map(routeFingerprint),
    )
    assert.equal(prints.size, 6)
  })
})

describe('the route record', () => {
  test('a ledger without one is generation 0, whose markers keep their key', () => {
    assert.equal(readRouteRecord(ledgerWith(undefined), group), undefined)
    assert.equal(generationOffsetsKey(group, 0), offsetsKey(group))
    assert.equal(generationOffsetsKey(group, 2), `floe.offsets@2.${group}`)
    // no group's plain key spells another group's generation key
    assert.notEqual(generationOffsetsKey('g', 1), offsetsKey('1.g'))
    assert.deepEqual(routeGate(undefined, 'any'), { open: true, generation: 0 })
    for (const key of [offsetsKey(group), generationOffsetsKey(group, 2)]) {
      assert.ok(isOffsetsKey(key) && isGroupOffsetsKey(key, group), key)
    }
    assert.equal(isGroupOffsetsKey(generationOffsetsKey('other', 2), group), false)
    assert.equal(isGroupOffsetsKey(generationOffsetsKey(`x.${group}`, 2), group), false)
    assert.equal(isOffsetsKey('floe.offsets-note'), false)
  })

  test('goes through the ledger and back, floors of 64-bit offsets included', () => {
    const record: RouteRecord = {
      ...next(byKind),
      generation: 3,
      markedAtMs: 1_765_000_000_000,
      earlier: [
        {
          generation: 2,
          ...next(byRegion),
          floors: new Map([[topic, new Map([[7, new Map([['ns.events_eu', 9_007_199_254_740_993n]])]])]]),
        },
      ],
    }
    assert.deepEqual(readRouteRecord(ledgerWith(record), group), record)
    const switching = markedRecord(record, next(byRegion), 1_000) as RouteRecord
    assert.deepEqual(readRouteRecord(ledgerWith(switching), group), switching)
  })

  test('a damaged record is fatal, naming the ledger', () => {
    for (const text of [
      '{',
      '[]',
      '{"generation":1}',
      '{"generation":-1,"fingerprint":"x","definition":{"field":"f","table":"t"},"markedAtMs":0,"earlier":[]}',
      '{"generation":1,"fingerprint":"x","definition":{"field":"f","table":"t"},"earlier":[]}',
    ]) {
      const metadata = { properties: { [routeRecordKey(group)]: text } } as unknown as TableMetadata
      assert.throws(
        () => readRouteRecord(metadata, group),
        (error) => isFloeError(error, 'INVARIANT_BROKEN') && /route record is damaged/.test(error.message),
      )
    }
  })
})

describe('a switch', () => {
  test('from generation 0 takes the route it switches to as the one that ran', () => {
    const marked = markedRecord(undefined, next(byRegion), 1_000) as RouteRecord
    assert.equal(marked.generation, 1)
    assert.deepEqual(marked.switchingFrom, { generation: 0, ...next(byRegion) })
    assert.equal(markedRecord(marked, next(byRegion), 2_000), undefined, 'switching to it already: finish, do not mark')
  })

  test('over one that never finished leaves the route that last ran', () => {
    const running: RouteRecord = { generation: 4, ...next(byRegion), markedAtMs: 500, earlier: [] }
    const toKind = markedRecord(running, next(byKind), 3_000) as RouteRecord
    const back = markedRecord(
      toKind,
      { fingerprint: 'third', definition: { field: 'x', table: 'ns.x_{value}' } },
      4_000,
    )
    assert.equal(back?.generation, 6)
    assert.deepEqual(back?.switchingFrom, { generation: 4, ...next(byRegion) })
    assert.deepEqual(routeGate(toKind, toKind.fingerprint), {
      open: false,
      why: `the ledger is switching to route ${toKind.fingerprint}`,
    })
    assert.equal(routeGate(toKind, running.fingerprint).open, false)
  })

  test('records the fenced markers above the ledger as floors, and only those', () => {
    const marked = markedRecord(
      { generation: 1, ...next(byRegion), markedAtMs: 0, earlier: [] },
      next(byKind),
      1_000,
    ) as RouteRecord
    const switched = switchedRecord(
      marked,
      markerOf({ 0: 100n, 1: 50n }),
      new Map([
        ['ns.events_eu', markerOf({ 0: 150n, 1: 50n })],
        ['ns.events_us', markerOf({ 0: 90n, 2: 5n })],
      ]),
    )
    assert.equal(switched.switchingFrom, undefined)
    assert.deepEqual(floors(switched), [
      { generation: 1, floors: [`${topic}/0/ns.events_eu@150`, `${topic}/2/ns.events_us@5`] },
    ])
    assert.deepEqual(routeGate(switched, marked.fingerprint), { open: true, generation: 2 })
    assert.equal(routeGate(switched, routeFingerprint(byRegion)).open, false)
  })

  test('with nothing above the ledger keeps no earlier generation', () => {
    const marked = markedRecord(undefined, next(byRegion), 1_000) as RouteRecord
    const switched = switchedRecord(marked, markerOf({ 0: 100n }), new Map([['ns.events_eu', markerOf({ 0: 100n })]]))
    assert.deepEqual(switched.earlier, [])
  })
})

test('a coordinator switches from a route marked before its worker started, never from a newer one', () => {
  const at = (markedAtMs: number, switching = false): RouteRecord => ({
    generation: 2,
    ...next(byRegion),
    markedAtMs,
    earlier: [],
    ...(switching ? { switchingFrom: { generation: 1, ...next(byKind) } } : {}),
  })
  const kind = next(byKind).fingerprint
  assert.deepEqual(switchDue(undefined, kind, 5_000), { due: true })
  assert.deepEqual(switchDue(at(4_000), kind, 5_000), { due: true })
  assert.deepEqual(switchDue(at(6_000), kind, 5_000), { due: false, newer: at(6_000) })
  assert.deepEqual(switchDue(at(6_000, true), kind, 5_000).due, false, 'a newer switch under way is left to finish')
  assert.deepEqual(
    switchDue(at(4_000, true), next(byRegion).fingerprint, 5_000),
    { due: true },
    'one to this route is finished',
  )
  assert.deepEqual(switchDue(at(6_000), next(byRegion).fingerprint, 5_000), { due: false })
})

test('floors the ledger has passed are dropped, and a generation left with none', () => {
  const record: RouteRecord = {
    generation: 3,
    ...next(byKind),
    markedAtMs: 0,
    earlier: [
      {
        generation: 1,
        ...next(byRegion),
        floors: new Map([[topic, new Map([[0, new Map([['ns.events_eu', 120n]])]])]]),
      },
      {
        generation: 2,
        ...next(byRegion),
        floors: new Map([
          [
            topic,
            new Map([
              [0, new Map([['ns.events_us', 130n]])],
              [1, new Map([['ns.events_us', 20n]])],
            ]),
          ],
        ]),
      },
    ],
  }
  const kept = withoutPassedFloors(record, markerOf({ 0: 125n, 1: 10n }))
  assert.deepEqual(floors(kept), [
    { generation: 2, floors: [`${topic}/0/ns.events_us@130`, `${topic}/1/ns.events_us@20`] },
  ])
  assert.deepEqual(withoutPassedFloors(record, markerOf({ 0: 130n, 1: 20n })).earlier, [])
})
