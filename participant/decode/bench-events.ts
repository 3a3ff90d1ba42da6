// The input of both decode benchmarks: this folder's decode.bench.ts (decode alone) and
// bench/participant.bench.ts (topic to ready WAL files). A 1 KB JSON event and a 12-column
// mapping: strings, a long, timestamptz from ISO text and from epoch ms, a double, a boolean,
// nested paths, a list<string>; the same mapping routed by a field into N tables. Benchmarks only:
// index.ts does not export it.
import { type DatasetConfig, parseConfig } from '../../shared/config/index.ts'

export const benchMapping = {
  event_id: 'id',
  ts: 'timestamp',
  sent: 'sent_ms',
  user_id: 'user.id',
  user_name: 'user.name',
  country: 'user.geo.country',
  kind: 'type',
  amount: 'details.amount',
  currency: 'details.currency',
  ok: 'details.ok',
  seq: 'context.session.seq',
  tags: 'user.tags',
}
export const benchSchema = {
  event_id: 'string not null',
  ts: 'timestamptz',
  sent: 'timestamptz',
  user_id: 'long',
  user_name: 'string',
  country: 'string',
  kind: 'string',
  amount: 'double',
  currency: 'string',
  ok: 'boolean',
  seq: 'long',
  tags: 'list<string>',
}

/** Event `i`, padded to 1,024 bytes with text an event would carry (a description, a user agent). */
export function benchEvent(i: number): Buffer {
  const ms = 1_709_290_800_000 + i * 37
  const body = {
    id: `evt-${i.toString(36).padStart(8, '0')}`,
    timestamp: new Date(ms).toISOString(),
    sent_ms: ms + 5,
    type: ['click', 'view', 'purchase', 'scroll'][i % 4],
    user: {
      id: 1_000_000 + (i % 50_000),
      name: `user ${i % 50_000}`,
      email: `user${i % 50_000}@example.com`,
      geo: { country: ['CH', 'DE', 'FR', 'JP'][i % 4], city: 'Zürich', lat: 47.3769, lon: 8.5417 },
      tags: ['beta', 'mobile', `cohort-${i % 12}`],
    },
    details: { amount: (i % 10_000) / 100, currency: 'EUR', ok: i % 3 !== 0, sku: `SKU-${i % 997}`, qty: i % 5 },
    context: {
      session: { id: `s-${(i * 7919) % 100_000}`, seq: i % 1000 },
      app: { name: 'shop', version: '4.12.1', build: 20240301 },
      device: { os: 'Android', model: 'Pixel 8', screen: { w: 1080, h: 2400 } },
      page: { url: `https://shop.example.com/p/${i % 997}?ref=home&utm_source=newsletter`, referrer: null },
    },
    flags: [true, false, i % 2 === 0],
  }
  const base = JSON.stringify({ ...body, note: '' })
  return Buffer.from(
    JSON.stringify({ ...body, note: 'lorem ipsum '.repeat(100).slice(0, 1024 - Buffer.byteLength(base)) }),
  )
}

/** The benchmarks' dataset: `topic` through the 12-column mapping, bad records skipped. */
export function benchDataset(topic = 'bench', brokers = ['127.0.0.1:9092']): DatasetConfig {
  return configured(topic, brokers, { customMapping: benchMapping, schema: benchSchema })
}

/**
 * The same topic into a dataset that infers its columns (no mapping): every field of the event
 * becomes a column (nested objects as structs), `timestamp` a timestamptz, and `details.amount`
 * declared a double (its first value, 0, would make an integer column that 0.01 cannot enter).
 */
export function benchInferredDataset(topic = 'bench', brokers = ['127.0.0.1:9092']): DatasetConfig {
  return configured(topic, brokers, {
    schema: { details: 'struct<amount: double>' },
    timestampFields: ['timestamp'],
  })
}

/**
 * The route of `benchRoutedDataset`: `sent_ms` (epoch ms, 37 apart from one event to the next)
 * modulo `tables`, an integer in [0, tables). 37 is prime, so any `tables` it does not divide gets
 * every value equally often over `tables` consecutive events (and over every third event, as a
 * topic of 3 partitions hands them out, unless 3 divides it too). A JMESPath expression, so the
 * decode evaluates it with the interpreter, not the plain-path loop.
 */
export function benchRouteField(tables: number): string {
  if (!(Number.isSafeInteger(tables) && tables > 0)) throw new Error(`tables must be a positive integer, not ${tables}`)
  return `sent_ms % \`${tables}\``
}

/**
 * A skewed route: nine hot tables (values 1 to 9) take nine events in ten, and `rare` tables
 * (values 0, 10, ..., 10 * (rare - 1)) the tenth, each equally often over 10 * rare events. The
 * events whose `sent_ms` ends in 0 are the rare ones; 370 (ten steps of 37) walks every multiple
 * of 10 below 10 * rare, as the gcd of 37 and rare is 1 unless 37 divides rare.
 */
export function benchHotRouteField(rare: number): string {
  if (!(Number.isSafeInteger(rare) && rare > 0)) throw new Error(`rare must be a positive integer, not ${rare}`)
  return `sent_ms % \`10\` == \`0\` && sent_ms % \`${10 * rare}\` || sent_ms % \`10\``
}

/**
 * The mapped dataset (benchDataset) routed by benchRouteField into `tables` tables,
 * `bench.events_0` to `bench.events_<tables - 1>` (or by `field`, e.g. benchHotRouteField);
 * `bench.events` is then the ledger. A table about to open with `maxOpenTables` open makes the
 * shared WAL evict the least recently used first.
 */
export function benchRoutedDataset(
  tables: number,
  topic = 'bench',
  brokers = ['127.0.0.1:9092'],
  maxOpenTables = 100,
  field = benchRouteField(tables),
): DatasetConfig {
  return configured(topic, brokers, {
    customMapping: benchMapping,
    schema: benchSchema,
    route: { field, table: 'bench.events_{value}', maxOpenTables },
  })
}

function configured(topic: string, brokers: string[], columns: Record<string, unknown>): DatasetConfig {
  const [dataset] = parseConfig(
    JSON.stringify({
      kafka: { brokers },
      catalog: { type: 'rest', uri: 'http://127.0.0.1:8181' },
      ingestion: { wal: { dir: '/unused' } },
      datasets: [{ name: 'bench', topic, table: 'bench.events', badRecords: 'skip', ...columns }],
    }),
    'bench',
    {},
  ).datasets
  if (!dataset) throw new Error('no dataset')
  return dataset
}
