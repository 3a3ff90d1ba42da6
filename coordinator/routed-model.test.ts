// The routed round over generated runs: workers read a stream whose records route to three tables,
// cut rotations and report them; a coordinator checks, commits each table and the ledger with
// faults, and ACKs; the workers apply the ACK or restart. M3 (no record twice in a table), M2 (the
// ledger never passes a record its table lacks) and what each table's marker means are checked
// after every step, and M4 (every record lands) after fault-free rounds at the end.

import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { PartitionWriteStatus, RangeOrigin, RotationStatus, RotationTablePart } from '../protocol/index.ts'
import { mergeProgress, type Progress } from '../shared/progress/index.ts'
import { planLedgerAdvance } from './ledger.ts'
import type { RotationReport } from './rotation-check.ts'
import { checkRoutedRound } from './routed-round.ts'
import { landedMarkers, type RoutedAck, routedCutReads, settleRoutedRound, type TableFate } from './routed-settle.ts'
import { walkTable } from './routed-walk.ts'
import { dataFile, random, sender, topic } from './test-fixtures.ts'

const tables = ['t0', 't1', 't2']
const partitions = [0, 1]
/** Records 0..size-1 of each partition exist. */
const size = 14n
/** M1: a function of the record. Some offsets route nowhere; a table may have no rows for a while. */
function route(p: number, o: bigint): string | undefined {
  const v = (Number(o) * Number(o) + Number(o) + 3 * p) % 5
  return v < 3 ? tables[v] : undefined
}
const at = (progress: Progress | undefined, p: number) => progress?.get(topic)?.get(p)
const max = (x: bigint, y: bigint) => (x > y ? x : y)

interface Worker {
  generation: number
  pos: Map<number, bigint>
  /** Where each partition's uncut read range starts. */
  from: Map<number, bigint>
  origin: Map<number, RangeOrigin>
  floors: Map<number, Map<string, bigint>>
  /** Offsets read since the cut, per partition and table. */
  uncut: Map<number, Map<string, bigint[]>>
  rotations: RotationStatus[]
  sent?: RotationReport
}

interface Counts {
  rows: number
  ledgerMoves: number
  rejected: number
  inLoop: number
  floors: number
}

