// The shared layout's WRITE-STATUS against the coordinator's rotation check wherever a log-start
// jump can sit in a partition's chain, with no server in between: before the chain (a sync with
// nothing kept), between kept files and files read from the log start, after kept files with
// nothing read since (a round cut between the sync and the next fetch), and at the chain's start
// (the ACK that committed the kept files). Built apart, the two sides must agree on every status
// the participant makes: taken whole, each partition moved to where its summary ends, the jump's
// records counted lost once; and the jump a status leaves for later is taken in the next round.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { checkRound, type RotationReport } from '../../coordinator/index.ts'
import { random } from '../../coordinator/test-fixtures.ts'
import { type ChainState, sharedStatus } from '../../participant/shared-status.ts'
import type { SharedRotation } from '../../participant/wal/index.ts'
import { sharedRotation } from '../../participant/wal/test-support.ts'
import type { LogStartJump } from '../../protocol/index.ts'
import type { DataFile } from '../../shared/iceberg/index.ts'

const topic = 'orders'
const sender = { workerId: 'w1', memberId: 'w1-member', generation: 1 }
const places = ['none', 'before', 'between', 'after', 'at-start'] as const
type Place = (typeof places)[number]

interface PartitionCase {
  partition: number
  place: Place
  /** The table's offset for the partition. */
  table: bigint
  chain: ChainState
  /** The partition's ranges, oldest first. */
  ranges: Array<[bigint, bigint]>
  jump?: LogStartJump
}

/** Ranges of 1-20 offsets each, chained from `from`. */
function chained(pick: (n: number) => number, from: bigint, count: number): Array<[bigint, bigint]> {
  const ranges: Array<[bigint, bigint]> = []
  let at = from
  for (let i = 0; i < count; i++) {
    const end = at + BigInt(1 + pick(20))
    ranges.push([at, end])
    at = end
  }
  return ranges
}

function partitionCase(pick: (n: number) => number, partition: number): PartitionCase {
  const place = places[pick(places.length)] as Place
  const table = BigInt(pick(50))
  const chain = (chainStart: bigint, jump?: LogStartJump): ChainState => ({
    topic,
    partition,
    chainStart,
    origin: 'table',
    ...(jump ? { logStartJump: jump } : {}),
  })
  const gap = BigInt(1 + pick(100))
  if (place === 'none') return { partition, place, table, chain: chain(table), ranges: chained(pick, table, pick(4)) }
  if (place === 'before' || place === 'at-start') {
    // nothing kept before the log start: a sync placed the chain there, or an ACK committed to it
    const jump = { from: table, to: table + gap }
    const start = place === 'before' ? jump.to : jump.from
    return { partition, place, table, chain: chain(start, jump), ranges: chained(pick, jump.to, pick(3)), jump }
  }
  const kept = chained(pick, table, 1 + pick(2))
  const keptEnd = (kept.at(-1) as [bigint, bigint])[1]
  const jump = { from: keptEnd, to: keptEnd + gap }
  const after = place === 'between' ? chained(pick, jump.to, 1 + pick(2)) : []
  return { partition, place, table, chain: chain(table, jump), ranges: [...kept, ...after], jump }
}

/** The partitions' ranges in order, cut into rotations that each take the next range of some of them. */
function rotationsOf(pick: (n: number) => number, cases: readonly PartitionCase[]): SharedRotation[] {
  const left = cases.map((c) => ({ partition: c.partition, ranges: [...c.ranges] }))
  const rotations: SharedRotation[] = []
  for (let sequence = 1; left.some((l) => l.ranges.length > 0); sequence++) {
    const ranges: Record<number, [number, number]> = {}
    for (const l of left) {
      if (l.ranges.length === 0 || pick(3) === 0) continue
      const [start, end] = l.ranges.shift() as [bigint, bigint]
      ranges[l.partition] = [Number(start), Number(end)]
    }
    if (Object.keys(ranges).length > 0) rotations.push(sharedRotation(topic, sequence, ranges, [`f${sequence}`]))
  }
  return rotations
}

function uploadedOf(rotations: readonly SharedRotation[]): Map<string, DataFile> {
  const files = new Map<string, DataFile>()
  for (const segment of rotations.flatMap((r) => r.segments)) {
    files.set(segment.uuid, { filePath: `mem://data/${segment.uuid}.parquet` } as DataFile)
  }
  return files
}

function round(chains: ChainState[], rotations: SharedRotation[], table: Map<number, bigint>) {
  const status = sharedStatus({ chains, rotations, uploaded: uploadedOf(rotations) })
  assert.deepEqual(status.gaps, [], 'every chain the WAL holds is reported')
  const report: RotationReport = { sender, statuses: status.statuses, rotations: status.rotations }
  const check = checkRound(new Map([[topic, table]]), [], [report])
  return { status, check }
}

describe('log-start jumps: the participant and the coordinator agree', () => {
  test('a status with the jump in any place a sync or an ACK puts it is taken whole, and a jump left for later lands next round', () => {
    const seen = new Set<Place>()
    for (let seed = 1; seed <= 400; seed++) {
      const pick = random(seed)
      const cases = [0, 1, 2].map((partition) => partitionCase(pick, partition))
      for (const c of cases) seen.add(c.place)
      const rotations = rotationsOf(pick, cases)
      const table = new Map(cases.map((c) => [c.partition, c.table]))
      const { status, check } = round(
        cases.map((c) => c.chain),
        rotations,
        table,
      )
      const context = `seed ${seed}: ${JSON.stringify(cases, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`
      assert.deepEqual(check.rejected, [], context)
      assert.deepEqual(
        check.rotations.accepted.map((r) => r.id),
        rotations.map((r) => r.id),
        context,
      )
      const committed = new Map(check.accepted.map((a) => [a.partition, a.range.end]))
      for (const s of status.statuses) {
        if (s.kind !== 'written' || (s.range.end === s.range.start && !s.logStartJump)) continue
        assert.equal(committed.get(s.partition), s.range.end, `${context}: partition ${s.partition} lands at its end`)
      }
      // The jump left for later: the ACK moves the chain to where the kept files end, and the next
      // round, with nothing more read, moves the table on to the log start and counts it lost.
      const next = cases.map(({ chain: { logStartJump: _, ...chain }, partition, jump, table }): ChainState => {
        const offset = committed.get(partition) ?? table
        const kept = jump && jump.from >= offset ? jump : undefined
        return { ...chain, chainStart: offset, ...(kept ? { logStartJump: kept } : {}) }
      })
      const later = round(next, [], new Map(next.map((c) => [c.partition, c.chainStart])))
      assert.deepEqual(later.check.rejected, [], context)
      const lost = [...check.lost, ...later.check.lost].map((l) => [l.partition, l.from, l.to])
      const jumps = cases.flatMap((c) => (c.jump ? [[c.partition, c.jump.from, c.jump.to]] : []))
      assert.deepEqual(
        lost.sort((a, b) => Number(a[0]) - Number(b[0])),
        jumps,
        `${context}: every jump counted once`,
      )
      for (const c of cases) {
        const landed = later.check.accepted.find((a) => a.partition === c.partition)?.range.end
        const end = landed ?? committed.get(c.partition) ?? c.table
        const expected = c.ranges.at(-1)?.[1] ?? c.table
        const reach = c.jump && c.jump.to > expected ? c.jump.to : expected
        assert.equal(end, reach, `${context}: partition ${c.partition} reaches the end of what it read`)
      }
    }
    assert.deepEqual([...seen].sort(), [...places].sort(), 'every place of the jump was tried')
  })
})
