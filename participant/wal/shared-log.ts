// The write-ahead log of one dataset in the shared-segment layout (docs/architecture.md, "Shared
// segments"): one open segment per Iceberg partition, appended to by every Kafka partition of the
// dataset assigned to the worker, and a cut that rotates all of them at once into a rotation that
// claims, for every partition that moved since the previous cut, the range `[start, end)` it read.
//
// S1 (a rotation holds exactly its ranges) rests on one rule this class enforces: a partition's
// position changes only by reading, unless everything it read since the last cut is cut first.
// `read` and `forget` refuse a partition with uncut rows, and `walk` (ACK, rejection, resync,
// revocation) cuts before it rewinds or lets go of one.
//
// A routed log (option `route`) also keeps each row's table: one open segment per (table, Iceberg
// partition), and in each cut the claims of every table written (table-claims.ts). A cut takes
// every table at once, so S1 holds per table as for the whole log; a table evicted past
// `maxOpenTables` (open-segments.ts) has its files closed early, and they join the next cut.
//
// Operations on open segments (append, cut, walk) run one at a time in call order; operations on
// ready files (markUploaded, deleting rotations) have a queue of their own. A failure while rows
// are written or a cut is under way leaves the log `failed`; `discardOpen` is the way on.
import { randomUUID } from 'node:crypto'
import type { LogStartJump } from '../../protocol/index.ts'
import type { PartitionSpec, Schema, StructValue } from '../../shared/iceberg/index.ts'
import { FloeError } from '../../shared/index.ts'
import { deleteWalFiles } from './durable.ts'
import { configInvalid, type LogOptions, performanceClock, walLimits } from './log-options.ts'
import { LogQueues, type LogState } from './log-queues.ts'
import { OpenSegments } from './open-segments.ts'
import { ReadyRotations } from './ready-rotations.ts'
import { rotationFooter, type SharedRotation, type SharedSegment } from './rotation-manifest.ts'
import { partitionKey, type WalkDropReason, type WalkRange, walkRotations } from './rotation-walk.ts'
import type { SegmentRoute, WalRoute } from './segment-types.ts'
import { writeRotation } from './shared-cut.ts'
import { sharedActiveName } from './shared-names.ts'
import { type CutPartition, type PartitionTables, TableClaimBook } from './table-claims.ts'
import type { Clock, RotationReason, WalLimits } from './types.ts'

export interface SharedLogOptions extends LogOptions {
  /** `<wal.dir>/<dataset>/shared`; created on first use. */
  dir: string
  /** The dataset's topic. */
  topic: string
  /** Rotations recoverSharedLog kept, oldest first. */
  recovered?: readonly SharedRotation[]
  /** The sequence the next rotation takes (recoverSharedLog's `nextSequence`); default 1. */
  nextSequence?: bigint
  /** The dataset routes its records into tables: every row appended comes with its table number. */
  route?: WalRoute
  /** Told how many tables an eviction closed early (a routed log past its maxOpenTables). */
  onEvict?: (tables: number) => void
}

export type SharedLogState = LogState

/** One partition's batch of a fetch (SharedLog.appendFetched). */
export interface FetchedRows {
  partition: number
  /** The offset it was fetched from. */
  from: bigint
  rows: readonly StructValue[]
  /** The offset after its last record: the partition's range advances to it even with no rows. */
  next: bigint
  /** A routed log's table number of each row. */
  tables?: readonly number[]
}

export interface SharedWalkInput {
  /** Where each partition's chain starts: the ACK's or table's offsets, or the chain starts held (key: partitionKey). */
  from: ReadonlyMap<string, bigint | undefined>
  /** The Kafka partitions assigned to the worker now. */
  assigned: readonly number[]
  /** Declared log-start jumps (key: partitionKey). */
  jumps?: ReadonlyMap<string, LogStartJump>
  /** Ids of rotations the coordinator rejected (dropped whole). */
  rejected?: ReadonlySet<string>
  /** Why the walk may have to cut first. */
  reason: RotationReason
  /** A routed log's skip floors (key: partitionKey) of the partitions it moves; the others keep theirs. */
  floors?: ReadonlyMap<string, ReadonlyMap<string, bigint>>
}

