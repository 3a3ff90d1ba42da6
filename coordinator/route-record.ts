// The route record a routed dataset's ledger carries beside its marker (docs/architecture.md, "A
// route changed while the fleet runs"): which route generation the ledger is at, whether a switch
// to it is under way, and the earlier generations whose tables may still hold records past the
// ledger (their floors). Pure: what the switch commits, what the gate asks, what a worker skips.
//
// A ledger made before generations existed has no record: generation 0, whose tables' markers are
// the plain `floe.offsets.<group>`. Generation n > 0 keeps its markers under a key of its own
// (generationOffsetsKey, with the markers in shared/progress), so
// a table both routes name starts the new route's claims at the ledger, never at what the old
// route left in it.

import type { RouteDefinition } from '../shared/config/index.ts'
import type { TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { FloeError } from '../shared/index.ts'
import { type JsonValue, parseJson, stringifyJson } from '../shared/json/index.ts'
import type { Progress } from './progress.ts'

/** A route that ran, by generation. */
export interface RouteGeneration {
  generation: number
  fingerprint: string
  definition: RouteDefinition
}

/** Per topic, partition and table: the old route's marker in that table, above the ledger. */
export type RouteFloors = ReadonlyMap<string, ReadonlyMap<number, ReadonlyMap<string, bigint>>>

/** An earlier generation whose tables hold records past the ledger. */
export interface EarlierRoute extends RouteGeneration {
  floors: RouteFloors
}

export interface RouteRecord extends RouteGeneration {
  /**
   * When the switch to this generation was marked (ms since the epoch). A coordinator whose worker
   * started after it runs the newer configuration; one that started before does not switch back.
   */
  markedAtMs: number
  /** Set from the mark to the switched commit: the route that last ran, whose tables are fenced. */
  switchingFrom?: RouteGeneration
  /** Oldest first. */
  earlier: readonly EarlierRoute[]
}

/** The ledger's property (and summary key) holding the record. */
export const routeRecordKey = (group: string): string => `floe.route.${group}`

/** The summary key and property a fence writes on a table: the generation it is fenced for. */
export const fenceKey = (group: string): string => `floe.route-generation.${group}`

const damaged = (why: string, text: string) =>
  new FloeError('INVARIANT_BROKEN', `the ledger's route record is damaged: ${why}`, { details: { record: text } })

/** The ledger's record; undefined for a ledger of generation 0. A damaged record is fatal. */
export function readRouteRecord(metadata: TableMetadata, group: string): RouteRecord | undefined {
  const text = metadata.properties[routeRecordKey(group)]
  if (text === undefined) return undefined
  let parsed: JsonValue
  try {
    parsed = parseJson(text)
  } catch {
    throw damaged('not JSON', text)
  }
  const record = asObject(parsed)
  if (!record) throw damaged('not an object', text)
  const generation = generationOf(record, text)
  const markedAt = record.markedAtMs
  const markedAtMs = typeof markedAt === 'bigint' ? Number(markedAt) : markedAt
  if (typeof markedAtMs !== 'number' || !Number.isSafeInteger(markedAtMs)) throw damaged('no time of its mark', text)
  const switchingFrom =
    record.switchingFrom === undefined ? undefined : generationOf(asObject(record.switchingFrom), text)
  const earlier = record.earlier
  if (!Array.isArray(earlier)) throw damaged('earlier is not a list', text)
  return {
    ...generation,
    markedAtMs,
    ...(switchingFrom ? { switchingFrom } : {}),
    earlier: earlier.map((entry) => {
      const fields = asObject(entry)
      return { ...generationOf(fields, text), floors: floorsOf(fields?.floors, text) }
    }),
  }
}

export function encodeRouteRecord(record: RouteRecord): string {
  const generation = (g: RouteGeneration) => ({
    generation: g.generation,
    fingerprint: g.fingerprint,
    definition: { ...g.definition },
  })
  const floors = (f: RouteFloors) =>
    Object.fromEntries(
      [...f].map(([topic, partitions]) => [
        topic,
        Object.fromEntries(
          [...partitions].map(([partition, tables]) => [String(partition), Object.fromEntries(tables)]),
        ),
      ]),
    )
  return stringifyJson({
    ...generation(record),
    markedAtMs: record.markedAtMs,
    ...(record.switchingFrom ? { switchingFrom: generation(record.switchingFrom) } : {}),
    earlier: record.earlier.map((e) => ({ ...generation(e), floors: floors(e.floors) })),
  })
}

/**
 * The record a switch to `next` marks the ledger with, or undefined when the ledger is at `next`
 * already (switched, or switching to it: a switch to finish, not to mark again). The route being
 * switched from is the one that last ran: the current one, or, over a switch that never finished
 * (its route ran nothing), the one that switch was leaving.
 */
export function markedRecord(
  current: RouteRecord | undefined,
  next: { fingerprint: string; definition: RouteDefinition },
  atMs: number,
): RouteRecord | undefined {
  if (current?.fingerprint === next.fingerprint) return undefined
  // A ledger of generation 0 ran the route it is switched to, as far as anyone can tell.
  const ran = current ? (current.switchingFrom ?? current) : { generation: 0, ...next }
  const from: RouteGeneration = { generation: ran.generation, fingerprint: ran.fingerprint, definition: ran.definition }
  return {
    generation: (current?.generation ?? 0) + 1,
    fingerprint: next.fingerprint,
    definition: next.definition,
    markedAtMs: atMs,
    switchingFrom: from,
    earlier: current?.earlier ?? [],
  }
}

/**
 * The switched record: the route switched from becomes an earlier generation whose floors are the
 * fenced tables' markers above the ledger; earlier generations the ledger has passed are dropped.
 */
export function switchedRecord(
  marked: RouteRecord,
  ledger: Progress,
  fencedMarkers: ReadonlyMap<string, Progress>,
): RouteRecord {
  const from = marked.switchingFrom
  if (!from) throw new FloeError('INVARIANT_BROKEN', 'a switched record needs the route it switched from')
  const floors = new Map<string, Map<number, Map<string, bigint>>>()
  for (const [table, marker] of fencedMarkers) {
    for (const [topic, offsets] of marker) {
      for (const [partition, offset] of offsets) {
        if (offset <= (ledger.get(topic)?.get(partition) ?? 0n)) continue
        const byPartition = floors.get(topic) ?? new Map<number, Map<string, bigint>>()
        floors.set(topic, byPartition)
        const byTable = byPartition.get(partition) ?? new Map<string, bigint>()
        byPartition.set(partition, byTable)
        byTable.set(table, offset)
      }
    }
  }
  const { switchingFrom: _, ...rest } = marked
  return withoutPassedFloors({ ...rest, earlier: [...marked.earlier, { ...from, floors }] }, ledger)
}

/** The record without the floors the ledger has passed, and without generations left with none. */
export function withoutPassedFloors(record: RouteRecord, ledger: Progress): RouteRecord {
  const earlier: EarlierRoute[] = []
  for (const entry of record.earlier) {
    const floors = new Map<string, Map<number, ReadonlyMap<string, bigint>>>()
    for (const [topic, partitions] of entry.floors) {
      for (const [partition, tables] of partitions) {
        const at = ledger.get(topic)?.get(partition) ?? 0n
        if (![...tables.values()].some((offset) => offset > at)) continue
        const byPartition = floors.get(topic) ?? new Map<number, ReadonlyMap<string, bigint>>()
        floors.set(topic, byPartition)
        byPartition.set(partition, tables)
      }
    }
    if (floors.size > 0) earlier.push({ ...entry, floors })
  }
  return { ...record, earlier }
}

/**
 * Whether a coordinator of route `fingerprint`, whose worker started at `startedAtMs`, switches the
 * ledger: when it is at another route (or switching to another) that was marked before the worker
 * started. A mark after that is a newer configuration's, which an older worker does not undo.
 */
export function switchDue(
  record: RouteRecord | undefined,
  fingerprint: string,
  startedAtMs: number,
): { due: boolean; newer?: RouteRecord } {
  if (!record) return { due: true }
  if (record.fingerprint === fingerprint) return { due: record.switchingFrom !== undefined }
  return record.markedAtMs > startedAtMs ? { due: false, newer: record } : { due: true }
}

export type RouteGate = { open: true; generation: number } | { open: false; why: string }

/**
 * Whether a commit of the route `fingerprint` may land, asked of the ledger as read after the table
 * the commit loaded (the gate). A ledger of generation 0 takes any route: the switch records it.
 */
export function routeGate(record: RouteRecord | undefined, fingerprint: string): RouteGate {
  if (!record) return { open: true, generation: 0 }
  if (record.switchingFrom) return { open: false, why: `the ledger is switching to route ${record.fingerprint}` }
  if (record.fingerprint !== fingerprint) return { open: false, why: `the ledger is at route ${record.fingerprint}` }
  return { open: true, generation: record.generation }
}

function asObject(value: JsonValue | undefined): Record<string, JsonValue> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : undefined
}

