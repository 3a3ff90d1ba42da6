// The open segments of one Kafka partition (or, in the shared layout, of a dataset), one
// `active_*.parquet` per Iceberg partition, opened on its first row. Routing a batch is the WAL's
// per-record work, so it computes each row's partition key once, passes a single-partition batch
// through untouched, and otherwise fills one reused array per segment: no array, closure or tuple
// per row (the tuple is made once, when a segment opens).
//
// A routed dataset's rows also carry a table number (participant/decode/route.ts), and a segment
// is then one per (table, Iceberg partition): one map of partition keys per table number, so no
// key is built per row either; an unrouted log keeps everything under table 0.
//
// A routed log keeps at most `maxOpenTables` tables' segments open: a table about to open at the
// bound first closes the least recently used tables' segments early ("evicts" them), and they
// wait, closed, for the next cut, which takes them with the open ones. So the bound holds inside
// a batch too: a batch that names more tables than fit is written table by table (table-runs.ts),
// each table's rows of it into one file. The cut's claims do not change (a table's rows of the
// cut are in its files of the cut, closed early or not), so the coordinator sees only more files.
// Recency is a stamp per table per batch (with its row count, set once per run of a table in the
// batch): no list is reordered per row, and of a fetch's tables the busiest stay open. Up to
// `maxOpenSegments` evicted files wait before the cut is due.
//
// Segments open under the table's schema and spec of the time. A change of either waits until
// every open segment has been made ready (they rotate together), so every file follows one spec
// and a rotation reads one table context for all of its files.
import { randomUUID } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { PartitionSpec, Schema, StructValue } from '../../shared/iceberg/index.ts'
import { compilePartitioner } from '../../shared/iceberg/partitioning/index.ts'
import { FloeError } from '../../shared/index.ts'
import { type DataFileWriterOptions, openDataFile, primitiveFieldTypes } from '../../shared/parquet/index.ts'
import { storageError } from './durable.ts'
import {
  type EvictedSegment,
  type OpenSegment,
  type OpenSegmentsConfig,
  type SegmentRoute,
  segmentWriterOptions,
  type TableContext,
} from './segment-types.ts'
import { groupByTable, type TableRun } from './table-runs.ts'
import type { RotationReason, WalLimits } from './types.ts'

export class OpenSegments {
  readonly #config: OpenSegmentsConfig
  // #context, #writer and #keyOf change together, and only while no segment is open
  #context!: TableContext
  #writer!: DataFileWriterOptions
  #keyOf!: (row: StructValue) => string
  #nextTable: { schema: Schema; spec: PartitionSpec } | undefined
  /** By table number (0 when unrouted): the table's open segments by partition key; kept across cuts, emptied. */
  readonly #byTable: Array<Map<string, OpenSegment> | undefined> = []
  /** Every open segment, for what walks them all. */
  readonly #segments: OpenSegment[] = []
  /** Tables with at least one open segment. */
  #openTables = 0
  /** By table number, the batch that last wrote to it (the LRU's stamp, from #uses), and its rows in that batch. */
  readonly #usedAt: number[] = []
  readonly #rowsAt: number[] = []
  #uses = 0
  /** By table number, the last batch #overflows saw it in. */
  readonly #marks: number[] = []
  #marking = 0
  /** Segments of evicted tables, closed, waiting for the cut. */
  readonly #evicted: EvictedSegment[] = []
  /** Partition keys of the batch being routed, reused across batches. */
  readonly #keys: string[] = []
  readonly #touched: OpenSegment[] = []
  #directoryMade = false

  /** Throws CONFIG_INVALID for a spec the schema cannot partition by. */
  constructor(config: OpenSegmentsConfig, schema: Schema, spec: PartitionSpec) {
    this.#config = config
    this.#follow(schema, spec)
  }

  /** The table the open segments were opened under. */
  get context(): TableContext {
    return this.#context
  }

  /** The schema and spec the next opened segment follows. */
  get table(): { schema: Schema; spec: PartitionSpec } {
    return this.#nextTable ?? { schema: this.#context.schema, spec: this.#context.spec }
  }