export interface SharedWalkResult {
  /** The cut the walk made first, if a partition it rewinds or lets go of had uncut rows. */
  cut?: SharedRotation
  kept: SharedRotation[]
  dropped: Array<{ rotation: SharedRotation; reason: WalkDropReason }>
  /** Per assigned partition: where it reads next (undefined: unknown, invariant 2 decides). */
  next: Map<number, bigint | undefined>
  /** Assigned partitions moved back to `next`: the consumer seeks them there. */
  rewound: number[]
}

interface Position {
  /** Where the partition's next range starts (the previous cut's end). */
  start: bigint
  /** The offset after the last record appended or skipped. */
  end: bigint
  /** A routed log's tables written since the last cut, and the floors. */
  tables?: PartitionTables
  /** Where the chain ended before a log-start jump to `start`: the next range records it (WalkRange.after). */
  after?: bigint
}

export class SharedLog {
  readonly dir: string
  readonly topic: string
  readonly limits: Readonly<WalLimits>
  readonly #clock: Clock
  readonly #tables: TableClaimBook
  readonly #segments: OpenSegments
  readonly #positions = new Map<number, Position>()
  readonly #ready: ReadyRotations
  #sequence: bigint
  /** The next cut's id, chosen ahead: the footers of files evicted before it name it. */
  #cutId = randomUUID()
  readonly #queues: LogQueues

