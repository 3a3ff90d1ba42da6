// The scale benchmark's pure readers. Not part of `npm run test:unit` (bench/ is outside it):
// node --test bench/scale-probes.test.ts
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  bucketQuantile,
  bucketsSince,
  counterTotal,
  cpuTicksOfStat,
  histogramBuckets,
  peakRssOfStatus,
  quantile,
  roundsOfLog,
} from './scale-probes.ts'

describe('quantile', () => {
  test('nearest rank: the median of four is the second, p99 of a hundred the 99th, p100 the largest', () => {
    assert.equal(quantile([4, 1, 3, 2], 0.5), 2)
    assert.equal(
      quantile(
        Array.from({ length: 100 }, (_, i) => 100 - i),
        0.99,
      ),
      99,
    )
    assert.equal(quantile([5, 9, 1], 1), 9)
    assert.equal(quantile([7], 0.99), 7)
  })

  test('no values has no quantile', () => {
    assert.ok(Number.isNaN(quantile([], 0.5)))
  })
})

describe('/proc readers', () => {
  test('CPU ticks are utime + stime, counted after a command name that holds spaces and parentheses', () => {
    const stat = '4242 (node (floe) w1) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 11 0 99 0 0'
    assert.equal(cpuTicksOfStat(stat), 1234 + 567)
  })

  test('peak RSS is VmHWM in bytes', () => {
    assert.equal(peakRssOfStatus('Name:\tnode\nVmPeak:\t 999 kB\nVmHWM:\t  1024 kB\nVmRSS:\t 512 kB\n'), 1024 * 1024)
    assert.equal(peakRssOfStatus('Name:\tnode\n'), 0)
  })
})

describe('worker output readers', () => {
  test('committed rounds come from the coordinator lines, with their collecting and commit phases', () => {
    const rounds = roundsOfLog([
      { msg: 'perf 10s: ...' },
      {
        msg: 'round committed',
        time: '2026-12-05T03:00:00.000Z',
        records: '1200',
        missing: [],
        partial: false,
        phasesMs: { collecting: 812, committing: 95 },
      },
      { msg: 'round empty', records: '0', phasesMs: { collecting: 3, committing: 0 } },
      {
        msg: 'round committed',
        time: '2026-12-05T03:00:40.000Z',
        records: '7',
        missing: [3],
        partial: true,
        phasesMs: { collecting: 30000, committing: 120 },
      },
    ])
    const at = (time: string) => Date.parse(time)
    assert.deepEqual(rounds, [
      {
        at: at('2026-12-05T03:00:00.000Z'),
        records: 1200,
        collectingMs: 812,
        committingMs: 95,
        partial: false,
        complete: true,
      },
      {
        at: at('2026-12-05T03:00:40.000Z'),
        records: 7,
        collectingMs: 30000,
        committingMs: 120,
        partial: true,
        complete: false,
      },
    ])
  })

  test('a counter is summed over its label sets, and a longer name with the same start is not counted', () => {
    const text = [
      '# TYPE floe_records_received_total counter',
      'floe_records_received_total{dataset="a",partition="0"} 10',
      'floe_records_received_total{dataset="a",partition="1"} 32',
      'floe_records_received_total_extra 1000',
    ].join('\n')
    assert.equal(counterTotal(text, 'floe_records_received_total'), 42)
  })

  test("a histogram's p99 is the first bucket whose cumulative count reaches it, summed over workers", () => {
    const worker = (counts: number[]) =>
      [1, 2, 5, 10, '+Inf']
        .map((le, i) => `floe_commit_visibility_seconds_bucket{le="${le}",dataset="a"} ${counts[i]}`)
        .join('\n')
    // 200 observations: 150 by 2 s, 197 by 5 s, 199 by 10 s, 200 in all; p99 (198) needs the 10 s bucket.
    assert.equal(
      bucketQuantile(
        histogramBuckets(
          [worker([0, 100, 130, 132, 132]), worker([0, 50, 67, 67, 68])],
          'floe_commit_visibility_seconds',
        ),
        0.99,
      ),
      10,
    )
    assert.equal(
      bucketQuantile(histogramBuckets([worker([0, 0, 0, 0, 5])], 'floe_commit_visibility_seconds'), 0.5),
      Number.POSITIVE_INFINITY,
    )
    assert.ok(
      Number.isNaN(bucketQuantile(histogramBuckets([worker([0, 0, 0, 0, 0])], 'floe_commit_visibility_seconds'), 0.99)),
    )
  })

  test('what a histogram counted since an earlier scrape is the difference of their buckets', () => {
    const earlier = new Map([
      [10, 90],
      [60, 100],
      [Number.POSITIVE_INFINITY, 100],
    ])
    const later = new Map([
      [10, 390],
      [60, 400],
      [Number.POSITIVE_INFINITY, 400],
    ])
    // 100 warm-up observations, 10 of them past 10 s, put the whole run's p99 in the 60 s bucket;
    // the 300 after them all fell within 10 s.
    assert.equal(bucketQuantile(later, 0.99), 60)
    assert.equal(bucketQuantile(bucketsSince(later, earlier), 0.99), 10)
  })
})
