import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseConfig } from './load.ts'
import { routeCanName, routedTable, routeNamespaces, routeValueName } from './routes.ts'
import { oneDataset, refusal } from './test-support.ts'

const head = `kafka:
  brokers: [127.0.0.1:9092]
catalog:
  type: rest
  uri: http://127.0.0.1:8181
`

/** The one dataset with `route` (YAML flow mapping) added. */
const routed = (route: string, extra = '') => `${head}${oneDataset}    route: ${route}\n${extra}`

describe('a dataset route', () => {
  test('is resolved with its defaults: values folded to lower case, the template kept', () => {
    const [dataset] = parseConfig(
      routed(`{field: region, table: 'analytics.events_{value}', values: [EU, us, 7, true]}`),
      'floe.yaml',
      {},
    ).datasets
    const route = dataset?.route
    assert.ok(route)
    assert.deepEqual(
      [route.field, route.source, route.table, [...(route.values ?? [])], route.fallback, route.maxOpenTables],
      ['region', undefined, 'analytics.events_{value}', ['eu', 'us', '7', 'true'], undefined, 100],
    )
    assert.equal(routedTable(route, 'eu'), 'analytics.events_eu')
  })

  test('without one, every record goes to the table', () => {
    assert.equal(parseConfig(`${head}${oneDataset}`, 'floe.yaml', {}).datasets[0]?.route, undefined)
  })

  test('may read a Kafka coordinate that has few values', () => {
    const [dataset] = parseConfig(
      routed(`{field: $kafka.headers.tenant, table: 'ns.t_{value}', fallback: ns.other, maxOpenTables: 8}`),
      'floe.yaml',
      {},
    ).datasets
    assert.deepEqual(dataset?.route?.source, { kind: 'header', name: 'tenant' })
    assert.deepEqual([dataset?.route?.fallback, dataset?.route?.maxOpenTables], ['ns.other', 8])
  })

  const refusals: [string, string, RegExp][] = [
    ['no {value}', `{field: region, table: ns.events}`, /datasets\[0\]\.route\.table: write \{value\} once/],
    ['{value} twice', `{field: r, table: 'ns.e_{value}_{value}'}`, /route\.table: write \{value\} once/],
    [
      '{value} in the namespace',
      `{field: r, table: 'ns_{value}.events'}`,
      /route\.table: \{value\} goes in the table's name/,
    ],
    ['no namespace', `{field: r, table: 'events_{value}'}`, /route\.table: expected namespace\.table/],
    ['a field that is not JMESPath', `{field: 'a[', table: 'ns.e_{value}'}`, /route\.field: not a JMESPath expression/],
    [
      'a route by offset',
      `{field: $kafka.offset, table: 'ns.e_{value}'}`,
      /route\.field: a route by \$kafka\.offset would make a table per record/,
    ],
    [
      'an unknown $kafka source',
      `{field: $kafka.nope, table: 'ns.e_{value}'}`,
      /route\.field: \$kafka\.nope names no Kafka source/,
    ],
    [
      'a listed value that is no name',
      `{field: r, table: 'ns.e_{value}', values: [eu, 'a.b']}`,
      /route\.values\[1\]: the route value 'a\.b' has a character/,
    ],
    [
      'a listed value that names the ledger',
      `{field: r, table: 'analytics.{value}', values: [events]}`,
      /route\.values\[0\]: routes to analytics\.events, the dataset's table/,
    ],
    [
      'a fallback that is the ledger',
      `{field: r, table: 'ns.e_{value}', fallback: analytics.events}`,
      /route\.fallback: analytics\.events is the dataset's table/,
    ],
    [
      'a fallback without a namespace',
      `{field: r, table: 'ns.e_{value}', fallback: other}`,
      /route\.fallback: expected namespace\.table/,
    ],
    ['an unknown key', `{field: r, table: 'ns.e_{value}', tables: 3}`, /route\.tables: unknown key/],
    ['no open table', `{field: r, table: 'ns.e_{value}', maxOpenTables: 0}`, /route\.maxOpenTables/],
  ]
  for (const [what, route, message] of refusals) {
    test(`refuses ${what}, naming the key`, () => assert.match(refusal(routed(route)), message))
  }

  test('refuses a raw archive or a dataset without a mapping', () => {
    const raw = `${head}ingestion:\n  wal:\n    dir: /tmp/w\ndatasets:\n  - name: a\n    topic: a\n    table: ns.a\n    mode: raw\n    badRecords: skip\n    route: {field: $kafka.topic, table: 'ns.a_{value}'}\n`
    assert.match(refusal(raw), /datasets\[0\]\.route: a raw archive goes to one table/)
    const inferred = raw.replace('    mode: raw\n', '')
    assert.match(refusal(inferred), /datasets\[0\]\.route: a routed dataset maps its columns/)
  })

  test('refuses the per-partition WAL layout, naming the layout', () => {
    const perPartition = routed(`{field: r, table: 'ns.e_{value}'}`).replace(
      '    dir: /tmp/floe-wal\n',
      '    dir: /tmp/floe-wal\n    layout: partition\n',
    )
    assert.match(refusal(perPartition), /ingestion\.wal\.layout: a dataset with a route writes the shared layout/)
  })
})