  constructor(options: SharedLogOptions) {
    if (options.topic === '') throw configInvalid('topic is empty', {})
    this.limits = walLimits(options.limits)
    this.dir = options.dir
    this.topic = options.topic
    this.#clock = options.clock ?? performanceClock
    this.#tables = new TableClaimBook(options.route)
    this.#queues = new LogQueues(options.dir, { topic: options.topic })
    const { route } = this.#tables
    const segmentRoute: SegmentRoute | undefined = route && {
      names: route.names,
      maxOpenTables: route.maxOpenTables,
      evictedFooter: (table) => rotationFooter(this.#cutId, undefined, table),
      ...(options.onEvict ? { onEvict: options.onEvict } : {}),
    }
    const config = {
      dir: options.dir,
      activeName: sharedActiveName,
      clock: this.#clock,
      writer: options,
      route: segmentRoute,
    }
    this.#segments = new OpenSegments(config, options.schema, options.spec)
    this.#ready = new ReadyRotations(options.dir, options.recovered ?? [])
    let sequence = options.nextSequence ?? 1n
    for (const rotation of this.#ready.list) if (rotation.sequence >= sequence) sequence = rotation.sequence + 1n
    this.#sequence = sequence
  }

  get state(): SharedLogState {
    return this.#queues.state
  }
  /** The uncommitted rotations, oldest first. */
  get rotations(): readonly SharedRotation[] {
    return [...this.#ready.list]
  }
  get openSegmentCount(): number {
    return this.#segments.count
  }
  /** Distinct tables with open segments (at most 1 when unrouted). */
  get openTableCount(): number {
    return this.#segments.tableCount
  }
  get bufferedBytes(): number {
    return this.#segments.bufferedBytes
  }
  get heldBytes(): number {
    return this.#segments.heldBytes
  }
  get bufferedHeldBytes(): number {
    return this.#segments.bufferedHeldBytes
  }
  /** Files of evicted tables waiting for the next cut. */
  get evictedSegmentCount(): number {
    return this.#segments.evicted.length
  }
  get readySegmentCount(): number {
    return this.#ready.list.reduce((count, rotation) => count + rotation.segments.length, 0)
  }
  /** Bytes of ready files not yet uploaded. */
  get readyBytes(): number {
    return this.#ready.unuploadedBytes
  }
  /** The partitions the log tracks, with where each reads next. */
  get positions(): ReadonlyMap<number, bigint> {
    return new Map([...this.#positions].map(([partition, position]) => [partition, position.end]))
  }

  /** Where the partition reads next; undefined if the log does not track it. */
  position(partition: number): bigint | undefined {
    return this.#positions.get(partition)?.end
  }

  /** True if the partition read something since the last cut (its rows are in open segments). */
  hasUncut(partition: number): boolean {
    const position = this.#positions.get(partition)
    return position !== undefined && position.end !== position.start
  }

  /**
   * The partition reads from `at` on (assigned, positioned, or positioned again). Refused while it
   * has uncut rows: they would end up in a rotation claiming a range that does not hold them.
   * `floors` (routed only; table name -> offset) are the tables' skip floors: the decoder drops a
   * table's records below its floor, and the table's claims start at it. They hold until the
   * partition is positioned again or let go of. `after`: the partition's chain ends there and
   * the records up to `at` are gone from Kafka (a log-start jump); the next range records it.
   */
  read(partition: number, at: bigint, floors?: ReadonlyMap<string, bigint>, after?: bigint): void {
    if (at < 0n) throw configInvalid('a position is negative', { partition, at: String(at) })
    if (after !== undefined && after >= at) {
      throw configInvalid('a log-start jump ends at or before it starts', {
        partition,
        at: String(at),
        after: String(after),
      })
    }
    this.#refuseUncut(partition, 'positioned')
    const tables = this.#tables.positioned(floors, { topic: this.topic, partition })
    this.#positions.set(partition, { start: at, end: at, tables, ...(after === undefined ? {} : { after }) })
  }

  /** The partition is no longer read here. Refused while it has uncut rows. */
  forget(partition: number): void {
    this.#refuseUncut(partition, 'let go of')
    this.#positions.delete(partition)
  }

  /**
   * Appends one polled batch of one partition; `nextOffset` advances its range even with no rows.
   * `tables`, parallel to `rows`, is each row's table number: required by a routed log for any
   * row, refused by an unrouted one.
   */
  append(
    partition: number,
    rows: readonly StructValue[],
    nextOffset: bigint,
    tables?: readonly number[],
  ): Promise<void> {
    return this.#queues.write(async () => {
      await this.#append(this.#tracked(partition), partition, rows, nextOffset, tables)
    })
  }

  /**
   * Appends the batches of one fetch in one step, their rows as one batch, so that a routed log
   * past its bound still writes each table's rows of the fetch into one file. A batch whose
   * partition no longer reads at its `from` (a walk moved it after the fetch) is left out: per
   * batch, whether it was appended. Checked in the step that appends, so no walk can come between
   * the check and the rows.
   */
  appendFetched(batches: readonly FetchedRows[]): Promise<boolean[]> {
    return this.#queues.write(async () => {
      const ends = new Map<number, bigint>()
      const taken = batches.map((batch) => {
        const end = ends.get(batch.partition) ?? this.#positions.get(batch.partition)?.end
        if (end !== batch.from) return false
        this.#check(end, batch.partition, batch.rows, batch.next, batch.tables)
        ends.set(batch.partition, batch.next)
        return true
      })
      const rows: StructValue[] = []
      const tables: number[] = []
      for (const [index, batch] of batches.entries()) {
        if (!taken[index]) continue
        // one by one: a spread of a large batch would overflow the stack
        for (const row of batch.rows) rows.push(row)
        if (batch.tables) for (const table of batch.tables) tables.push(table)
      }
      if (rows.length > 0) {
        const routed = tables.length > 0
        await this.#queues.guard(() => this.#segments.append(rows, routed ? tables : undefined))
      }
      for (const [index, batch] of batches.entries()) {
        if (taken[index]) this.#advance(this.#tracked(batch.partition), batch.rows.length, batch.next, batch.tables)
      }
      return taken
    })
  }

  /**
   * The first of the size, age, open-segment or evicted-file triggers the open segments meet now,
   * if any. 'tables': the files of evicted tables waiting for the cut reached the open segments'
   * limit.
   */
  rotationDue(now: number = this.#clock.now()): RotationReason | undefined {
    return this.#queues.state === 'open' ? this.#segments.rotationDue(now, this.limits) : undefined
  }

  /** Rotates every open segment at once; undefined when no partition moved since the last cut. */
  cut(reason: RotationReason): Promise<SharedRotation | undefined> {
    return this.#queues.write(() => this.#cut(reason))
  }

  /** The table's schema or spec changed: segments opened after the next cut follow them. */
  useTable(schema: Schema, spec: PartitionSpec): Promise<void> {
    return this.#queues.write(async () => this.#segments.useTable(schema, spec))
  }

  /** Writes every buffered row group out (memory pressure short of a cut). */
  flushRowGroups(): Promise<void> {
    return this.#queues.write(() => this.#queues.guard(() => this.#segments.flushRowGroups()))
  }

  /**
   * The walk (rotation-walk.ts) over the uncommitted rotations after an ACK, a rejection, a resync
   * or a revocation: dropped rotations are deleted (manifest first), assigned partitions that lost
   * a range read again from where their kept chain ends, partitions no longer assigned are let go
   * of. A partition that has uncut rows and must move is cut first, with every other one (S1).
   */
  walk(input: SharedWalkInput): Promise<SharedWalkResult> {
    return this.#queues.write(async () => {
      this.#tables.checkFloors(input.floors?.values() ?? [], { topic: this.topic })
      const assigned = new Set(input.assigned.map((partition) => partitionKey(this.topic, partition)))
      const { from, jumps, rejected } = input
      const plan = () => walkRotations({ rotations: this.#ready.list, from, assigned, jumps, rejected })
      let result = plan()
      // uncut rows must be cut before their partition moves: let go of, rewound, or (committed
      // elsewhere past where they start) found behind the table
      const moving = [...this.#positions].filter(([partition, position]) => {
        if (!this.hasUncut(partition)) return false
        const key = partitionKey(this.topic, partition)
        return !assigned.has(key) || result.rewound.has(key) || result.next.get(key) !== position.start
      })
      let cut: SharedRotation | undefined
      if (moving.length > 0) {
        cut = await this.#cut(input.reason)
        result = plan()
      }
      const byId = new Map(this.#ready.list.map((rotation) => [rotation.id, rotation]))
      const dropped = result.dropped.map(({ rotation, reason }) => ({
        rotation: byId.get(rotation.id) as SharedRotation,
        reason,
      }))
      await this.#queues.ready(() => this.#ready.delete(dropped.map(({ rotation }) => rotation)))
      const next = new Map<number, bigint | undefined>()
      for (const partition of input.assigned) next.set(partition, result.next.get(partitionKey(this.topic, partition)))
      const rewound: number[] = []
      for (const partition of input.assigned) {
        const at = next.get(partition)
        const position = this.#positions.get(partition)
        const lost = result.rewound.has(partitionKey(this.topic, partition))
        // a tracked partition the table has moved past (committed elsewhere) moves with it
        if (!lost && (position === undefined || at === undefined || position.start === at)) continue
        rewound.push(partition)
        const floors = input.floors?.get(partitionKey(this.topic, partition))
        if (at === undefined) {
          this.#positions.delete(partition)
          continue
        }
        // a chain that ends where its jump starts reads on from the jump's end: the range says so
        const jump = jumps?.get(partitionKey(this.topic, partition))
        const tables = this.#tables.positioned(floors, {})
        this.#positions.set(partition, { start: at, end: at, tables, ...(jump?.to === at ? { after: jump.from } : {}) })
      }
      for (const partition of [...this.#positions.keys()]) {
        if (!input.assigned.includes(partition)) this.#positions.delete(partition)
      }
      return {
        ...(cut ? { cut } : {}),
        kept: result.kept.map((rotation) => byId.get(rotation.id) as SharedRotation),
        dropped,
        next,
        rewound,
      }
    })
  }

  /** Deletes the named rotations (an ACK accepted them), manifest first; returns them. */
  deleteRotations(ids: Iterable<string>): Promise<SharedRotation[]> {
    const named = new Set(ids)
    return this.#queues.ready(() => this.#ready.delete(this.#ready.list.filter((rotation) => named.has(rotation.id))))
  }

  /** Records where a segment was uploaded, in its sidecar; undefined if the log no longer holds it. */
  markUploaded(uuid: string, location: string): Promise<SharedSegment | undefined> {
    return this.#queues.ready(() => this.#ready.markUploaded(uuid, location))
  }

  /**
   * After a failed write or cut: discards the open segments and every file no known rotation
   * holds, and moves every partition back to where its uncut rows began. Returns those
   * positions: the consumer seeks each partition there.
   */
  discardOpen(): Promise<Map<number, bigint>> {
    return this.#queues.reset(async () => {
      await this.#segments.abortAll()
      await deleteWalFiles(this.dir, await this.#ready.strayFiles())
      const positions = new Map<number, bigint>()
      for (const [partition, position] of this.#positions) {
        position.end = position.start
        position.tables?.written.clear()
        positions.set(partition, position.start)
      }
      return positions
    })
  }

  /** Waits for queued work, then ends the log. Uncut rows are discarded (read again after a restart). */
  close(): Promise<void> {
    return this.#queues.close(() => this.#segments.abortAll())
  }

  // ---- internals ------------------------------------------------------------------------------

  async #cut(reason: RotationReason): Promise<SharedRotation | undefined> {
    const segments = this.#segments.list()
    const ranges: WalkRange[] = []
    const routed: CutPartition[] = []
    for (const [partition, position] of [...this.#positions].sort(([a], [b]) => a - b)) {
      if (position.end > position.start) {
        const range: WalkRange = { topic: this.topic, partition, start: position.start, end: position.end }
        if (position.after !== undefined) range.after = position.after
        ranges.push(range)
        if (position.tables) routed.push({ range, tables: position.tables })
      }
    }
    if (ranges.length === 0) return undefined
    const rotation = await this.#queues.guard(() => {
      // inside the guard: a claim found empty fails the log, and discardOpen re-reads the cut's rows
      const tables = this.#tables.claims(routed)
      const cut = { id: this.#cutId, sequence: this.#sequence, reason, ranges, ...(tables ? { tables } : {}) }
      return writeRotation(this.#segments.context, segments, cut, this.#segments.evicted)
    })
    this.#sequence += 1n
    this.#cutId = randomUUID()
    for (const position of this.#positions.values()) {
      // a partition that read nothing since keeps its jump for the range it reads next
      if (position.end > position.start) delete position.after
      position.start = position.end
      position.tables?.written.clear()
    }
    this.#ready.add(rotation)
    this.#segments.rotated()
    return rotation
  }

  #tracked(partition: number): Position {
    const position = this.#positions.get(partition)
    if (position) return position
    throw new FloeError('INVARIANT_BROKEN', `partition ${partition} appended to the shared WAL before it was read`, {
      details: { topic: this.topic, partition },
    })
  }

