// Decode throughput on 1 KB JSON events with a 12-column mapping (strings, long, timestamptz from
// an ISO string and from epoch ms, double, boolean, nested paths, a list<string>). Not part of the
// tests. Run: node participant/decode/decode.bench.ts [events-per-run]
//
// Prints decodes/s and MB/s of JSON (median of 5 runs after a warm-up), the whole decode with and
// without the plain-path shortcut, and the split: UTF-8 + depth check, JSON.parse, mapping,
// conversion. The phases run the decoder's own methods over precomputed inputs; conversion is
// (mapping + conversion) minus mapping, since convert() reads what map() wrote.
import type { StructValue } from '../../shared/iceberg/index.ts'
import { RecordDecoder } from './decoder.ts'
import { datasetOf } from './test-support.ts'
import { utf8Text, withinDepth } from './text.ts'

const mapping = {
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
const schema = {
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

function event(i: number): Buffer {
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
  // Pad to 1,024 bytes with text an event would carry (a description, a user agent).
  return Buffer.from(
    JSON.stringify({ ...body, note: 'lorem ipsum '.repeat(100).slice(0, 1024 - Buffer.byteLength(base)) }),
  )
}

const count = Number(process.argv[2] ?? 20_000)
const events = Array.from({ length: count }, (_, i) => event(i))
const totalBytes = events.reduce((sum, e) => sum + e.length, 0)
const dataset = datasetOf(mapping, schema)
const options = { maxRecordBytes: 1 << 20 }
const fast = new RecordDecoder(dataset, options)
const interpreted = new RecordDecoder(dataset, options, { plainPaths: false })

// Precomputed inputs of each phase.
const texts = events.map((e) => utf8Text(e) ?? '')
const parsed = events.map((e) => fast.parse(e))

let sink = 0
const phases: Record<string, () => void> = {
  'decode (plain-path shortcut)': () => {
    for (const e of events) sink += (fast.decode(e) as StructValue).event_id === null ? 1 : 0
  },
  'decode (interpreter only)': () => {
    for (const e of events) sink += (interpreted.decode(e) as StructValue).event_id === null ? 1 : 0
  },
  'UTF-8 decode + depth check': () => {
    for (const e of events) sink += withinDepth(utf8Text(e) ?? '', 64) ? 1 : 0
  },
  'JSON.parse': () => {
    for (const t of texts) sink += JSON.parse(t) === null ? 1 : 0
  },
  mapping: () => {
    for (const p of parsed) fast.map(p)
  },
  'mapping (interpreter only)': () => {
    for (const p of parsed) interpreted.map(p)
  },
  'mapping + conversion': () => {
    for (const p of parsed) {
      fast.map(p)
      sink += fast.convert().ok === null ? 1 : 0
    }
  },
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

// Rounds interleave the phases, so a burst of load from elsewhere on the machine lands on all of
// them rather than on one.
const entries = Object.entries(phases)
for (const [, run] of entries) {
  run() // warm-up: lets V8 optimize before timing
  run()
}
const seconds = new Map<string, number[]>(entries.map(([name]) => [name, []]))
for (let r = 0; r < 5; r++) {
  for (const [name, run] of entries) {
    const start = process.hrtime.bigint()
    run()
    seconds.get(name)?.push(Number(process.hrtime.bigint() - start) / 1e9)
  }
}
const results = new Map([...seconds].map(([name, runs]) => [name, median(runs)]))

const perEvent = (s: number) => ((s / count) * 1e9).toFixed(0).padStart(6)
console.log(
  `${count} events of ${(totalBytes / count).toFixed(0)} bytes, 12 columns; node ${process.version}; median of 5 runs`,
)
console.log(`${'phase'.padEnd(30)} ${'ns/event'.padStart(8)} ${'events/s'.padStart(11)} ${'MB/s'.padStart(7)}`)
for (const [name, s] of results) {
  const rate = count / s
  console.log(
    `${name.padEnd(30)} ${perEvent(s).padStart(8)} ${rate.toFixed(0).padStart(11)} ${(totalBytes / s / 1e6).toFixed(1).padStart(7)}`,
  )
}
const mappingSeconds = results.get('mapping') ?? 0
const conversion = (results.get('mapping + conversion') ?? 0) - mappingSeconds
console.log(`${'conversion (difference)'.padEnd(30)} ${perEvent(conversion).padStart(8)}`)
if (sink === -1) console.log(sink)