describe('a route value as a table name', () => {
  const cases: [unknown, string][] = [
    ['EU-West_1', 'eu-west_1'],
    [42, '42'],
    [-3, '-3'],
    [false, 'false'],
  ]
  for (const [value, name] of cases) {
    test(`${JSON.stringify(value)} names ${name}`, () => assert.deepEqual(routeValueName(value), { name }))
  }
  const refused: [unknown, RegExp][] = [
    [undefined, /no route value/],
    [null, /no route value/],
    ['', /empty/],
    ['a.b', /character other than/],
    ['../etc', /character other than/],
    ['x'.repeat(101), /longer than 100/],
    [1.5, /not the number 1\.5/],
    [2 ** 60, /not the number/],
    [{ a: 1 }, /not an object/],
    [['a'], /not an array/],
  ]
  for (const [value, reason] of refused) {
    test(`${String(value).slice(0, 20)} names none`, () => {
      const result = routeValueName(value)
      assert.ok('refused' in result)
      assert.match(result.refused, reason)
    })
  }
})

describe('the tables a route can name', () => {
  const route = { table: 'analytics.events_{value}_v1', values: undefined, fallback: 'other.events_rest' }
  const ledger = 'analytics.events_progress_v1'
  const cases: [string, boolean][] = [
    ['analytics.events_eu_v1', true],
    ['analytics.events_2024-q1_v1', true],
    ['other.events_rest', true],
    [ledger, false],
    ['analytics.events__v1', false],
    ['analytics.events_v1', false],
    ['analytics.events_EU_v1', false],
    ['analytics.events_a.b_v1', false],
    ['analytics.events_eu', false],
    ['analytics.orders_eu_v1', false],
    ['staging.events_eu_v1', false],
    [`analytics.events_${'x'.repeat(101)}_v1`, false],
  ]
  for (const [table, named] of cases) {
    test(`${table.slice(0, 40)}: ${named ? 'named' : 'not named'}`, () => {
      assert.equal(routeCanName(route, ledger, table), named)
    })
  }

  test('only listed values, when the route lists them', () => {
    const listed = { ...route, values: new Set(['eu', 'us']) }
    assert.equal(routeCanName(listed, ledger, 'analytics.events_eu_v1'), true)
    assert.equal(routeCanName(listed, ledger, 'analytics.events_apac_v1'), false)
    assert.equal(routeCanName(listed, ledger, 'other.events_rest'), true)
  })

  test("in the template's namespace and the fallback's", () => {
    assert.deepEqual(routeNamespaces(route), ['analytics', 'other'])
    assert.deepEqual(routeNamespaces({ table: 'a.b.t_{value}', fallback: 'a.b.rest' }), ['a.b'])
    assert.deepEqual(routeNamespaces({ table: 'a.t_{value}', fallback: undefined }), ['a'])
  })
})