  async #append(
    position: Position,
    partition: number,
    rows: readonly StructValue[],
    nextOffset: bigint,
    tables: readonly number[] | undefined,
  ): Promise<void> {
    this.#check(position.end, partition, rows, nextOffset, tables)
    if (rows.length > 0) await this.#queues.guard(() => this.#segments.append(rows, tables))
    this.#advance(position, rows.length, nextOffset, tables)
  }

  #check(
    end: bigint,
    partition: number,
    rows: readonly StructValue[],
    nextOffset: bigint,
    tables: readonly number[] | undefined,
  ): void {
    if (nextOffset < end || (rows.length > 0 && nextOffset === end)) {
      throw new FloeError('INVARIANT_BROKEN', 'WAL offsets must advance', {
        details: { topic: this.topic, partition, end: String(end), next: String(nextOffset) },
      })
    }
    this.#tables.checkBatch(rows.length, tables, { topic: this.topic, partition })
  }

  #advance(position: Position, rows: number, nextOffset: bigint, tables: readonly number[] | undefined): void {
    if (rows > 0 && tables !== undefined) position.tables?.note(tables)
    position.end = nextOffset
  }

  #refuseUncut(partition: number, what: string): void {
    if (!this.hasUncut(partition)) return
    throw new FloeError('INVARIANT_BROKEN', `partition ${partition} ${what} with uncut rows in the shared WAL`, {
      details: { topic: this.topic, partition },
    })
  }
}
