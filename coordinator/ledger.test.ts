import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { mergeProgress, type Progress } from '../shared/progress/index.ts'
import {
  type ClaimCheck,
  type ClaimFate,
  type ClaimRejection,
  type CutRead,
  checkTableClaims,
  effectiveMarker,
  type HoldReason,
  type PartitionStart,
  planLedgerAdvance,
  planLedgerStarts,
  type TableClaim,
} from './ledger.ts'
import { random, topic } from './test-fixtures.ts'

type Fates = Record<string, ClaimFate>
const marker = (offsets: Record<number, bigint>): Progress =>
  new Map([[topic, new Map(Object.entries(offsets).map(([p, o]) => [Number(p), o]))]])
function claim(partition: number, start: bigint, end: bigint): TableClaim {
  return { topic, partition, range: { start, end } }
}
function cut(partition: number, start: bigint, end: bigint, tables: Fates = {}): CutRead {
  return { topic, partition, read: { start, end }, tables: new Map(Object.entries(tables)) }
}
const positioned = (partition: number, start: bigint, origin: PartitionStart['origin'] = 'offset-reset') => ({
  topic,
  partition,
  origin,
  start,
})
const verdictOf = (check: ClaimCheck) => (check.kind === 'accepted' ? check.kind : check.stoppedBy.reason)
/** The ledger's moves as partition -> offset, and the held cuts as [partition, reason kind]. */
function planned(ledger: Progress, reads: CutRead[]) {
  const plan = planLedgerAdvance(ledger, reads)
  return {
    moves: Object.fromEntries(plan.moves.map((m) => [m.partition, m.offset])),
    held: plan.held.map((h): [number, HoldReason['kind']] => [h.partition, h.reason.kind]),
  }
}

describe('effectiveMarker', () => {
  const cases: Array<[bigint | undefined, bigint | undefined, bigint | undefined]> = [
    [100n, 40n, 100n],
    [40n, 100n, 100n],
    [70n, 70n, 70n],
    [undefined, 100n, 100n],
    [100n, undefined, 100n],
    [undefined, undefined, undefined],
  ]
  for (const [table, ledger, expected] of cases) {
    test(`max(T=${table}, L=${ledger}) is ${expected}`, () => assert.equal(effectiveMarker(table, ledger), expected))
  }
})

