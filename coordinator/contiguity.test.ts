import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LogStartJump, PartitionWriteStatus } from '../protocol/index.ts'
import type { Progress } from '../shared/progress/index.ts'
import { advancesTable, checkContiguity, type RejectionReason } from './contiguity.ts'
import { empty, failed, topic, written } from './test-fixtures.ts'

const at = (offsets: Record<number, bigint>, other: Record<number, bigint> = {}): Progress =>
  new Map([
    [topic, new Map(Object.entries(offsets).map(([p, o]) => [Number(p), o]))],
    ['other-topic', new Map(Object.entries(other).map(([p, o]) => [Number(p), o]))],
  ])

type Verdict = { accepted: { lost?: bigint } } | { rejected: RejectionReason } | { unchanged: true } | { errored: true }

const cases: Array<{ name: string; table: Progress; status: PartitionWriteStatus; verdict: Verdict }> = [
  {
    name: 'a range starting at the table offset is accepted',
    table: at({ 0: 100n }),
    status: written(0, 100n, 150n),
    verdict: { accepted: {} },
  },
  {
    name: 'a range starting before the table offset (a replay or a zombie) is rejected',
    table: at({ 0: 100n }),
    status: written(0, 90n, 150n),
    verdict: { rejected: 'behind-table' },
  },
  {
    name: 'a range starting past the table offset (a gap) is rejected',
    table: at({ 0: 100n }),
    status: written(0, 110n, 150n),
    verdict: { rejected: 'ahead-of-table' },
  },
  {
    name: 'a range that advances without files (every record dead-lettered) is accepted',
    table: at({ 0: 100n }),
    status: written(0, 100n, 150n, { files: [] }),
    verdict: { accepted: {} },
  },
  {
    name: 'a written status that neither advances nor holds files changes nothing',
    table: at({ 0: 100n }),
    status: written(0, 100n, 100n),
    verdict: { unchanged: true },
  },
  {
    name: 'a non-advancing status changes nothing even when out of line',
    table: at({ 0: 100n }),
    status: written(0, 70n, 70n),
    verdict: { unchanged: true },
  },
  { name: 'an EMPTY status changes nothing', table: at({ 0: 100n }), status: empty(0), verdict: { unchanged: true } },
  {
    name: 'an ERROR status is skipped for the next round',
    table: at({ 0: 100n }),
    status: failed(0),
    verdict: { errored: true },
  },
  {
    name: 'a range that ends before it starts is invalid',
    table: at({ 0: 100n }),
    status: written(0, 100n, 90n, { files: [] }),
    verdict: { rejected: 'invalid-range' },
  },
  {
    name: 'files over an empty range are invalid',
    table: at({ 0: 100n }),
    status: written(0, 100n, 100n, { files: ['s3://b/x.parquet'] }),
    verdict: { rejected: 'invalid-range' },
  },
  {
    name: 'a log-start jump from the table offset to the range start is accepted and its records counted lost',
    table: at({ 0: 100n }),
    status: written(0, 500n, 600n, { jump: { from: 100n, to: 500n } }),
    verdict: { accepted: { lost: 400n } },
  },
  {
    name: 'a log-start jump alone (nothing read since) still moves the partition to the log start',
    table: at({ 0: 100n }),
    status: written(0, 500n, 500n, { jump: { from: 100n, to: 500n } }),
    verdict: { accepted: { lost: 400n } },
  },
  {
    name: 'a log-start jump that does not start at the table offset is rejected',
    table: at({ 0: 100n }),
    status: written(0, 500n, 600n, { jump: { from: 90n, to: 500n } }),
    verdict: { rejected: 'log-start-jump-mismatch' },
  },
  {
    name: 'a log-start jump that does not end at the range start is rejected',
    table: at({ 0: 100n }),
    status: written(0, 600n, 700n, { jump: { from: 100n, to: 500n } }),
    verdict: { rejected: 'log-start-jump-mismatch' },
  },
  {
    name: 'a log-start jump that goes nowhere is invalid',
    table: at({ 0: 100n }),
    status: written(0, 100n, 200n, { jump: { from: 100n, to: 100n } }),
    verdict: { rejected: 'invalid-range' },
  },
  {
    name: 'a stale log-start jump to the table offset is ordinary contiguity, with nothing lost',
    table: at({ 0: 100n }),
    status: written(0, 100n, 200n, { jump: { from: 50n, to: 100n } }),
    verdict: { accepted: {} },
  },
  {
    name: 'kept files from the table offset and then a log-start jump inside the range are accepted together',
    table: at({ 0: 100n }),
    status: written(0, 100n, 600n, { jump: { from: 300n, to: 500n } }),
    verdict: { accepted: { lost: 200n } },
  },
  {
    name: 'a jump inside the range that ends it (nothing read past the log start yet) is accepted',
    table: at({ 0: 100n }),
    status: written(0, 100n, 500n, { jump: { from: 300n, to: 500n } }),
    verdict: { accepted: { lost: 200n } },
  },
  {
    name: 'a jump right at the start of a range that starts at the table offset is accepted',
    table: at({ 0: 100n }),
    status: written(0, 100n, 600n, { jump: { from: 100n, to: 500n } }),
    verdict: { accepted: { lost: 400n } },
  },
  {
    name: 'a jump inside a range that does not start at the table offset is rejected (a replay)',
    table: at({ 0: 100n }),
    status: written(0, 50n, 600n, { jump: { from: 300n, to: 500n } }),
    verdict: { rejected: 'behind-table' },
  },
  {
    name: 'a jump inside a range that starts past the table offset is rejected (a gap)',
    table: at({ 0: 100n }),
    status: written(0, 200n, 600n, { jump: { from: 300n, to: 500n } }),
    verdict: { rejected: 'ahead-of-table' },
  },
  {
    name: 'a jump that reaches past the end of its range is rejected',
    table: at({ 0: 100n }),
    status: written(0, 100n, 400n, { jump: { from: 300n, to: 500n } }),
    verdict: { rejected: 'log-start-jump-mismatch' },
  },
  {
    name: 'a jump that starts before its range (and does not end at it) is rejected',
    table: at({ 0: 100n }),
    status: written(0, 100n, 600n, { jump: { from: 50n, to: 500n } }),
    verdict: { rejected: 'log-start-jump-mismatch' },
  },
  {
    name: 'a jump inside the range of a chain the table no longer knows is rejected',
    table: at({}),
    status: written(0, 100n, 600n, { jump: { from: 300n, to: 500n } }),
    verdict: { rejected: 'unknown-to-table' },
  },
  {
    name: "a partition's first-ever commit from the group offset is accepted at any start",
    table: at({ 1: 100n }),
    status: written(0, 1234n, 1300n, { origin: 'group-offset' }),
    verdict: { accepted: {} },
  },
  {
    name: "a partition's first-ever commit from auto.offset.reset is accepted at any start",
    table: at({}),
    status: written(0, 0n, 10n, { origin: 'offset-reset' }),
    verdict: { accepted: {} },
  },
  {
    name: 'a partition known only under another topic is new to this topic',
    table: at({}, { 0: 50n }),
    status: written(0, 7n, 10n, { origin: 'offset-reset' }),
    verdict: { accepted: {} },
  },
  {
    name: 'a first commit that found the log start past the group offset counts the gap',
    table: at({}),
    status: written(0, 500n, 510n, { origin: 'group-offset', jump: { from: 20n, to: 500n } }),
    verdict: { accepted: { lost: 480n } },
  },
  {
    name: 'a chain started from a table offset the table no longer holds is rejected',
    table: at({}),
    status: written(0, 100n, 150n, { origin: 'table' }),
    verdict: { rejected: 'unknown-to-table' },
  },
  {
    name: 'once the table knows the partition, a group-offset chain must start at the table offset',
    table: at({ 0: 100n }),
    status: written(0, 80n, 150n, { origin: 'group-offset' }),
    verdict: { rejected: 'behind-table' },
  },
  {
    name: 'an inconsistent jump on a new partition is invalid',
    table: at({}),
    status: written(0, 600n, 700n, { origin: 'offset-reset', jump: { from: 0n, to: 500n } }),
    verdict: { rejected: 'invalid-range' },
  },
]