function run(seed: number, workers: number, steps: number, counts: Counts): void {
  const pick = random(seed)
  const label = `seed ${seed}`
  const held = new Map(tables.map((t) => [t, new Set<string>()]))
  const rowsOf = new Map<string, Array<[number, bigint]>>()
  const markerLog = new Map(tables.map((t): [string, Progress[]] => [t, [new Map()]]))
  const marker = (t: string) => markerLog.get(t)?.at(-1) as Progress
  const startAtZero = seed % 2 === 0
  const ledgerLog: Progress[] = [new Map(startAtZero ? [[topic, new Map(partitions.map((p) => [p, 0n]))]] : [])]
  const ledger = () => ledgerLog.at(-1) as Progress
  /** Where the ledger started each partition: nothing below it was ever owed to a table. */
  const begins = new Map(startAtZero ? partitions.map((p) => [p, 0n]) : [])
  const older = <T>(log: readonly T[]) => log[Math.max(0, log.length - 1 - pick(3))] as T
  let generation = 0
  let rotationSeq = 0
  const history: RotationReport[] = []

  const live: Worker[] = []
  const position = (w: Worker, p: number, from: bigint | undefined) => {
    w.pos.set(p, from ?? BigInt(pick(4)))
    w.from.set(p, from ?? (w.pos.get(p) as bigint))
    w.origin.set(p, from === undefined ? 'offset-reset' : 'table')
    w.uncut.set(p, new Map())
  }
  // Positions from the ledger only; floors are forgotten, the WAL is lost.
  const start = (): Worker => {
    const w: Worker = {
      generation: ++generation,
      pos: new Map(),
      from: new Map(),
      origin: new Map(),
      floors: new Map(),
      uncut: new Map(),
      rotations: [],
    }
    for (const p of partitions) position(w, p, at(ledger(), p))
    return w
  }
  for (let i = 0; i < workers; i++) live.push(start())

  const read = (w: Worker, p: number) => {
    const o = w.pos.get(p) as bigint
    if (o >= size) return
    const t = route(p, o)
    const floor = t === undefined ? undefined : w.floors.get(p)?.get(t)
    if (t !== undefined && (floor === undefined || o >= floor)) {
      const rows = w.uncut.get(p) as Map<string, bigint[]>
      rows.set(t, [...(rows.get(t) ?? []), o])
    }
    w.pos.set(p, o + 1n)
  }
  const cut = (w: Worker) => {
    const id = `r${++rotationSeq}`
    const ranges: RotationStatus['ranges'][number][] = []
    const parts = new Map<string, { claims: RotationTablePart['claims'][number][]; rows: Array<[number, bigint]> }>()
    for (const p of partitions) {
      const a = w.from.get(p) as bigint
      const e = w.pos.get(p) as bigint
      if (e === a) continue
      ranges.push({ topic, partition: p, range: { start: a, end: e } })
      for (const [t, offsets] of w.uncut.get(p) ?? []) {
        const part = parts.get(t) ?? { claims: [], rows: [] }
        const s = max(a, w.floors.get(p)?.get(t) ?? a)
        part.claims.push({ topic, partition: p, range: { start: s, end: e } })
        part.rows.push(...offsets.map((o): [number, bigint] => [p, o]))
        parts.set(t, part)
      }
      w.from.set(p, e)
      w.uncut.set(p, new Map())
    }
    if (ranges.length === 0) return
    const tablesOf = [...parts].map(([table, { claims, rows }]) => {
      rowsOf.set(`${id}-${table}`, rows)
      return { table, claims, files: [dataFile(`${id}-${table}`)] }
    })
    w.rotations.push({ id, sequence: BigInt(rotationSeq), ranges, files: [], tables: tablesOf })
  }
  const report = (w: Worker): RotationReport => {
    const rotations = w.rotations.slice(0, 1 + pick(3))
    const statuses = partitions.map((p): PartitionWriteStatus => {
      const chain = rotations.flatMap((r) => r.ranges.filter((x) => x.partition === p).map((x) => x.range))
      const [first, last] = [chain[0], chain.at(-1)]
      if (!first || !last) return { kind: 'empty', topic, partition: p }
      const range = { start: first.start, end: last.end }
      return { kind: 'written', topic, partition: p, range, files: [], origin: w.origin.get(p) as RangeOrigin }
    })
    return { sender: sender(w.generation, `w${w.generation}`), statuses, rotations }
  }
  const apply = (w: Worker, ack: RoutedAck) => {
    const accepted = new Set(ack.acceptedRotations)
    w.rotations = w.rotations.filter((r) => !accepted.has(r.id))
    const rejected = new Set(ack.rejectedRotations.map((r) => r.id))
    if (!w.rotations.some((r) => rejected.has(r.id))) return
    // Everything not committed goes; each partition reads again from the ledger with the floors
    // when the ACK names it, else from where its dropped chain began.
    const dropped = w.rotations
    w.rotations = []
    for (const p of partitions) {
      const first = dropped.flatMap((r) => r.ranges).find((x) => x.partition === p)
      if (!first) continue
      const rejection = ack.rejections.find((r) => r.partition === p)
      if (!rejection) {
        position(w, p, first.range.start)
        w.origin.set(p, 'table')
        continue
      }
      position(w, p, rejection.rereadFrom)
      w.floors.set(p, new Map(rejection.floors.map((f) => [f.table, f.offset])))
      counts.floors += rejection.floors.length
    }
  }

  const invariants = (when: string) => {
    for (const p of partitions) {
      const begin = begins.get(p)
      for (let o = begin ?? 0n; begin !== undefined && o < (at(ledger(), p) ?? 0n); o++) {
        const t = route(p, o)
        assert.ok(t === undefined || held.get(t)?.has(`${p}:${o}`), `${label} ${when}: L[${p}] passed ${o} (${t})`)
      }
      for (const t of tables) {
        for (let o = begin ?? 0n; begin !== undefined && o < (at(marker(t), p) ?? 0n); o++) {
          const owned = route(p, o) === t
          assert.ok(!owned || held.get(t)?.has(`${p}:${o}`), `${label} ${when}: ${t}[${p}] passed ${o}`)
        }
      }
    }
  }

  const round = (faults: boolean) => {
    const reports: RotationReport[] = []
    for (const w of live) {
      cut(w)
      if (!faults || pick(5) > 0 || !w.sent) w.sent = report(w)
      reports.push(w.sent)
    }
    const stale = history[pick(history.length || 1)]
    if (faults && stale && pick(6) === 0 && !reports.some((r) => r.sender.generation === stale.sender.generation))
      reports.push(stale)
    history.push(...reports)
    const markersRead = new Map(
      tables.map((t) => [t, faults && pick(4) === 0 ? older(markerLog.get(t) ?? []) : marker(t)]),
    )
    const check = checkRoutedRound(faults && pick(4) === 0 ? older(ledgerLog) : ledger(), markersRead, reports)
    counts.rejected += check.rotations.rejected.length
    const starts = check.ledgerStarts.filter((s) => at(ledger(), s.partition) === undefined)
    if (starts.length > 0 && (!faults || pick(5) > 0)) {
      ledgerLog.push(mergeProgress(ledger(), starts))
      for (const s of starts) begins.set(s.partition, s.offset)
    }
    const fates = new Map<string, TableFate>()
    for (const t of check.tables.keys()) {
      const read = marker(t)
      const walk = walkTable(t, read, faults && pick(4) === 0 ? older(ledgerLog) : ledger(), check.rotations.accepted)
      const verdicts = [...walk.parts.values()]
      counts.inLoop += verdicts.filter((v) => v.kind === 'rejected').length
      const outcome = faults ? pick(10) : 0 // 0-6 confirmed, 7 landed with the reply lost, 8-9 failed
      if (verdicts.some((v) => v.kind === 'accepted') && outcome <= 7) {
        for (const file of walk.files) {
          for (const [p, o] of rowsOf.get(file.filePath) ?? []) {
            const tableRows = held.get(t) as Set<string>
            assert.ok(!tableRows.has(`${p}:${o}`), `${label}: ${t} holds ${p}:${o} twice`)
            tableRows.add(`${p}:${o}`)
            counts.rows++
          }
        }
        markerLog.get(t)?.push(mergeProgress(read, walk.moves))
      }
      fates.set(t, { commit: outcome < 7 ? 'landed' : 'unconfirmed', walk })
    }
    invariants('after the tables')
    const before = ledger()
    const plan = planLedgerAdvance(before, routedCutReads(check, fates))
    const outcome = plan.moves.length === 0 ? 0 : faults ? pick(6) : 2 // 0 failed, 1 landed unknown
    if (outcome >= 1) {
      ledgerLog.push(mergeProgress(before, plan.moves))
      counts.ledgerMoves++
    }
    invariants('after the ledger')
    const landed = outcome >= 2
    const ack = settleRoutedRound(
      check,
      fates,
      { landed, moves: plan.moves, after: landed ? ledger() : before },
      landedMarkers(markersRead, fates),
    )
    for (const w of live) if (!faults || pick(10) > 0) apply(w, ack)
  }

  for (let step = 0; step < steps; step++) {
    const choice = pick(10)
    const w = live[pick(live.length)] as Worker
    if (choice < 5) read(w, pick(2))
    else if (choice < 6) cut(w)
    else if (choice < 7) live[live.indexOf(w)] = start()
    else round(true)
    invariants(`step ${step}`)
  }
  for (let r = 0; r < 12 && partitions.some((p) => at(ledger(), p) !== size); r++) {
    for (const w of live) for (const p of partitions) while ((w.pos.get(p) as bigint) < size) read(w, p)
    round(false)
  }
  for (const p of partitions) {
    assert.equal(at(ledger(), p), size, `${label}: L[${p}] after fault-free rounds`)
    for (let o = begins.get(p) as bigint; o < size; o++) {
      const t = route(p, o)
      assert.ok(t === undefined || held.get(t)?.has(`${p}:${o}`), `${label}: ${p}:${o} never landed in ${t}`)
    }
  }
}

describe('routed rounds over generated runs', () => {
  test('M3 and M2 after every step, every record in its table once after fault-free rounds', () => {
    const counts: Counts = { rows: 0, ledgerMoves: 0, rejected: 0, inLoop: 0, floors: 0 }
    for (let seed = 1; seed <= 400; seed++) run(seed, 1 + (seed % 3 === 0 ? 1 : 0), 150, counts)
    const { rows, ledgerMoves, rejected, inLoop, floors } = counts
    assert.ok(rows > 5000 && ledgerMoves > 2000, `${rows} rows landed, ${ledgerMoves} ledger moves`)
    assert.ok(rejected > 1000 && inLoop > 200 && floors > 200, `${rejected} / ${inLoop} rejected, ${floors} floors`)
  })
})
