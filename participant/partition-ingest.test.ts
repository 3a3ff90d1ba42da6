// PartitionIngest over a real PartitionLog in a temporary folder, fed fetched batches shaped as the
// Kafka client returns them.
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, type TestContext, test } from 'node:test'
import { isFloeError } from '../shared/index.ts'
import type { FetchedPartition, RecordsBatch } from '../shared/kafka/index.ts'
import { compileDecoder } from './decode/index.ts'
import { datasetOf, inferredOf } from './decode/test-support.ts'
import { EarlierRoutes } from './earlier-routes.ts'
import { decodeFetched, PartitionIngest } from './partition-ingest.ts'
import { skipFloorsOf } from './skip-floors.ts'
import { PartitionLog } from './wal/index.ts'

const dataset = datasetOf({ id: 'id', n: 'n' }, { id: 'string not null', n: 'long' })
const decoder = compileDecoder(dataset, { maxRecordBytes: 1024 })

/** One record batch from `firstOffset`, values as given (undefined: a tombstone). */
function batch(firstOffset: bigint, values: (string | undefined)[]): RecordsBatch {
  return {
    firstOffset,
    length: 0,
    partitionLeaderEpoch: 0,
    magic: 2,
    crc: 0,
    attributes: 0,
    lastOffsetDelta: values.length - 1,
    firstTimestamp: 1_700_000_000_000n,
    maxTimestamp: 1_700_000_000_000n,
    producerId: -1n,
    producerEpoch: -1,
    firstSequence: -1,
    records: values.map((value, offsetDelta) => ({
      length: 0,
      attributes: 0,
      timestampDelta: BigInt(offsetDelta),
      offsetDelta,
      key: null,
      value: value === undefined ? null : Buffer.from(value),
      headers: [[Buffer.from('h'), Buffer.from('v')]],
    })),
  }
}

function fetched(from: bigint, batches: RecordsBatch[], next: bigint): FetchedPartition {
  return { partition: 0, from, batches, next, logStartOffset: 0n, highWatermark: next, outOfRange: false }
}

async function ingestAt(t: TestContext, position: bigint) {
  const dir = await mkdtemp(join(tmpdir(), 'floe-ingest-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const log = new PartitionLog({
    dir,
    topic: 'events',
    partition: 0,
    schema: dataset.icebergSchema,
    spec: dataset.icebergSpec,
    startOffset: position,
  })
  t.after(() => log.close())
  return { dir, ingest: new PartitionIngest({ log, position }) }
}

const good = (i: number) => JSON.stringify({ id: `e-${i}`, n: i })

