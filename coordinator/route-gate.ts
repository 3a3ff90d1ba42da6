// The route gate of a routed round's commits (docs/architecture.md, "A route changed while the fleet
// runs"): a commit of route generation g lands only while the ledger is at g and not switching, as
// read after the commit loaded its table; and the ledger's advance drops the floors it passes.
import type { AppendContent } from '../shared/iceberg/commit/index.ts'
import type { TableMetadata } from '../shared/iceberg/metadata/index.ts'
import type { Progress } from './progress.ts'
import {
  encodeRouteRecord,
  type RouteGate,
  type RouteRecord,
  readRouteRecord,
  routeGate,
  routeRecordKey,
  withoutPassedFloors,
} from './route-record.ts'
import type { RoutedCommitTarget } from './routed-commit.ts'

/** The gate as the ledger `metadata` answers it; open at generation 0 without a route (tests of the round alone). */
export function ledgerGate(target: RoutedCommitTarget, metadata: TableMetadata): RouteGate {
  return target.route === undefined
    ? { open: true, generation: 0 }
    : routeGate(readRouteRecord(metadata, target.group), target.route)
}

/**
 * The gate asked after a table's load: of a ledger read that starts after the ask. Tables that ask
 * together share the next read, so a round reads the ledger about once per wave of table commits.
 */
export class FreshGate {
  readonly #target: RoutedCommitTarget
  readonly #generation: number
  #reading: Promise<unknown> | undefined
  #next: Promise<RouteGate> | undefined

  constructor(target: RoutedCommitTarget, generation: number) {
    this.#target = target
    this.#generation = generation
  }

  ask(): Promise<RouteGate> {
    if (this.#target.route === undefined) return Promise.resolve({ open: true, generation: this.#generation })
    // A read asked for and not yet started starts after this call: it will do.
    this.#next ??= this.#read()
    return this.#next
  }

  async #read(): Promise<RouteGate> {
    await this.#reading?.catch(() => undefined)
    this.#next = undefined
    const reading = this.#target.catalog.loadTable(this.#target.ledger)
    this.#reading = reading
    const gate = ledgerGate(this.#target, (await reading).metadata)
    if (gate.open && gate.generation !== this.#generation) {
      return { open: false, why: `the ledger moved to route generation ${gate.generation}` }
    }
    return gate
  }
}

/** The advance's content, with the route record's floors the ledger now passes dropped. */
export function withPassedFloorsDropped(
  group: string,
  record: RouteRecord | undefined,
  ledger: Progress,
  content: AppendContent,
): AppendContent {
  if (!record || record.earlier.length === 0) return content
  const kept = withoutPassedFloors(record, ledger)
  const encoded = encodeRouteRecord(kept)
  if (encoded === encodeRouteRecord(record)) return content
  return {
    ...content,
    summary: { ...content.summary, [routeRecordKey(group)]: encoded },
    properties: { ...content.properties, [routeRecordKey(group)]: encoded },
  }
}
