// What earlier route generations' tables hold above the ledger (docs/architecture.md, "A route
// changed while the fleet runs"): after a switch, a partition reads again from the ledger, and a
// record that an earlier route sent to a table whose floor for the partition is above the record's
// offset is in that table already. The decoder skips it (decodeFetched), judged by the earlier
// route, which may send it elsewhere than the current one. The WAL's claims need nothing of this:
// a claim vouches for the records of its range that the current route sends to its table, less
// those the floors skip, and every worker skips by the same floors (the ledger's).
import { type RouteDefinition, routeOfDefinition } from '../shared/config/index.ts'
import type { Decoder, RecordCoordinates } from './decode/index.ts'
import { RecordRoute } from './decode/index.ts'

/** An earlier generation as the ledger records it: its route and, per topic and partition, its tables' floors. */
export interface EarlierRouteFloors {
  generation: number
  definition: RouteDefinition
  floors: ReadonlyMap<string, ReadonlyMap<number, ReadonlyMap<string, bigint>>>
}

/** One partition's floors of every earlier generation. */
export interface PartitionEarlierFloors {
  /** The highest floor: at or past it no record is looked up. */
  readonly below: bigint
  /** A route reads the record's coordinates. */
  readonly readsCoordinates: boolean
  /** The record decoded last, at `offset`, is in an earlier route's table. */
  holds(decoder: Decoder, offset: bigint, record: RecordCoordinates | undefined): boolean
}

/** The floors of the ledger's earlier route generations, as the worker last read them. */
export class EarlierRoutes {
  /** By generation: its route, compiled once. */
  readonly #routes = new Map<number, RecordRoute>()
  #earlier: readonly EarlierRouteFloors[] = []
  /** Per partition (`topic`, NUL, partition), asked at every fetch: built once per update. */
  readonly #byPartition = new Map<string, PartitionEarlierFloors | undefined>()

  /** The ledger's earlier generations, as a positioning just read them. */
  update(earlier: readonly EarlierRouteFloors[]): void {
    this.#earlier = earlier
    this.#byPartition.clear()
    for (const { generation, definition } of earlier) {
      if (!this.#routes.has(generation)) this.#routes.set(generation, new RecordRoute(routeOfDefinition(definition)))
    }
  }

  of(topic: string, partition: number): PartitionEarlierFloors | undefined {
    if (this.#earlier.length === 0) return undefined
    const key = `${topic}\u0000${partition}`
    if (this.#byPartition.has(key)) return this.#byPartition.get(key)
    const floors = this.#build(topic, partition)
    this.#byPartition.set(key, floors)
    return floors
  }

  #build(topic: string, partition: number): PartitionEarlierFloors | undefined {
    const parts: Array<{ route: RecordRoute; byTable: ReadonlyMap<string, bigint> }> = []
    let below = -1n
    for (const { generation, floors } of this.#earlier) {
      const byTable = floors.get(topic)?.get(partition)
      if (!byTable || byTable.size === 0) continue
      parts.push({ route: this.#routes.get(generation) as RecordRoute, byTable })
      for (const floor of byTable.values()) if (floor > below) below = floor
    }
    if (parts.length === 0) return undefined
    return {
      below,
      readsCoordinates: parts.some(({ route }) => route.readsCoordinates),
      holds(decoder, offset, record) {
        for (const { route, byTable } of parts) {
          const table = decoder.tableBy?.(route, record)
          const floor = table === undefined ? undefined : byTable.get(table)
          if (floor !== undefined && offset < floor) return true
        }
        return false
      },
    }
  }
}