describe('checkTableClaims', () => {
  type Verdict = 'accepted' | [partition: number, reason: ClaimRejection, expected: bigint | undefined]
  type Offsets = Record<number, bigint>
  const cases: Array<[name: string, table: Offsets, ledger: Offsets, claims: TableClaim[], verdict: Verdict]> = [
    ['a claim at the table marker', { 0: 100n }, { 0: 40n }, [claim(0, 100n, 150n)], 'accepted'],
    ['a claim at the ledger, for a table idle since', { 0: 40n }, { 0: 100n }, [claim(0, 100n, 150n)], 'accepted'],
    ['a table never committed, the ledger vouching', {}, { 0: 100n }, [claim(0, 100n, 150n)], 'accepted'],
    ['a claim at a marker the ledger passed', { 0: 40n }, { 0: 100n }, [claim(0, 40n, 90n)], [0, 'behind-table', 100n]],
    ['a claim past E_T (a gap)', { 0: 100n }, { 0: 100n }, [claim(0, 120n, 150n)], [0, 'ahead-of-table', 100n]],
    [
      'one partition out of line rejects the whole rotation',
      { 0: 100n, 1: 10n },
      { 1: 20n },
      [claim(0, 100n, 150n), claim(1, 10n, 30n)],
      [1, 'behind-table', 20n],
    ],
    ['a partition the ledger has not started', {}, {}, [claim(0, 500n, 510n)], [0, 'unknown-to-table', undefined]],
    ['a partition the table knows and the ledger does not', { 0: 500n }, {}, [claim(0, 500n, 510n)], 'accepted'],
    ['a claim of no positions', { 0: 100n }, {}, [claim(0, 100n, 100n)], [0, 'invalid-range', 100n]],
    ['a partition claimed twice', { 0: 1n }, {}, [claim(0, 1n, 9n), claim(0, 1n, 9n)], [0, 'invalid-range', 1n]],
  ]
  for (const [name, table, ledger, claims, verdict] of cases) {
    test(`${name}: ${typeof verdict === 'string' ? verdict : verdict[1]}`, () => {
      const check = checkTableClaims(marker(table), marker(ledger), claims)
      if (verdict === 'accepted') {
        const moves = claims.map((c) => ({ topic, partition: c.partition, offset: c.range.end }))
        assert.deepEqual(check, { kind: 'accepted', moves })
        return
      }
      assert.ok(check.kind === 'rejected')
      assert.deepEqual([check.stoppedBy.partition, check.stoppedBy.reason, check.stoppedBy.expected], verdict)
      // Every partition of the rotation is read again from the ledger, not only the one that stopped it.
      const partitions = [...new Set(claims.map((c) => c.partition))]
      assert.deepEqual(
        check.reread,
        partitions.map((partition) => ({ topic, partition, from: ledger[partition] })),
      )
    })
  }

  test('partitions of two topics with one number are judged apart', () => {
    const table: Progress = new Map(['a', 'b'].map((t, i) => [t, new Map([[0, BigInt(10 * i)]])]))
    const claims = ['a', 'b'].map((t, i) => ({ ...claim(0, BigInt(10 * i), 60n), topic: t }))
    assert.equal(verdictOf(checkTableClaims(table, new Map(), claims)), 'accepted')
  })
})

describe('planLedgerAdvance: a <= L < e', () => {
  type Held = Array<[partition: number, reason: HoldReason['kind']]>
  const at100 = marker({ 0: 100n })
  const t1: Fates = { t1: 'landed' }
  const no: Fates = { t1: 'rejected' }
  const cases: Array<[name: string, ledger: Progress, reads: CutRead[], moves: Record<number, bigint>, held: Held]> = [
    ['a cut from the ledger on', at100, [cut(0, 100n, 150n, t1)], { 0: 150n }, []],
    ['a re-read from before the ledger to past it', marker({ 0: 120n }), [cut(0, 100n, 150n, t1)], { 0: 150n }, []],
    ['a cut past the ledger', at100, [cut(0, 110n, 150n, t1)], {}, [[0, 'gap']]],
    ['a cut ending at the ledger', marker({ 0: 150n }), [cut(0, 100n, 150n, t1)], {}, [[0, 'behind-ledger']]],
    ['a cut whose records went to no table', at100, [cut(0, 100n, 150n)], { 0: 150n }, []],
    ['cuts of one round in any order', at100, [cut(0, 150n, 180n), cut(0, 100n, 150n, t1)], { 0: 180n }, []],
    [
      'partitions apart',
      marker({ 0: 100n, 1: 7n }),
      [cut(0, 100n, 150n, no), cut(1, 7n, 9n)],
      { 1: 9n },
      [[0, 'claim-rejected']],
    ],
    ['a partition the ledger has not started', marker({}), [cut(0, 5n, 9n)], {}, [[0, 'unknown-to-ledger']]],
    ['a range that ends before it starts', at100, [cut(0, 150n, 100n)], {}, [[0, 'invalid-range']]],
    ['a cut that read nothing', at100, [cut(0, 120n, 120n)], {}, []],
  ]
  for (const [name, ledger, reads, moves, held] of cases) {
    test(name, () => assert.deepEqual(planned(ledger, reads), { moves, held }))
  }

  test('a cut after a held one waits too', () => {
    const reads = [cut(0, 100n, 150n, { t1: 'unconfirmed' }), cut(0, 150n, 180n, t1)]
    assert.deepEqual(planned(at100, reads).held, [
      [0, 'claim-unconfirmed'],
      [0, 'gap'],
    ])
  })
})