function generationOf(fields: Record<string, JsonValue> | undefined, text: string): RouteGeneration {
  const generation = fields?.generation
  const number = typeof generation === 'bigint' ? Number(generation) : generation
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 0) throw damaged('a bad generation', text)
  if (typeof fields?.fingerprint !== 'string') throw damaged('no fingerprint', text)
  const definition = asObject(fields.definition)
  if (typeof definition?.field !== 'string' || typeof definition.table !== 'string') {
    throw damaged('a route without its field or table', text)
  }
  const values = definition.values
  if (values !== undefined && !(Array.isArray(values) && values.every((v) => typeof v === 'string'))) {
    throw damaged('route values that are not names', text)
  }
  const fallback = definition.fallback
  if (fallback !== undefined && typeof fallback !== 'string') throw damaged('a fallback that is not a name', text)
  return {
    generation: number,
    fingerprint: fields.fingerprint,
    definition: {
      field: definition.field,
      table: definition.table,
      ...(values === undefined ? {} : { values: values as string[] }),
      ...(fallback === undefined ? {} : { fallback }),
    },
  }
}

function floorsOf(value: JsonValue | undefined, text: string): RouteFloors {
  const topics = asObject(value)
  if (!topics) throw damaged('floors that are not an object', text)
  const floors = new Map<string, Map<number, Map<string, bigint>>>()
  for (const [topic, partitionsValue] of Object.entries(topics)) {
    const partitions = asObject(partitionsValue)
    if (!partitions) throw damaged(`floors of ${topic} that are not an object`, text)
    const byPartition = new Map<number, Map<string, bigint>>()
    for (const [partition, tablesValue] of Object.entries(partitions)) {
      const tables = asObject(tablesValue)
      const number = Number(partition)
      if (!tables || !/^(0|[1-9]\d{0,9})$/.test(partition)) throw damaged(`floors of ${topic} ${partition}`, text)
      const byTable = new Map<string, bigint>()
      for (const [table, offset] of Object.entries(tables)) {
        const at =
          typeof offset === 'bigint'
            ? offset
            : typeof offset === 'number' && Number.isSafeInteger(offset)
              ? BigInt(offset)
              : undefined
        if (at === undefined || at < 0n) throw damaged(`the floor of ${table}`, text)
        byTable.set(table, at)
      }
      byPartition.set(number, byTable)
    }
    floors.set(topic, byPartition)
  }
  return floors
}