describe('checkContiguity', () => {
  for (const c of cases) {
    test(c.name, () => {
      const check = checkContiguity(c.table, [c.status])
      const table = c.table.get(topic)?.get(c.status.partition)
      const counts = [check.accepted.length, check.rejected.length, check.unchanged.length, check.errored.length]
      if ('accepted' in c.verdict) {
        assert.deepEqual(counts, [1, 0, 0, 0])
        const [accepted] = check.accepted
        assert.equal(accepted?.tableOffset, table)
        assert.deepEqual(
          check.lost.map((l) => l.count),
          c.verdict.accepted.lost === undefined ? [] : [c.verdict.accepted.lost],
        )
        assert.equal(accepted?.logStartJump !== undefined, c.verdict.accepted.lost !== undefined)
      } else if ('rejected' in c.verdict) {
        assert.deepEqual(counts, [0, 1, 0, 0])
        assert.equal(check.rejected[0]?.reason, c.verdict.rejected)
        assert.equal(check.rejected[0]?.tableOffset, table)
        assert.deepEqual(check.lost, [])
      } else if ('unchanged' in c.verdict) {
        assert.deepEqual(counts, [0, 0, 1, 0])
      } else {
        assert.deepEqual(counts, [0, 0, 0, 1])
      }
    })
  }

  test('judges every partition on its own and keeps their order', () => {
    const check = checkContiguity(at({ 0: 10n, 1: 20n, 2: 30n }), [
      written(2, 30n, 40n),
      written(0, 5n, 15n),
      empty(3),
      written(1, 20n, 25n),
      failed(4, 'disk full'),
    ])
    assert.deepEqual(
      check.accepted.map((a) => [a.partition, a.range.end]),
      [
        [2, 40n],
        [1, 25n],
      ],
    )
    assert.deepEqual(check.rejected, [
      { topic, partition: 0, reason: 'behind-table', tableOffset: 10n, range: { start: 5n, end: 15n } },
    ])
    assert.deepEqual(check.unchanged, [{ topic, partition: 3 }])
    assert.deepEqual(check.errored, [{ topic, partition: 4, message: 'disk full' }])
  })

  test('reports lost records with where the gap starts and ends', () => {
    const check = checkContiguity(at({ 0: 100n }), [written(0, 500n, 600n, { jump: { from: 100n, to: 500n } })])
    assert.deepEqual(check.lost, [{ topic, partition: 0, from: 100n, to: 500n, count: 400n }])
  })
})

