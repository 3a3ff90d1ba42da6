// A routed dataset's skip floors (docs/architecture.md, "Markers and the ledger", invariant 2): after
// a rejection a partition reads again from the ledger, and the tables its ACK named hold its
// records below their floors already. The decoder skips those records (decodeFetched) and the WAL
// starts those tables' claims at the floors, so the two must always see the same floors: every
// sync and every walk of the WAL takes them from here.
//
// A floor is a fact about its table (it holds every record of the partition below it), whichever
// ACK named it, so floors of one partition only add up; they are dropped once the partition reads
// past the highest, or when it is let go of.

/** One partition's floors as the decoder looks them up. */
export interface SkipFloors {
  /** `namespace.table` -> its next offset for the partition. */
  readonly byTable: ReadonlyMap<string, bigint>
  /** The highest floor: past it no record is looked up. */
  readonly below: bigint
}

export function skipFloorsOf(byTable: ReadonlyMap<string, bigint>): SkipFloors | undefined {
  let below: bigint | undefined
  for (const floor of byTable.values()) if (below === undefined || floor > below) below = floor
  return below === undefined ? undefined : { byTable, below }
}

/** The floors of a topic's partitions on this worker. */
export class PartitionFloors {
  readonly #floors = new Map<number, SkipFloors>()

  get(partition: number): SkipFloors | undefined {
    return this.#floors.get(partition)
  }

  /** Adds the floors an ACK named, keeping the higher of two for one table. */
  merge(partition: number, named: ReadonlyMap<string, bigint>): void {
    const byTable = new Map(this.#floors.get(partition)?.byTable)
    for (const [table, offset] of named) if (offset > (byTable.get(table) ?? -1n)) byTable.set(table, offset)
    const merged = skipFloorsOf(byTable)
    if (merged) this.#floors.set(partition, merged)
  }

  /** The partition read up to `next`: past the highest floor none is needed any more. */
  readTo(partition: number, next: bigint): void {
    const floors = this.#floors.get(partition)
    if (floors && next >= floors.below) this.#floors.delete(partition)
  }

  forget(partition: number): void {
    this.#floors.delete(partition)
  }

  /** Every partition's floors by table, keyed as `key` names a partition (the WAL's walk). */
  byKey(key: (partition: number) => string): Map<string, ReadonlyMap<string, bigint>> {
    const keyed = new Map<string, ReadonlyMap<string, bigint>>()
    for (const [partition, { byTable }] of this.#floors) keyed.set(key(partition), byTable)
    return keyed
  }
}