describe('planLedgerStarts: the ledger starts a partition before any table takes it', () => {
  test('where its sender positioned it; a partition the ledger has is left alone', () => {
    const plan = planLedgerStarts(marker({ 1: 40n }), [positioned(0, 500n), positioned(1, 7n, 'group-offset')])
    assert.deepEqual(plan, { moves: [{ topic, partition: 0, offset: 500n }], unknown: [] })
  })

  test('of two senders that positioned it differently, at the lower start', () => {
    const plan = planLedgerStarts(marker({}), [positioned(0, 500n), positioned(0, 200n, 'group-offset')])
    assert.deepEqual(plan.moves, [{ topic, partition: 0, offset: 200n }])
  })

  test('positioned from a ledger that lacks it: its history changed, nothing is started', () => {
    const plan = planLedgerStarts(marker({}), [positioned(0, 500n, 'table')])
    assert.deepEqual(plan, { moves: [], unknown: [positioned(0, 500n, 'table')] })
  })

  test('the gap a chain-judged first claim would leave: a table ahead of an unstarted ledger', () => {
    // t1 took [500, 600) after the ledger started p at 500; had the ledger not started first, a
    // worker positioned anew at `latest` (900) could never meet t1's marker again.
    const started = mergeProgress(marker({}), planLedgerStarts(marker({}), [positioned(0, 500n)]).moves)
    const t1 = mergeProgress(marker({}), [{ topic, partition: 0, offset: 600n }])
    assert.equal(verdictOf(checkTableClaims(marker({}), started, [claim(0, 500n, 600n)])), 'accepted')
    // the worker positions from the ledger (500), skips t1's rows below 600 and claims t2's from 500
    assert.equal(verdictOf(checkTableClaims(t1, started, [claim(0, 600n, 700n)])), 'accepted')
    assert.equal(verdictOf(checkTableClaims(marker({}), started, [claim(0, 500n, 700n)])), 'accepted')
  })
})