function lowest(a: bigint, b: bigint): bigint {
  if (a < b) return a
  return b
}

/** Intervals [from, to) that are not empty, sorted; do they tile [start, end) exactly, without overlap? */
function tiles(pieces: Array<[bigint, bigint]>, start: bigint, end: bigint): boolean {
  const sorted = pieces.filter(([a, b]) => b > a).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  let at = start
  for (const [from, to] of sorted) {
    if (from !== at) return false
    at = to
  }
  return at === end
}

describe('checkContiguity, exhaustively over small offsets', () => {
  const offsets = [0n, 1n, 2n, 3n, 4n, 5n]
  const jumps: Array<LogStartJump | undefined> = [undefined]
  for (const from of offsets) for (const to of offsets) jumps.push({ from, to })

  test('an accepted status moves the table exactly over its data and its declared loss, and a status that does so is accepted', () => {
    let accepted = 0
    let withLoss = 0
    for (const table of [undefined, ...offsets]) {
      const progress = table === undefined ? at({}) : at({ 0: table })
      for (const start of offsets) {
        for (const end of offsets) {
          for (const jump of jumps) {
            for (const origin of ['table', 'group-offset'] as const) {
              for (const withFiles of [true, false]) {
                const status = written(0, start, end, {
                  origin,
                  ...(jump ? { jump } : {}),
                  ...(withFiles ? {} : { files: [] }),
                })
                const check = checkContiguity(progress, [status])
                const outcomes = check.accepted.length + check.rejected.length + check.unchanged.length
                const label = JSON.stringify({ table, start, end, jump, origin, withFiles }, (_, v) =>
                  typeof v === 'bigint' ? Number(v) : v,
                )
                assert.equal(outcomes, 1, label)
                assert.equal(check.unchanged.length === 1, !advancesTable(status), label)

                // What a status claims: its data pieces and, with a jump, the records it says are gone.
                // (files over an empty range are the named case above; the builder makes none here)
                const valid = end >= start
                const jumpOk = !jump || jump.to > jump.from
                const beforeForm = jump !== undefined && jump.to === start
                const insideForm = jump !== undefined && !beforeForm && start <= jump.from && jump.to <= end

                const ok = check.accepted[0]
                if (ok) {
                  accepted++
                  assert.ok(valid && jumpOk, label)
                  if (table === undefined) assert.notEqual(origin, 'table', label)
                  const lost = check.lost[0]
                  assert.equal(check.lost.length, ok.logStartJump ? 1 : 0, label)
                  if (lost) {
                    withLoss++
                    assert.ok(lost.count > 0n && lost.count === lost.to - lost.from, label)
                  }
                  const data: Array<[bigint, bigint]> =
                    ok.logStartJump && insideForm && jump
                      ? [
                          [start, jump.from],
                          [jump.to, end],
                        ]
                      : [[start, end]]
                  const pieces = lost ? [...data, [lost.from, lost.to] as [bigint, bigint]] : data
                  // The table's next offset becomes the range's end, reached from where it stood
                  // with no offset covered twice and none skipped without being declared lost.
                  const first = table ?? (lost ? lowest(lost.from, start) : start)
                  assert.ok(tiles(pieces, first, end) || (end === start && pieces.length === 1), label)
                } else if (table !== undefined && valid && jumpOk && advancesTable(status)) {
                  // Completeness: each reading of the status that tiles [table, end) is accepted.
                  const plain = !jump && tiles([[start, end]], table, end)
                  const before =
                    beforeForm &&
                    jump &&
                    tiles(
                      [
                        [jump.from, jump.to],
                        [start, end],
                      ],
                      table,
                      end,
                    )
                  const inside =
                    insideForm &&
                    jump &&
                    tiles(
                      [
                        [start, jump.from],
                        [jump.from, jump.to],
                        [jump.to, end],
                      ],
                      table,
                      end,
                    )
                  assert.ok(!(plain || before || inside), `should have been accepted: ${label}`)
                }
              }
            }
          }
        }
      }
    }
    assert.ok(accepted > 500 && withLoss > 100, `accepted ${accepted}, with loss ${withLoss}`)
  })
})