  /**
   * The table's schema or spec changed: segments opened from now on follow the new ones, at once
   * if none is open, else once rotated() says the open ones were made ready under the old ones.
   */
  useTable(schema: Schema, spec: PartitionSpec): void {
    if (schema === this.#context.schema && spec === this.#context.spec) return
    this.#nextTable = { schema, spec }
    if (this.#segments.length === 0 && this.#evicted.length === 0) this.#followNextTable()
  }

  get count(): number {
    return this.#segments.length
  }

  /** The segments closed early, waiting for the cut. */
  get evicted(): readonly EvictedSegment[] {
    return this.#evicted
  }

  /** Distinct tables with open segments (1 or 0 when unrouted). */
  get tableCount(): number {
    return this.#openTables
  }

  get bufferedBytes(): number {
    let bytes = 0
    for (const segment of this.#segments) bytes += segment.writer.bufferedBytes
    return bytes
  }

  /** Estimated memory the open segments hold (shared/parquet/memory.ts), writers included. */
  get heldBytes(): number {
    let bytes = 0
    for (const segment of this.#segments) bytes += segment.writer.heldBytes
    return bytes
  }

  /** Of which their buffered rows: what flushing row groups would free. */
  get bufferedHeldBytes(): number {
    let bytes = 0
    for (const segment of this.#segments) bytes += segment.writer.bufferedHeldBytes
    return bytes
  }

  /**
   * Routes a non-empty batch to its segments; resolves when every segment has taken its rows.
   * `tables` (a routed log's, parallel to `rows`) holds each row's table number, checked by the caller.
   * A routed log opens a table's segments only while fewer than `maxOpenTables` tables are open:
   * at the bound, the least recently used tables are evicted first.
   */
  async append(rows: readonly StructValue[], tables?: readonly number[]): Promise<void> {
    const count = rows.length
    const keyOf = this.#keyOf
    const keys = this.#keys
    const firstKey = keyOf(rows[0] as StructValue)
    keys[0] = firstKey
    let mixed = false
    for (let i = 1; i < count; i++) {
      const key = keyOf(rows[i] as StructValue)
      keys[i] = key
      if (key !== firstKey) mixed = true
    }
    const firstTable = tables === undefined ? 0 : (tables[0] as number)
    // a loop of its own, so an unrouted batch pays nothing for tables
    if (tables !== undefined && !mixed) {
      for (let i = 1; i < count; i++) {
        if (tables[i] !== firstTable) {
          mixed = true
          break
        }
      }
    }
    if (!mixed) {
      // the usual case (one table and partition per batch, e.g. day(ts)): the batch goes in as it came
      await this.#appendToOne(firstTable, firstKey, rows, ++this.#uses)
      return
    }
    if (tables !== undefined && this.#overflows(tables, count)) {
      await this.#appendByTable(groupByTable(rows, keys, tables))
      return
    }
    await this.#appendMixed(rows, keys, tables, firstTable, ++this.#uses)
  }

  /** Rows of one table and Iceberg partition, handed to its segment as they are. */
  async #appendToOne(table: number, key: string, rows: readonly StructValue[], stamp: number): Promise<void> {
    const segment = await this.#segmentOf(table, key, rows[0] as StructValue)
    this.#used(table, stamp, rows.length)
    await segment.writer.append(rows)
  }

  /** Stamps a table written by batch `stamp` with `rows` more rows of it. */
  #used(table: number, stamp: number, rows: number): void {
    if (this.#usedAt[table] === stamp) {
      this.#rowsAt[table] = (this.#rowsAt[table] ?? 0) + rows
    } else {
      this.#usedAt[table] = stamp
      this.#rowsAt[table] = rows
    }
  }

  /** Rows of several tables or partitions, every table they name open or with room to open. */
  async #appendMixed(
    rows: readonly StructValue[],
    keys: readonly string[],
    tables: readonly number[] | undefined,
    onlyTable: number,
    stamp: number,
  ): Promise<void> {
    const touched = this.#touched
    touched.length = 0
    let currentKey: string | undefined
    let currentTable = -1
    let current: OpenSegment | undefined
    let runStart = 0
    for (let i = 0; i < rows.length; i++) {
      const key = keys[i] as string
      const table = tables === undefined ? onlyTable : (tables[i] as number)
      const row = rows[i] as StructValue
      // runs of one table and partition skip the map lookups
      if (key !== currentKey || table !== currentTable) {
        if (currentTable >= 0) this.#used(currentTable, stamp, i - runStart)
        runStart = i
        current = this.#byTable[table]?.get(key) ?? (await this.#open(table, key, row))
        currentKey = key
        currentTable = table
        if (current.batch.length === 0) touched.push(current)
      }
      ;(current as OpenSegment).batch.push(row)
    }
    this.#used(currentTable, stamp, rows.length - runStart)
    // every append settles before the arrays are reused, even when one fails
    const results = await Promise.allSettled(touched.map((segment) => segment.writer.append(segment.batch)))
    for (const segment of touched) segment.batch.length = 0
    touched.length = 0
    for (const result of results) if (result.status === 'rejected') throw result.reason
  }

  /**
   * Whether the tables a routed batch names, with those already open, are more than may be open
   * at once. A mark per table per batch (no set is built); the bound's own cost per row.
   */
  #overflows(tables: readonly number[], count: number): boolean {
    const route = this.#config.route as SegmentRoute
    const mark = ++this.#marking
    const marks = this.#marks
    let opening = 0
    for (let i = 0; i < count; i++) {
      const table = tables[i] as number
      if (marks[table] === mark) continue
      marks[table] = mark
      if (!this.#isOpen(table)) opening += 1
    }
    return this.#openTables + opening > route.maxOpenTables
  }

  /**
   * A batch naming more tables than fit, written table by table: first the tables already open,
   * then the others, and before one of those opens at the bound the least recently used tables
   * are evicted, as many at once as the batch's next tables to open need (up to the bound), so
   * their files close side by side. Every open table the batch names is written by then, so none
   * is evicted before its rows of the batch are in.
   */
  async #appendByTable(runs: readonly TableRun[]): Promise<void> {
    const bound = (this.#config.route as SegmentRoute).maxOpenTables
    const stamp = ++this.#uses
    const opening = runs.filter((run) => !this.#isOpen(run.table))
    const ordered = [...runs.filter((run) => this.#isOpen(run.table)), ...opening]
    const firstOpening = ordered.length - opening.length
    for (const [index, run] of ordered.entries()) {
      if (index >= firstOpening && this.#openTables >= bound) {
        const toOpen = Math.min(ordered.length - index, bound)
        await this.#evictLeastRecent(this.#openTables + toOpen - bound)
      }
      const firstKey = run.keys[0] as string
      if (run.keys.every((key) => key === firstKey)) await this.#appendToOne(run.table, firstKey, run.rows, stamp)
      else await this.#appendMixed(run.rows, run.keys, undefined, run.table, stamp)
    }
  }

  /** The open segment of (table, key), else a new one, evicting first if the table would pass the bound. */
  async #segmentOf(table: number, key: string, row: StructValue): Promise<OpenSegment> {
    const segment = this.#byTable[table]?.get(key)
    if (segment) return segment
    const route = this.#config.route
    if (route !== undefined && !this.#isOpen(table) && this.#openTables >= route.maxOpenTables) {
      await this.#evictLeastRecent(this.#openTables + 1 - route.maxOpenTables)
    }
    return this.#open(table, key, row)
  }

  #isOpen(table: number): boolean {
    return (this.#byTable[table]?.size ?? 0) > 0
  }

  /** The first of the log's own triggers that the open segments meet at `now`. */
  rotationDue(now: number, limits: Readonly<WalLimits>): RotationReason | undefined {
    if (this.#segments.length === 0 && this.#evicted.length === 0) return undefined
    let oldest = Number.POSITIVE_INFINITY
    for (const segment of this.#segments) {
      if (segment.writer.writtenBytes + segment.writer.bufferedBytes >= limits.maxFileSizeBytes) return 'size'
      if (segment.openedAt < oldest) oldest = segment.openedAt
    }
    // an evicted file's rows are as old as when it opened: the age bound holds for them too
    for (const { segment } of this.#evicted) if (segment.openedAt < oldest) oldest = segment.openedAt
    if (now - oldest >= limits.maxFileAgeMs) return 'age'
    // evicted files wait for the cut; past the open segments' limit of them, the cut is due, so a
    // rotation holds at most about twice that many files
    if (this.#evicted.length >= limits.maxOpenSegments) return 'tables'
    if (this.#segments.length > limits.maxOpenSegments) return 'segments'
    return undefined
  }

  /**
   * Closes the segments of the `count` least recently used open tables, each file with the
   * route's eviction footer; they wait for the cut in `evicted`. Of tables last written by the
   * same batch, the one it gave fewer rows goes first, so a fetch's busy tables stay open while
   * its rare ones come and go.
   */
  async #evictLeastRecent(count: number): Promise<void> {
    const route = this.#config.route as SegmentRoute
    const open: number[] = []
    for (let table = 0; table < this.#byTable.length; table++) if (this.#isOpen(table)) open.push(table)
    const usedAt = this.#usedAt
    const rowsAt = this.#rowsAt
    open.sort((a, b) => (usedAt[a] ?? 0) - (usedAt[b] ?? 0) || (rowsAt[a] ?? 0) - (rowsAt[b] ?? 0))
    const leaving = open.slice(0, count)
    const closing: OpenSegment[] = []
    for (const table of leaving) {
      const segments = this.#byTable[table] as Map<string, OpenSegment>
      closing.push(...segments.values())
      segments.clear()
    }
    this.#openTables -= leaving.length
    const leavingSet = new Set(closing)
    const kept = this.#segments.filter((segment) => !leavingSet.has(segment))
    this.#segments.length = 0
    this.#segments.push(...kept)
    // side by side, as a cut closes them: each close ends in its own fsync
    const closed = await Promise.allSettled(
      closing.map((segment) =>
        segment.writer.close({ keyValueMetadata: route.evictedFooter(segment.table as string) }),
      ),
    )
    let failure: PromiseRejectedResult | undefined
    for (const [index, result] of closed.entries()) {
      const segment = closing[index] as OpenSegment
      if (result.status === 'fulfilled') {
        const { writer: _closed, batch: _empty, ...kept } = segment
        this.#evicted.push({ segment: kept, metrics: result.value })
      } else {
        failure ??= result
        await segment.writer.abort().catch(() => {})
      }
    }
    // the log fails; discardOpen re-reads the cut's rows, the evicted files' among them
    if (failure) throw failure.reason
    route.onEvict?.(leaving.length)
  }

  list(): OpenSegment[] {
    return [...this.#segments]
  }

  /** Forgets every segment (they were made ready); a table change waiting for them applies now. */
  rotated(): void {
    this.#forgetAll()
    this.#followNextTable()
  }

  async flushRowGroups(): Promise<void> {
    await Promise.all(this.list().map((segment) => segment.writer.flushRowGroup()))
  }

  /** Discards every open segment and its active file. */
  async abortAll(): Promise<void> {
    const segments = this.list()
    this.#forgetAll()
    await Promise.all(segments.map((segment) => segment.writer.abort().catch(() => {})))
  }

  #follow(schema: Schema, spec: PartitionSpec): void {
    const partitioner = compilePartitioner(spec, schema)
    this.#context = {
      dir: this.#config.dir,
      schema,
      spec,
      partitioner,
      partitionType: partitioner.partitionType,
      fieldTypes: primitiveFieldTypes(schema),
    }
    this.#writer = segmentWriterOptions(this.#config.writer, schema)
    this.#keyOf = partitioner.key
  }

  #followNextTable(): void {
    const next = this.#nextTable
    if (!next) return
    this.#follow(next.schema, next.spec)
    this.#nextTable = undefined
  }

  #forgetAll(): void {
    this.#segments.length = 0
    // an evicted file the cut did not take is a stray file (discardOpen and recovery delete those)
    this.#evicted.length = 0
    for (const segments of this.#byTable) segments?.clear()
    this.#openTables = 0
  }

  async #open(table: number, key: string, row: StructValue): Promise<OpenSegment> {
    const { dir, clock, route } = this.#config
    const name = route?.names[table]
    if (route !== undefined && name === undefined) {
      throw new FloeError('INVARIANT_BROKEN', `a row names table number ${table}, which the route has not handed out`, {
        details: { table, tables: route.names.length },
      })
    }
    const { partitioner } = this.#context
    const writerOptions = this.#writer
    if (!this.#directoryMade) {
      try {
        await mkdir(dir, { recursive: true })
      } catch (error) {
        throw storageError('cannot create WAL directory', dir, error)
      }
      this.#directoryMade = true
    }
    const uuid = randomUUID()
    const activeName = this.#config.activeName(uuid)
    const writer = await openDataFile({ ...writerOptions, path: join(dir, activeName) })
    const segment: OpenSegment = {
      uuid,
      key,
      ...(name === undefined ? {} : { table: name }),
      partitionValues: partitioner.partition(row),
      activeName,
      openedAt: clock.now(),
      writer,
      batch: [],
    }
    let segments = this.#byTable[table]
    if (segments === undefined) {
      segments = new Map()
      this.#byTable[table] = segments
    }
    if (segments.size === 0) this.#openTables += 1
    segments.set(key, segment)
    this.#segments.push(segment)
    return segment
  }
}