describe('crash table (routing)', () => {
  // One round: t1 had rows of partition 0 all along; t2 had none since 90, the ledger vouching up to 100.
  const ledger = marker({ 0: 100n })
  const t1 = marker({ 0: 100n })
  const t2 = marker({ 0: 90n })
  const round = [claim(0, 100n, 150n)]
  const landed = marker({ 0: 150n })

  test('between two tables: the ledger waits, the next round commits the rest, a restart skips what landed', () => {
    assert.equal(verdictOf(checkTableClaims(t1, ledger, round)), 'accepted')
    assert.equal(verdictOf(checkTableClaims(t2, ledger, round)), 'accepted')
    assert.deepEqual(planned(ledger, [cut(0, 100n, 150n, { t1: 'landed', t2: 'unconfirmed' })]), {
      moves: {},
      held: [[0, 'claim-unconfirmed']],
    })
    // t2's claim still starts at E_T2; t1's rows offered again are refused, never committed twice.
    assert.equal(verdictOf(checkTableClaims(t2, ledger, round)), 'accepted')
    assert.equal(verdictOf(checkTableClaims(landed, ledger, round)), 'behind-table')
    assert.deepEqual(planned(ledger, [cut(0, 100n, 150n, { t1: 'landed', t2: 'landed' })]).moves, { 0: 150n })
  })

  test('after every table, before the ledger: the re-read from L writes no row and moves the ledger', () => {
    // Both tables at 150, L at 100: a worker positioned at L skips below E_T = 150 for both.
    assert.equal(effectiveMarker(150n, 100n), 150n)
    assert.equal(verdictOf(checkTableClaims(landed, ledger, round)), 'behind-table')
    assert.deepEqual(planned(ledger, [cut(0, 100n, 150n)]), { moves: { 0: 150n }, held: [] })
  })

  test('a transactions request whose outcome is unknown: the ledger waits until every table is found', () => {
    const read = (t2Fate: ClaimFate) => cut(0, 100n, 150n, { t1: 'landed', t2: t2Fate })
    assert.deepEqual(planned(ledger, [read('unconfirmed')]).moves, {})
    assert.deepEqual(planned(ledger, [read('landed')]).moves, { 0: 150n })
  })

  test('a rejected claim: every partition is read again from L, the ledger holds, no later cut passes it', () => {
    const rejected = checkTableClaims(t2, ledger, [claim(0, 90n, 150n), claim(1, 5n, 8n)])
    assert.ok(rejected.kind === 'rejected')
    const { partition, claimed, expected, reason } = rejected.stoppedBy
    assert.deepEqual([partition, claimed, expected, reason], [0, { start: 90n, end: 150n }, 100n, 'behind-table'])
    assert.deepEqual(
      rejected.reread.map((r) => [r.partition, r.from]),
      [
        [0, 100n],
        [1, undefined],
      ],
    )
    const plan = planLedgerAdvance(ledger, [cut(0, 100n, 150n, { t1: 'landed', t2: 'rejected' }), cut(0, 150n, 170n)])
    assert.deepEqual(plan.moves, [])
    assert.deepEqual(
      plan.held.map((h) => h.reason),
      [{ kind: 'claim-rejected', tables: ['t2'] }, { kind: 'gap' }],
    )
  })

  test('a stale ledger lowers E_T: the claim is rejected, and never accepted a second time', () => {
    // t2 idle at 90; the ledger moved to 150 after other tables' round; a worker positioned there.
    const claims = [claim(0, 150n, 200n)]
    assert.equal(verdictOf(checkTableClaims(t2, ledger, claims)), 'ahead-of-table')
    const accepted = checkTableClaims(t2, landed, claims)
    assert.ok(accepted.kind === 'accepted')
    const after = mergeProgress(t2, accepted.moves)
    for (const read of [ledger, landed, marker({})])
      assert.equal(verdictOf(checkTableClaims(after, read, claims)), 'behind-table')
  })
})

