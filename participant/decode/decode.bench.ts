// Decode throughput on 1 KB JSON events with a 12-column mapping (strings, long, timestamptz from
// an ISO string and from epoch ms, double, boolean, nested paths, a list<string>). Not part of the
// tests. Run: node participant/decode/decode.bench.ts [events-per-run]
//
// Prints decodes/s and MB/s of JSON (median of 5 runs after a warm-up), the whole decode with and
// without the plain-path shortcut, and the split: UTF-8 + depth check, JSON.parse, mapping,
// conversion. The phases run the decoder's own methods over precomputed inputs; conversion is
// (mapping + conversion) minus mapping, since convert() reads what map() wrote. One more whole
// decode adds four columns from the record's Kafka coordinates (topic, offset, timestamp, key), two
// route each record by a field of its value (into 4 tables, and into 997: the table's number), and
// the raw archive mode's row (every coordinate, value and key as bytes, no JSON parse) is timed too,
// and the decode of a dataset that infers its columns (every field of the event by name: 9 columns,
// 29 leaf values in their structs and lists; the schema already widened by the first events).
import type { StructValue } from '../../shared/iceberg/index.ts'
import { applyUpdates, currentSchema, newTableMetadata, planWidening } from '../../shared/iceberg/metadata/index.ts'
import type { RecordsBatch } from '../../shared/kafka/index.ts'
import { benchEvent, benchInferredDataset, benchMapping, benchSchema } from './bench-events.ts'
import { RecordDecoder } from './decoder.ts'
import { InferringDecoder, SchemaWidening } from './inferring-decoder.ts'
import { BatchCoordinates } from './kafka-columns.ts'
import { datasetOf, rawArchiveOf } from './test-support.ts'
import { utf8Text, withinDepth } from './text.ts'

const count = Number(process.argv[2] ?? 20_000)
const events = Array.from({ length: count }, (_, i) => benchEvent(i))
const totalBytes = events.reduce((sum, e) => sum + e.length, 0)
const dataset = datasetOf(benchMapping, benchSchema)
const options = { maxRecordBytes: 1 << 20 }
const fast = new RecordDecoder(dataset, options)
const interpreted = new RecordDecoder(dataset, options, { plainPaths: false })
const withKafka = new RecordDecoder(
  datasetOf(
    {
      ...benchMapping,
      k_topic: '$kafka.topic',
      k_offset: '$kafka.offset',
      k_at: '$kafka.timestamp',
      k_key: '$kafka.key',
    },
    { ...benchSchema, k_topic: 'string', k_offset: 'long', k_at: 'timestamptz', k_key: 'string' },
  ),
  options,
)
const archive = new RecordDecoder(rawArchiveOf(), options)
// routed by a field of the value into one table per value: 4 (the event type) and 997 (the sku)
const routedBy = (field: string) =>
  new RecordDecoder(datasetOf(benchMapping, benchSchema, { route: { field, table: 'bench.events_{value}' } }), options)
const routedFew = routedBy('type')
const routedMany = routedBy('details.sku')
const inferred = inferringDecoder()

/** The decoder of the inferred dataset, its table widened by the first events as the participant does. */
function inferringDecoder(): InferringDecoder {
  const dataset = benchInferredDataset()
  let metadata = newTableMetadata({ location: 'file:///bench', schema: dataset.icebergSchema, nowMs: 0 })
  const decoder = new InferringDecoder(dataset, options, currentSchema(metadata))
  for (const event of events.slice(0, 100)) {
    try {
      decoder.decode(event)
    } catch (error) {
      if (!(error instanceof SchemaWidening)) throw error
      const change = planWidening(metadata, error.fields)
      if (change.commit) metadata = applyUpdates(metadata, change.commit.updates, 0)
      decoder.useSchema(currentSchema(metadata))
    }
  }
  return decoder
}
// the events as one fetched batch, as the record loop hands them to the decoder
const batch = {
  attributes: 0,
  firstOffset: 1_000_000n,
  firstTimestamp: 1_764_547_200_000n,
  records: events.map((value, i) => ({
    offsetDelta: i,
    timestampDelta: BigInt(i),
    key: Buffer.from(`k-${i}`),
    value,
    headers: [[Buffer.from('trace'), Buffer.from(`t-${i}`)]],
  })),
} as unknown as RecordsBatch
const coordinates = new BatchCoordinates('events', 0)

// Precomputed inputs of each phase.
const texts = events.map((e) => utf8Text(e) ?? '')
const parsed = events.map((e) => fast.parse(e))

let sink = 0
const phases: Record<string, () => void> = {
  'decode (plain-path shortcut)': () => {
    for (const e of events) sink += (fast.decode(e) as StructValue).event_id === null ? 1 : 0
  },
  'decode, routed to 4 tables': () => {
    for (const e of events) sink += routedFew.decode(e).event_id === null ? routedFew.table : 0
  },
  'decode, routed to 997 tables': () => {
    for (const e of events) sink += routedMany.decode(e).event_id === null ? routedMany.table : 0
  },
  'decode + 4 $kafka columns': () => {
    for (const record of batch.records) {
      const row = withKafka.decode(record.value ?? undefined, coordinates.at(batch, record))
      sink += row.event_id === null ? 1 : 0
    }
  },
  'raw archive row (mode: raw)': () => {
    for (const record of batch.records) {
      const row = archive.decode(record.value ?? undefined, coordinates.at(batch, record))
      sink += row.value === null ? 1 : 0
    }
  },
  'decode, inferred columns': () => {
    for (const e of events) sink += inferred.decode(e).id === null ? 1 : 0
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
