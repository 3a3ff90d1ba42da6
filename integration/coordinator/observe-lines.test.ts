// The lines `floe observe` prints, from decoded control messages (no broker needed): one per
// message, and a summary when an ACK closes a round whose START was seen.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { formatLine, jsonLine, type ObservedLine, RoundWatch } from '../../cli/observe.ts'
import type { ControlBody, ControlMessage, DataFileEntry } from '../../protocol/index.ts'
import { parseJson } from '../../shared/json/index.ts'

const commitId = '3f2a9c1e-0000-4000-8000-00000000000a'
const t0 = Date.UTC(2025, 10, 30, 12, 0, 0)
const bigSnapshot = 2n ** 62n + 5n

function message(
  body: ControlBody,
  worker: string,
  at: number,
  overrides: Partial<ControlMessage> = {},
): ControlMessage {
  return {
    dataset: 'events',
    group: 'floe-events',
    commitId,
    sender: { workerId: worker, memberId: `${worker}-m`, generation: 4 },
    timeMs: t0 + at,
    body,
    ...overrides,
  }
}

function entry(path: string, records: bigint): DataFileEntry {
  return {
    filePath: path,
    fileFormat: 'PARQUET',
    specId: 0,
    partitionJson: new Map(),
    recordCount: records,
    fileSizeInBytes: 1000n,
  } as DataFileEntry
}

const round: ControlMessage[] = [
  message(
    { type: 'StartCommit', snapshotId: 11n, tableOffsets: [{ topic: 'events', partition: 0, offset: 100n }] },
    'coord',
    0,
  ),
  message(
    {
      type: 'EndCommit',
      expectedPartitions: [0, 1, 2, 3].map((partition) => ({ topic: 'events', partition })),
    },
    'coord',
    2000,
  ),
  message(
    {
      type: 'WriteStatus',
      partitions: [
        {
          topic: 'events',
          partition: 0,
          kind: 'data',
          rangeStart: 100n,
          rangeEnd: 2n ** 53n + 1n,
          files: [entry('a.parquet', 3n), entry('b.parquet', 4n)],
          origin: 'table',
        },
        { topic: 'events', partition: 1, kind: 'empty', rangeStart: 50n, rangeEnd: 50n, files: [] },
      ],
    },
    'worker-a',
    2100,
  ),
  message(
    {
      type: 'WriteStatus',
      partitions: [
        {
          topic: 'events',
          partition: 2,
          kind: 'error',
          rangeStart: 0n,
          rangeEnd: 0n,
          files: [],
          error: 'upload failed',
        },
      ],
    },
    'worker-b',
    2400,
  ),
  message(
    {
      type: 'CommitAcked',
      snapshotId: bigSnapshot,
      committedOffsets: [{ topic: 'events', partition: 0, offset: 2n ** 53n + 1n }],
      committedFiles: [{ topic: 'events', partition: 0, filePaths: ['a.parquet', 'b.parquet'] }],
      rejections: [{ topic: 'events', partition: 3, reason: 'behind-table', tableOffset: 70n }],
    },
    'coord',
    2900,
  ),
]

describe('floe observe lines', () => {
  const watch = new RoundWatch()
  const lines: ObservedLine[] = round.flatMap((m) => watch.observe(m))

  test('every message gets one line, and the ACK of a round seen from its START a summary', () => {
    assert.deepEqual(
      lines.map((l) => (l.kind === 'round' ? 'round' : l.type)),
      ['StartCommit', 'EndCommit', 'WriteStatus', 'WriteStatus', 'CommitAcked', 'round'],
    )
  })

  test('the summary says who answered, what is missing, how long each phase took and the outcome', () => {
    const summary = lines.at(-1)
    assert.ok(summary?.kind === 'round')
    assert.equal(summary.outcome, 'committed')
    assert.equal(summary.snapshotId, bigSnapshot)
    assert.equal(summary.coordinator, 'coord')
    assert.deepEqual(summary.answered, [
      { worker: 'worker-a', partitions: [0, 1] },
      { worker: 'worker-b', partitions: [2] },
    ])
    assert.deepEqual(summary.missing, [3])
    assert.deepEqual(summary.phasesMs, { startToEnd: 2000, endToLastStatus: 400, lastStatusToAck: 500 })
    assert.equal(summary.totalMs, 2900)
    assert.equal(summary.committed, 1)
    assert.equal(summary.rejected, 1)
  })

  const human: Array<[string, RegExp]> = [
    [
      'StartCommit',
      /^2025-11-30T12:00:00\.000Z events 3f2a9c1e StartCommit +coord {2}table offsets p0=100 \(snapshot 11\)$/,
    ],
    ['EndCommit', /EndCommit +coord {2}expects 4 partitions$/],
    ['worker-a', /worker-a {2}p0 \[100,9007199254740993\) 2 files 7 records; p1 empty$/],
    ['worker-b', /worker-b {2}p2 error: upload failed$/],
    [
      'CommitAcked',
      /snapshot 4611686018427387909; committed p0=9007199254740993 \(2 files\); rejected p3 behind-table \(table at 70\)$/,
    ],
    [
      'ROUND',
      /ROUND committed \(snapshot 4611686018427387909, 1 committed, 1 rejected\): answered 3\/4 \(worker-a: p0 p1; worker-b: p2\), missing p3; start→end 2\.00 s, end→last status 0\.40 s, last status→ack 0\.50 s, total 2\.90 s$/,
    ],
  ]
  for (const [what, pattern] of human) {
    test(`the human line of ${what} reads as an operator expects`, () => {
      const text = lines.map(formatLine).find((line) => line.includes(what))
      assert.match(text ?? '', pattern)
    })
  }

  test('a JSON line is one object per line with offsets and snapshot ids exact past 2^53', () => {
    const texts = lines.map(jsonLine)
    for (const text of texts) assert.doesNotMatch(text, /\n/)
    const ack = parseJson(texts[4] ?? '') as Record<string, unknown>
    assert.equal(ack['type'], 'CommitAcked')
    assert.equal(ack['snapshotId'], bigSnapshot)
    assert.deepEqual(ack['committed'], [{ topic: 'events', partition: 0, offset: 2n ** 53n + 1n, files: 2 }])
    const status = parseJson(texts[2] ?? '') as { partitions: Array<Record<string, unknown>> }
    assert.deepEqual(status.partitions[0]?.['range'], [100, 2n ** 53n + 1n])
    assert.equal(status.partitions[0]?.['records'], 7)
  })

  test('an ACK of a round whose START was not seen, or of another dataset, gets no summary', () => {
    const fresh = new RoundWatch()
    assert.equal(fresh.observe(round[4]!).length, 1)
    fresh.observe(round[0]!)
    const otherDataset = { ...round[4]!, dataset: 'clicks' }
    assert.equal(fresh.observe(otherDataset).length, 1)
    assert.equal(fresh.observe(round[4]!).length, 2)
  })

  test('a round nobody answered reports every partition missing and unknown status phases', () => {
    const fresh = new RoundWatch()
    const [start, end, , , ack] = round
    const summary = [start!, end!, ack!].flatMap((m) => fresh.observe(m)).at(-1)
    assert.ok(summary?.kind === 'round')
    assert.deepEqual(summary.missing, [0, 1, 2, 3])
    assert.deepEqual(summary.phasesMs, { startToEnd: 2000, endToLastStatus: null, lastStatusToAck: 900 })
    assert.match(formatLine(summary), /answered 0\/4, missing p0 p1 p2 p3; .* end→last status \?, /)
  })
})