describe('over generated runs (docs/model/floe-routing.pml as a loop)', () => {
  test('M3: no record lands twice; M2: the ledger is never ahead of the tables', () => {
    const tables = ['t0', 't1', 't2']
    // Offset o of partition p goes to tables[(o + p) % 4]; the fourth value routes nowhere (M1).
    const route = (p: number, o: bigint) => tables[(Number(o) + p) % 4]
    const at = (progress: Progress | undefined, p: number) => progress?.get(topic)?.get(p)
    const max = (x: bigint, y: bigint) => (x > y ? x : y)
    type Status = {
      life: number
      starts: PartitionStart[]
      reads: CutRead[]
      claims: Map<string, TableClaim[]>
      fates: Map<string, ClaimFate>
    }
    const pick = random(11)
    let rowsLanded = 0
    let ledgerMoves = 0
    for (let run = 0; run < 300; run++) {
      const markers = new Map<string, Progress>()
      // Half the runs start as the model does, the ledger at 0; half with no marker at all, each
      // partition positioned where a moving `latest` is at the time and started in the ledger there.
      const history = [marker(run % 2 === 0 ? { 0: 0n, 1: 0n } : {})]
      /** Where the ledger started each partition: nothing below it is ever read. */
      const begins = new Map<number, bigint>(
        run % 2 === 0
          ? [
              [0, 0n],
              [1, 0n],
            ]
          : [],
      )
      const ledger = () => history.at(-1) as Progress
      const held = new Set<string>()
      const queue: Status[] = []
      let life = 0
      type Reading = { pos: bigint; a: bigint; start: PartitionStart; vouched: Map<string, bigint | undefined> }
      const reading = new Map<number, Reading>()
      // Positioning (invariant 2): from L[p], else `latest` (moving); each E_T[p] read once, skipped below.
      const position = (p: number) => {
        const from = at(ledger(), p)
        const start = from === undefined ? positioned(p, BigInt(pick(4))) : positioned(p, from, 'table')
        const vouched = new Map(tables.map((t) => [t, effectiveMarker(at(markers.get(t), p), from)]))
        reading.set(p, { pos: start.start, a: start.start, start, vouched })
      }
      const restart = () => [0, 1].forEach(position)
      restart()
      for (let step = 0; step < 120; step++) {
        const choice = pick(10)
        if (choice < 5) {
          const r = reading.get(pick(2))
          if (r && r.pos < 12n) r.pos++
        } else if (choice < 7) {
          // A cut: each table claims from where it stopped vouching, when it has rows in the cut.
          const status: Status = { life, starts: [], reads: [], claims: new Map(), fates: new Map() }
          for (const [p, r] of reading) {
            if (r.pos === r.a) continue
            status.starts.push(r.start)
            status.reads.push(cut(p, r.a, r.pos))
            for (const [t, vouched] of r.vouched) {
              const s = max(r.a, vouched ?? r.a)
              let rows = false
              for (let o = s; o < r.pos; o++) rows ||= route(p, o) === t
              if (rows) status.claims.set(t, [...(status.claims.get(t) ?? []), claim(p, s, r.pos)])
            }
            r.a = r.pos
          }
          if (status.reads.length > 0) queue.push(status)
        } else if (choice < 8) {
          life++
          restart()
        } else {
          // A round over queued statuses; each table's commit loop may read a ledger rounds old.
          const statuses = queue.splice(0, 1 + pick(queue.length || 1))
          // The ledger starts the partitions it lacks first, in a commit of its own that may fail.
          const starts = planLedgerStarts(
            ledger(),
            statuses.flatMap((status) => status.starts),
          ).moves
          if (starts.length > 0 && pick(5) > 0) {
            history.push(mergeProgress(ledger(), starts))
            for (const { partition, offset } of starts) begins.set(partition, offset)
          }
          for (const t of tables) {
            let table: Progress = markers.get(t) ?? new Map()
            const accepted: TableClaim[] = []
            const outcome = pick(10) // 0-6 confirmed, 7 landed with the reply lost, 8-9 failed
            for (const status of statuses) {
              const claims = status.claims.get(t)
              if (!claims) continue
              const check = checkTableClaims(
                table,
                history[Math.max(0, history.length - 1 - pick(3))] ?? ledger(),
                claims,
              )
              if (check.kind === 'accepted') {
                table = mergeProgress(table, check.moves)
                accepted.push(...claims)
                status.fates.set(t, outcome < 7 ? 'landed' : 'unconfirmed')
              } else {
                status.fates.set(t, 'rejected')
                if (status.life === life) for (const { partition } of check.reread) position(partition)
              }
            }
            if (outcome >= 8) continue
            for (const { partition: p, range } of accepted) {
              for (let o = range.start; o < range.end; o++) {
                if (route(p, o) !== t) continue
                assert.ok(!held.has(`${p}:${o}`), `run ${run}: ${t} holds ${p}:${o} twice`)
                held.add(`${p}:${o}`)
                rowsLanded++
              }
            }
            markers.set(t, table)
          }
          const plan = planLedgerAdvance(
            ledger(),
            statuses.flatMap((s) => s.reads.map((r) => ({ ...r, tables: s.fates }))),
          )
          if (plan.moves.length === 0 || pick(5) === 0) continue // the ledger's own commit may fail too
          history.push(mergeProgress(ledger(), plan.moves))
          ledgerMoves++
          for (const p of [0, 1]) {
            for (let o = begins.get(p) ?? 0n; o < (at(ledger(), p) ?? 0n); o++) {
              assert.ok(route(p, o) === undefined || held.has(`${p}:${o}`), `run ${run}: L[${p}] passed ${o}`)
            }
          }
        }
      }
    }
    assert.ok(rowsLanded > 1000 && ledgerMoves > 500, `${rowsLanded} rows landed, ${ledgerMoves} ledger moves`)
  })
})
