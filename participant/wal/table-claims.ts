// What a routed shared log keeps per Kafka partition so that a cut can say, per table, which
// positions its files hold (docs/architecture.md, "Several topics and many tables", invariant 3):
// the tables the partition wrote rows of since the last cut, and the skip floors it was positioned
// with. A cut claims, for each such table, `[s, e)` with `e` the partition's range end and
// `s = max(range start, floor)`: the decoder skipped the table's records below its floor before
// they reached the WAL (the table holds them), so the claim starts where the table's rows resume.
// A table with no rows of the partition since the last cut claims nothing of it.
//
// Every cut takes every table. A table evicted past the route's maxOpenTables (open-segments.ts)
// has files closed before the cut, and they join it: its claim is the same as if it had stayed
// open, so a rotation stays the one every-table cut that S1 of the shared segments rests on (each
// range held whole by its rotation's files), and the cut's range of a partition stays its read
// range for the ledger, before which no claim starts.
import { FloeError } from '../../shared/index.ts'
import { configInvalid } from './log-options.ts'
import type { TableClaims } from './rotation-manifest.ts'
import type { WalkRange } from './rotation-walk.ts'
import type { WalRoute } from './segment-types.ts'

/** One partition's routed bookkeeping between two cuts. */
export class PartitionTables {
  /** Table name -> the first offset whose records of that table reach the WAL; kept until the partition is positioned again. */
  readonly floors: ReadonlyMap<string, bigint> | undefined
  /** Table numbers with rows of the partition in the open segments. */
  readonly written = new Set<number>()

  constructor(floors: ReadonlyMap<string, bigint> | undefined) {
    this.floors = floors !== undefined && floors.size > 0 ? floors : undefined
  }

  /** After an append: the batch's tables have rows in the open segments. One set insert per run of a table. */
  note(tables: readonly number[]): void {
    let last = -1
    for (const table of tables) {
      if (table === last) continue
      this.written.add(table)
      last = table
    }
  }
}

/**
 * A shared log's routing: absent a route every call refuses what only a routed log takes (tables,
 * floors) and gives nothing; with one it checks each batch's tables and makes the cut's claims.
 */
export class TableClaimBook {
  readonly route: WalRoute | undefined

  /** Throws CONFIG_INVALID unless the route's limit is a positive integer. */
  constructor(route: WalRoute | undefined) {
    if (route !== undefined && !(Number.isSafeInteger(route.maxOpenTables) && route.maxOpenTables > 0)) {
      throw configInvalid('route.maxOpenTables must be a positive integer', { maxOpenTables: route.maxOpenTables })
    }
    this.route = route
  }

  /** The bookkeeping of a partition positioned with these floors; undefined when unrouted. */
  positioned(
    floors: ReadonlyMap<string, bigint> | undefined,
    details: Record<string, unknown>,
  ): PartitionTables | undefined {
    if (this.route !== undefined) return new PartitionTables(floors === undefined ? undefined : new Map(floors))
    if (floors !== undefined && floors.size > 0) throw broken('skip floors given to an unrouted shared WAL', details)
    return undefined
  }

  /** Refuses floors for an unrouted log before a walk changes anything. */
  checkFloors(floors: Iterable<ReadonlyMap<string, bigint>>, details: Record<string, unknown>): void {
    if (this.route !== undefined) return
    for (const some of floors) if (some.size > 0) throw broken('skip floors given to an unrouted shared WAL', details)
  }

  /**
   * Refuses a batch whose tables do not fit the log: a routed log needs a table per row, an
   * unrouted one none, and every number must be one the route handed out. Checked before any row
   * is written, so a refusal leaves the open segments as they were; once per run of a table.
   */
  checkBatch(rows: number, tables: readonly number[] | undefined, details: Record<string, unknown>): void {
    const names = this.route?.names
    if (names === undefined || tables === undefined) {
      if (names === undefined && tables !== undefined)
        throw broken('rows of an unrouted shared WAL come with tables', details)
      if (names !== undefined && rows > 0)
        throw broken('rows of a routed shared WAL come without their tables', details)
      return
    }
    if (tables.length !== rows)
      throw broken('a batch has not one table per row', { ...details, rows, tables: tables.length })
    let last = -1
    for (const table of tables) {
      if (table === last) continue
      if (names[table] === undefined)
        throw broken(`a row names table number ${table}, which the route has not handed out`, details)
      last = table
    }
  }

  /** The cut's claims (tableClaims); undefined when unrouted. */
  claims(partitions: readonly CutPartition[]): TableClaims[] | undefined {
    return this.route === undefined ? undefined : tableClaims(this.route.names, partitions)
  }
}

/** A partition's range in the cut, and what it wrote since the last one. */
export interface CutPartition {
  range: WalkRange
  tables: PartitionTables
}

/**
 * The cut's claims per table, tables by name and claims by partition (the ranges' order). Throws
 * INVARIANT_BROKEN for a claim that would be empty: a row at or past the floor was written, so
 * `s < e` unless the decoder let through a record it should have skipped.
 */
export function tableClaims(names: readonly string[], partitions: readonly CutPartition[]): TableClaims[] {
  const byTable = new Map<string, WalkRange[]>()
  for (const { range, tables } of partitions) {
    for (const number of tables.written) {
      const table = names[number] as string
      const floor = tables.floors?.get(table)
      const start = floor !== undefined && floor > range.start ? floor : range.start
      if (start >= range.end) {
        throw broken(
          `table ${table} has rows of partition ${range.partition} at or past its floor, yet none in the cut`,
          {
            topic: range.topic,
            partition: range.partition,
            table,
            floor: String(floor),
            end: String(range.end),
          },
        )
      }
      // a claim is positions only: the range's jump (WalkRange.after) is the range's to record
      const claim = { topic: range.topic, partition: range.partition, start, end: range.end }
      const claims = byTable.get(table)
      if (claims) claims.push(claim)
      else byTable.set(table, [claim])
    }
  }
  return [...byTable].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([table, claims]) => ({ table, claims }))
}

/**
 * True when the claimed tables and the tables of the rotation's files are one set: every file's
 * table claims something, every claimed table has a file (a claimed row is in some file), and an
 * unrouted rotation has neither.
 */
export function claimsMatchFiles(
  tables: readonly TableClaims[] | undefined,
  files: readonly { readonly table?: string }[],
): boolean {
  if (tables === undefined) return files.every((file) => file.table === undefined)
  const claimed = new Set(tables.map(({ table }) => table))
  const held = new Set<string>()
  for (const file of files) {
    if (file.table === undefined || !claimed.has(file.table)) return false
    held.add(file.table)
  }
  return held.size === claimed.size
}

function broken(message: string, details: Record<string, unknown>): FloeError {
  return new FloeError('INVARIANT_BROKEN', `shared WAL: ${message}`, { details })
}