describe('PartitionIngest', () => {
  test('skips the records before the position in a whole batch, and refuses bad records without stopping', async (t) => {
    const { ingest } = await ingestAt(t, 12n)
    const decoded = ingest.decode(
      fetched(12n, [batch(10n, [good(10), good(11), good(12), '{"id": ', undefined, good(15)])], 16n),
      decoder,
    )
    assert.equal(decoded.records, 4)
    assert.deepEqual(
      decoded.rows.map((row) => row.id),
      ['e-12', 'e-15'],
    )
    assert.deepEqual(
      decoded.bad.map(({ record, error }) => [record.offset, error.details.reason, record.headers.size]),
      [
        [13n, 'not-json', 1],
        [14n, 'empty', 1],
      ],
    )
    assert.equal(decoded.oldestTimestampMs, 1_700_000_000_000)
  })

  test('a bug is not a bad record: an exception that is not a refusal of the decoder stops the batch as INTERNAL_ERROR', async (t) => {
    const { ingest } = await ingestAt(t, 0n)
    const buggy = {
      ...decoder,
      decode: (value: Buffer | undefined) => {
        if (value?.toString() === good(1)) throw new TypeError("Cannot read properties of undefined (reading 'x')")
        return decoder.decode(value)
      },
    }
    assert.throws(
      () => ingest.decode(fetched(0n, [batch(0n, [good(0), good(1), 'nope'])], 3n), buggy),
      (error) => isFloeError(error, 'INTERNAL_ERROR') && error.fatal && /events\/0@1 .*a bug/.test(error.message),
    )
    assert.equal(ingest.position, 0n, 'nothing was appended past it')
  })

  test('an append moves the position; a rotation of only refused records still advances the range', async (t) => {
    const { ingest } = await ingestAt(t, 0n)
    await ingest.append(ingest.decode(fetched(0n, [batch(0n, [good(0), good(1)])], 2n), decoder))
    assert.equal(ingest.position, 2n)
    const first = await ingest.rotate('size')
    assert.deepEqual([first?.start, first?.end, first?.segments.length], [0n, 2n, 1])
    await ingest.append(ingest.decode(fetched(2n, [batch(2n, ['nope'])], 3n), decoder))
    const second = await ingest.rotate('commit')
    assert.deepEqual([second?.start, second?.end, second?.segments.length], [2n, 3n, 0])
    assert.deepEqual(
      ingest.uncommitted.map((r) => [r.start, r.end]),
      [
        [0n, 2n],
        [2n, 3n],
      ],
    )
    assert.equal(ingest.pendingSegments().length, 1)
  })

  test('knows the oldest record time of the rotations a status covers, and none for recovered ones', async (t) => {
    const { ingest } = await ingestAt(t, 0n)
    const late = batch(0n, [good(0)])
    late.firstTimestamp = 1_700_000_009_000n
    await ingest.append(ingest.decode(fetched(0n, [late], 1n), decoder))
    const first = await ingest.rotate('size')
    await ingest.append(ingest.decode(fetched(1n, [batch(1n, [good(1)])], 2n), decoder))
    const second = await ingest.rotate('commit')
    assert.ok(first && second)
    assert.equal(ingest.oldestTimestampMs([first]), 1_700_000_009_000)
    assert.equal(ingest.oldestTimestampMs([first, second]), 1_700_000_000_000)
    assert.equal(ingest.oldestTimestampMs([{ start: 5n, end: 6n, reason: 'recovered', segments: [] }]), undefined)
  })

  test('a commit up to an offset forgets the rotations that end there and deletes their files', async (t) => {
    const { dir, ingest } = await ingestAt(t, 0n)
    await ingest.append(ingest.decode(fetched(0n, [batch(0n, [good(0), good(1)])], 2n), decoder))
    await ingest.rotate('commit')
    await ingest.append(ingest.decode(fetched(2n, [batch(2n, [good(2)])], 3n), decoder))
    await ingest.rotate('size')
    assert.equal((await readdir(dir)).length, 4, 'two ready files and their sidecars')
    const deleted = await ingest.committed(2n)
    assert.deepEqual(
      deleted.map((s) => [s.start, s.end]),
      [[0n, 2n]],
    )
    assert.deepEqual(
      ingest.uncommitted.map((r) => [r.start, r.end]),
      [[2n, 3n]],
    )
    assert.equal((await readdir(dir)).length, 2)
    await ingest.committed(3n)
    assert.deepEqual(await readdir(dir), [])
  })

  test('a record the inferred schema cannot take stops the batch at its offset, after the refused ones before it', () => {
    const inferring = compileDecoder(
      inferredOf(),
      { maxRecordBytes: 1024 },
      {
        type: 'struct',
        'schema-id': 0,
        fields: [{ id: 1, name: 'id', required: false, type: 'string' }],
      },
    )
    const values = ['{"id": "a"}', 'not json', '{"id": "b", "new": 1}', '{"id": "c"}']
    const decoded = decodeFetched('events', 0, fetched(10n, [batch(10n, values)], 14n), inferring)
    assert.equal(decoded.next, 12n, 'read again from the record that needs the wider schema')
    assert.deepEqual(decoded.rows, [{ id: 'a' }])
    assert.equal(decoded.bad.length, 1)
    assert.equal(decoded.records, 2)
    assert.deepEqual(
      decoded.widening?.map((f) => [f.name, f.type]),
      [
        ['id', 'string'],
        ['new', 'int'],
      ],
    )
  })
})

