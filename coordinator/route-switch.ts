// The switch of a routed dataset's ledger to another route (docs/architecture.md, "A route changed
// while the fleet runs"), on a real catalog: mark the ledger, fence every table the route that
// last ran can name, commit the ledger switched with those tables' markers above it as floors.
// Each step is a compare-and-set commit that re-decides against what it just loaded, so a switch
// that died anywhere is finished by the next one, and two switches to different routes leave the
// later mark's route (the earlier one's last commit finds the ledger moved on and gives up).
//
// What makes a fenced table's marker final: an old-route commit that loaded the table before the
// mark lands before the fence (which reads it) or loses its compare-and-set to the fence, and every
// attempt that loads it after the mark is refused by the gate (routeGate, asked of the ledger
// after the table's load); so is every commit to a table created after the listing.

import { randomUUID } from 'node:crypto'
import { type Catalog, formatTableIdentifier, type TableIdentifier } from '../shared/catalog/index.ts'
import { type RouteDefinition, routeCanName, routeNamespaces } from '../shared/config/index.ts'
import { type AppendContent, appendFiles, type RetryPolicy } from '../shared/iceberg/commit/index.ts'
import type { TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { ancestorsOfRef } from '../shared/iceberg/metadata/index.ts'
import { FloeError, isFloeError } from '../shared/index.ts'
import type { ObjectStorage } from '../shared/storage/index.ts'
import { eachBounded } from './each-bounded.ts'
import { findMarkerIn, generationOffsetsKey, type Progress, readProgress } from './progress.ts'
import {
  encodeRouteRecord,
  fenceKey,
  markedRecord,
  type RouteGate,
  type RouteRecord,
  readRouteRecord,
  routeGate,
  routeRecordKey,
  switchedRecord,
} from './route-record.ts'

export interface RouteSwitchTarget {
  catalog: Catalog
  storage: ObjectStorage
  /** The dataset's table: the ledger. */
  ledger: TableIdentifier
  group: string
  retry?: Partial<RetryPolicy>
  /** How many tables are fenced at once. */
  concurrency?: number
  signal?: AbortSignal
}

export interface RouteSwitchRequest {
  fingerprint: string
  definition: RouteDefinition
}

export interface RouteSwitchResult {
  /** False when the ledger was at the route already: nothing was committed. */
  switched: boolean
  record: RouteRecord
  /** The tables fenced, by name. */
  fenced: string[]
  /** How many (topic, partition, table) floors the switch recorded. */
  floors: number
}

const switchCommitKey = 'floe.route-switch-id'

const giveUp = (why: string) => new FloeError('COMMIT_REJECTED', why)

/** Switches the ledger to the route of `request`; finishes a switch to it that another left. */
export async function switchRoute(target: RouteSwitchTarget, request: RouteSwitchRequest): Promise<RouteSwitchResult> {
  const switchId = randomUUID()
  const marked = await markLedger(target, request, switchId)
  if (!marked.switchingFrom) return { switched: false, record: marked, fenced: [], floors: 0 }
  const tables = await tablesRouteCanName(
    target.catalog,
    marked.switchingFrom.definition,
    formatTableIdentifier(target.ledger),
  )
  const markers = new Map<string, Progress>()
  await eachBounded(tables, target.concurrency ?? 8, async (table) => {
    const marker = await fence(target, table, marked, switchId)
    if (marker) markers.set(formatTableIdentifier(table), marker)
  })
  const record = await commitSwitched(target, marked, markers, switchId)
  const floors = record.earlier.at(-1)?.generation === marked.switchingFrom.generation ? countFloors(record) : 0
  return { switched: true, record, fenced: [...markers.keys()].sort(), floors }
}

/** The ledger's route record as it is now. */
export async function loadRouteRecord(catalog: Catalog, ledger: TableIdentifier, group: string) {
  return readRouteRecord((await catalog.loadTable(ledger)).metadata, group)
}

/**
 * The gate a table commit of route `fingerprint` asks after it loaded the table: a ledger read that
 * starts now (so after that load).
 */
export async function askRouteGate(
  target: Pick<RouteSwitchTarget, 'catalog' | 'ledger' | 'group'>,
  fingerprint: string,
): Promise<RouteGate> {
  return routeGate(await loadRouteRecord(target.catalog, target.ledger, target.group), fingerprint)
}

/** Step 1: the ledger marked switching (or found so, or found at the route already). */
async function markLedger(
  target: RouteSwitchTarget,
  request: RouteSwitchRequest,
  switchId: string,
): Promise<RouteRecord> {
  let seen: RouteRecord | undefined
  try {
    const result = await appendFiles({
      ...base(target, `${switchId}:mark`),
      table: target.ledger,
      content: (metadata) => {
        seen = readRouteRecord(metadata, target.group)
        const next = markedRecord(seen, request, Date.now())
        if (!next) throw giveUp('the ledger is at the route already')
        return recordContent(target.group, next)
      },
    })
    return readRouteRecord(result.metadata, target.group) as RouteRecord
  } catch (error) {
    if (isFloeError(error, 'COMMIT_REJECTED') && seen) return seen
    throw error
  }
}

/**
 * Step 2, one table: a commit of no data that moves its main and records the generation, then its
 * marker of the route switched from, final from here on. Undefined when the table is gone.
 */
async function fence(
  target: RouteSwitchTarget,
  table: TableIdentifier,
  marked: RouteRecord,
  switchId: string,
): Promise<Progress | undefined> {
  const from = marked.switchingFrom as NonNullable<RouteRecord['switchingFrom']>
  const key = generationOffsetsKey(target.group, from.generation)
  let marker: Progress | undefined
  const markerOf = (metadata: TableMetadata) => findMarkerIn(metadata, key, ancestorsOfRef(metadata)).progress
  try {
    await appendFiles({
      ...base(target, `${switchId}:fence`),
      table,
      content: (metadata) => {
        marker = markerOf(metadata)
        // Fenced for this generation or a later one already: no old commit lands after that fence.
        if (Number(metadata.properties[fenceKey(target.group)] ?? -1) >= marked.generation) {
          throw giveUp('fenced already')
        }
        const generation = String(marked.generation)
        return {
          files: [],
          summary: { [fenceKey(target.group)]: generation },
          properties: { [fenceKey(target.group)]: generation },
        }
      },
    })
    return marker
  } catch (error) {
    if (isFloeError(error, 'CATALOG_NOT_FOUND')) return undefined
    if (isFloeError(error, 'COMMIT_REJECTED') && marker) return marker
    throw error
  }
}

/** Step 3: the ledger switched, with the floors; given up when another switch marked it since. */
async function commitSwitched(
  target: RouteSwitchTarget,
  marked: RouteRecord,
  markers: ReadonlyMap<string, Progress>,
  switchId: string,
): Promise<RouteRecord> {
  const result = await appendFiles({
    ...base(target, `${switchId}:switched`),
    table: target.ledger,
    content: (metadata) => {
      const now = readRouteRecord(metadata, target.group)
      if (now?.generation !== marked.generation || !now.switchingFrom) {
        throw new FloeError(
          'COMMIT_REJECTED',
          `another route switch moved the ledger to generation ${now?.generation ?? 0}`,
        )
      }
      return recordContent(target.group, switchedRecord(now, readProgress(metadata, target.group), markers))
    },
  })
  return readRouteRecord(result.metadata, target.group) as RouteRecord
}

/**
 * Every table of the route's namespaces that the route can name, with a marker or not: an old
 * participant may have created one that no commit has reached yet, and a commit that loaded it
 * before the mark must meet a fence.
 */
export async function tablesRouteCanName(
  catalog: Catalog,
  definition: RouteDefinition,
  ledger: string,
): Promise<TableIdentifier[]> {
  const route = {
    table: definition.table,
    values: definition.values && new Set(definition.values),
    fallback: definition.fallback,
  }
  const found: TableIdentifier[] = []
  for (const namespace of routeNamespaces(route)) {
    const tables = await catalog.listTables(namespace.split('.')).catch((error: unknown) => {
      if (isFloeError(error, 'CATALOG_NOT_FOUND')) return []
      throw error
    })
    for (const table of tables) if (routeCanName(route, ledger, formatTableIdentifier(table))) found.push(table)
  }
  return found
}

function recordContent(group: string, record: RouteRecord): AppendContent {
  const encoded = encodeRouteRecord(record)
  return { files: [], summary: { [routeRecordKey(group)]: encoded }, properties: { [routeRecordKey(group)]: encoded } }
}

function base(target: RouteSwitchTarget, commitId: string) {
  return {
    catalog: target.catalog,
    storage: target.storage,
    commitId,
    commitIdKey: switchCommitKey,
    ...(target.retry ? { retry: target.retry } : {}),
    ...(target.signal ? { signal: target.signal } : {}),
  }
}

function countFloors(record: RouteRecord): number {
  let count = 0
  for (const partitions of record.earlier.at(-1)?.floors.values() ?? []) {
    for (const tables of partitions.values()) count += tables.size
  }
  return count
}
