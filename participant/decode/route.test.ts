import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../shared/index.ts'
import { compileDecoder, type Decoder, type RecordCoordinates } from './index.ts'
import { datasetOf } from './test-support.ts'

const mapping = { id: 'id', region: 'region' }
const schema = { id: 'string not null', region: 'string' }
const options = { maxRecordBytes: 1 << 20 }

function routedDecoder(route: Record<string, unknown>): Decoder {
  return compileDecoder(datasetOf(mapping, schema, { route }), options)
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value))

/** The table each value is routed to, by name. */
function tablesOf(decoder: Decoder, values: unknown[], record?: RecordCoordinates): string[] {
  return values.map((value) => {
    decoder.decode(json(value), record)
    return decoder.routeTables?.names[decoder.table] ?? '(none)'
  })
}

function coordinates(extra: Partial<RecordCoordinates>): RecordCoordinates {
  return {
    topic: 'orders.eu',
    partition: 3,
    offset: 10n,
    timestampMs: 0n,
    timestampType: 'CreateTime',
    key: undefined,
    value: undefined,
    headers: [],
    ...extra,
  }
}

describe('a routed dataset decodes each record with its table', () => {
  test('by a field of the value: tables numbered as they first appear, one per value folded to lower case', () => {
    const decoder = routedDecoder({ field: 'region', table: 'ns.events_{value}' })
    const regions = ['eu', 'us', 'EU', 'eu', 'apac', 'us']
    assert.deepEqual(
      tablesOf(
        decoder,
        regions.map((region, i) => ({ id: `e${i}`, region })),
      ),
      ['ns.events_eu', 'ns.events_us', 'ns.events_eu', 'ns.events_eu', 'ns.events_apac', 'ns.events_us'],
    )
    assert.deepEqual(decoder.routeTables?.names, ['ns.events_eu', 'ns.events_us', 'ns.events_apac'])
  })

  test('by a JMESPath expression, a nested path or a number', () => {
    const nested = routedDecoder({ field: 'meta.tenant', table: 'ns.t_{value}' })
    assert.deepEqual(tablesOf(nested, [{ id: 'a', meta: { tenant: 7 } }]), ['ns.t_7'])
    const expression = routedDecoder({ field: "join('_', [kind, region])", table: 'ns.t_{value}' })
    assert.deepEqual(tablesOf(expression, [{ id: 'a', kind: 'Click', region: 'eu' }]), ['ns.t_click_eu'])
  })

  test('a value that names no table goes to the fallback', () => {
    const decoder = routedDecoder({ field: 'zone', table: 'ns.e_{value}', values: ['eu', 'us'], fallback: 'ns.rest' })
    const values = [{ zone: 'eu' }, { zone: 'mars' }, {}, { zone: 'a.b' }, { zone: { x: 1 } }, { zone: 'US' }]
    assert.deepEqual(
      tablesOf(
        decoder,
        values.map((v, i) => ({ id: `e${i}`, ...v })),
      ),
      ['ns.e_eu', 'ns.rest', 'ns.rest', 'ns.rest', 'ns.rest', 'ns.e_us'],
    )
    // the fallback is numbered first: it is known before any record
    assert.deepEqual(decoder.routeTables?.names, ['ns.rest', 'ns.e_eu', 'ns.e_us'])
  })

  const refusals: [string, unknown, RegExp][] = [
    ['absent', { id: 'a' }, /the record has no route value \(route\.field region\) and the route has no fallback/],
    ['not listed', { id: 'a', region: 'mars' }, /the route value 'mars' is not one of route\.values/],
    ['no name', { id: 'a', region: 'eu/../x' }, /has a character other than/],
    ['an object', { id: 'a', region: { eu: true } }, /not an object/],
  ]
  for (const [what, value, message] of refusals) {
    test(`without a fallback, a route value ${what} is refused as no-route`, () => {
      const decoder = routedDecoder({ field: 'region', table: 'ns.e_{value}', values: ['eu'] })
      assert.throws(
        () => decoder.decode(json(value)),
        (error) =>
          isFloeError(error, 'RECORD_MALFORMED') && error.details.reason === 'no-route' && message.test(error.message),
      )
    })
  }

  test('a JMESPath route that fails is refused as no-route', () => {
    const decoder = routedDecoder({ field: 'length(region)', table: 'ns.e_{value}' })
    assert.throws(
      () => decoder.decode(json({ id: 'a', region: 5 })),
      (error) => isFloeError(error, 'RECORD_MALFORMED') && error.details.reason === 'no-route',
    )
  })

  test('by the Kafka coordinates: the topic, the partition, a header, the key', () => {
    const header = (name: string, value: string) => [Buffer.from(name), Buffer.from(value)] as const
    const record = coordinates({ key: Buffer.from('Tenant-9'), headers: [header('tenant', 'acme')] })
    const cases: [string, string][] = [
      ['$kafka.topic', 'ns.t_orders.eu'],
      ['$kafka.partition', 'ns.t_3'],
      ['$kafka.headers.tenant', 'ns.t_acme'],
      ['$kafka.key', 'ns.t_tenant-9'],
    ]
    for (const [field, table] of cases) {
      const decoder = routedDecoder({ field, table: 'ns.t_{value}', fallback: 'ns.t_other' })
      assert.equal(decoder.readsCoordinates, true, field)
      if (field === '$kafka.topic') {
        // a topic name may hold a dot, which no table name part may
        assert.deepEqual(tablesOf(decoder, [{ id: 'a' }], record), ['ns.t_other'])
        assert.deepEqual(tablesOf(decoder, [{ id: 'a' }], { ...record, topic: 'clicks' }), ['ns.t_clicks'])
      } else {
        assert.deepEqual(tablesOf(decoder, [{ id: 'a' }], record), [table], field)
      }
    }
  })

  test("the row is the mapping's, whatever the table", () => {
    const decoder = routedDecoder({ field: 'region', table: 'ns.e_{value}' })
    assert.deepEqual(decoder.decode(json({ id: 'a', region: 'eu', extra: 1 })), { id: 'a', region: 'eu' })
  })

  test('an unrouted dataset has no tables and every row in table 0', () => {
    const decoder = compileDecoder(datasetOf(mapping, schema), options)
    decoder.decode(json({ id: 'a', region: 'eu' }))
    assert.deepEqual([decoder.routeTables, decoder.table], [undefined, 0])
  })
})