describe('a routed dataset decodes each row with its table', () => {
  const routed = compileDecoder(
    datasetOf(
      { id: 'id', region: 'region' },
      { id: 'string not null', region: 'string' },
      {
        route: { field: 'region', table: 'ns.events_{value}' },
      },
    ),
    { maxRecordBytes: 1024 },
  )
  const values = ['eu', 'us', 'eu', 'us', 'eu'].map((region, i) => JSON.stringify({ id: `r${i}`, region }))

  test('every row with its table number, and a record that names no table dead-lettered', () => {
    const decoded = decodeFetched('events', 0, fetched(20n, [batch(20n, [...values, '{"id": "x"}'])], 26n), routed)
    assert.deepEqual(
      decoded.tables?.map((table) => routed.routeTables?.names[table]),
      ['ns.events_eu', 'ns.events_us', 'ns.events_eu', 'ns.events_us', 'ns.events_eu'],
    )
    assert.equal(decoded.rows.length, 5)
    assert.equal(decoded.bad.length, 1)
    assert.equal(decoded.skipped, undefined)
  })

  test("a table's rows below its skip floor are read for their positions only", () => {
    // ns.events_us holds the partition below 23: its record at 21 is not written again; eu's are
    const floors = skipFloorsOf(new Map([['ns.events_us', 23n]]))
    const decoded = decodeFetched('events', 0, fetched(20n, [batch(20n, values)], 25n), routed, floors)
    assert.deepEqual(
      decoded.rows.map((row) => row['id']),
      ['r0', 'r2', 'r3', 'r4'],
    )
    assert.deepEqual(
      decoded.tables?.map((table) => routed.routeTables?.names[table]),
      ['ns.events_eu', 'ns.events_eu', 'ns.events_us', 'ns.events_eu'],
    )
    assert.equal(decoded.records, 5)
    assert.equal(decoded.skipped, 1)
    assert.equal(decoded.next, 25n)
  })
  test("after a route switch, what an earlier route's tables hold above the ledger is read for its positions only", () => {
    // The earlier route sent records by `id`'s table; the ledger is at 20, and the earlier route's
    // ns.old_r1 holds the partition below 22, ns.old_r3 below 22 too (r3 at 23 is above: not held).
    const earlier = new EarlierRoutes()
    earlier.update([
      {
        generation: 1,
        definition: { field: 'id', table: 'ns.old_{value}' },
        floors: new Map([
          [
            'events',
            new Map([
              [
                0,
                new Map([
                  ['ns.old_r1', 22n],
                  ['ns.old_r3', 22n],
                ]),
              ],
            ]),
          ],
        ]),
      },
    ])
    const floors = earlier.of('events', 0)
    assert.equal(floors?.below, 22n)
    assert.equal(earlier.of('events', 1), undefined)
    const decoded = decodeFetched('events', 0, fetched(20n, [batch(20n, values)], 25n), routed, undefined, floors)
    assert.deepEqual(
      decoded.rows.map((row) => row['id']),
      ['r0', 'r2', 'r3', 'r4'],
    )
    assert.equal(decoded.skipped, 1)
    assert.equal(decoded.next, 25n)
    // both kinds of floor at once: ns.events_eu's own floor (from a rejection) skips r0 and r2 too
    const both = decodeFetched(
      'events',
      0,
      fetched(20n, [batch(20n, values)], 25n),
      routed,
      skipFloorsOf(new Map([['ns.events_eu', 23n]])),
      floors,
    )
    assert.deepEqual(
      both.rows.map((row) => row['id']),
      ['r3', 'r4'],
    )
  })

  test("a record the route names no table for is skipped, not dead-lettered, when an earlier route's table holds it", () => {
    // The earlier route had a fallback; this one has none. The regionless record at 21 went to
    // ns.old_rest, which holds the partition below 23; the one at 24 is past it: dead-lettered.
    const earlier = new EarlierRoutes()
    const byTable = new Map([['ns.old_rest', 23n]])
    earlier.update([
      {
        generation: 1,
        definition: { field: 'region', table: 'ns.old_{value}', values: ['eu'], fallback: 'ns.old_rest' },
        floors: new Map([['events', new Map([[0, byTable]])]]),
      },
    ])
    const regionless = '{"id": "x"}'
    const list = [values[0]!, regionless, 'not json', values[3]!, regionless]
    const decoded = decodeFetched(
      'events',
      0,
      fetched(20n, [batch(20n, list)], 25n),
      routed,
      undefined,
      earlier.of('events', 0),
    )
    assert.deepEqual(
      decoded.rows.map((row) => row['id']),
      ['r0', 'r3'],
    )
    // the unparsable record at 22 is below the floor too, but no route ever put it in a table
    assert.deepEqual(
      decoded.bad.map(({ record }) => record.offset),
      [22n, 24n],
    )
    assert.equal(decoded.skipped, 1)
    assert.equal(decoded.records, 5)
  })
})
