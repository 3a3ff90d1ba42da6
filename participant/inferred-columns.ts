// The table's schema as a dataset that infers its columns moves it: between two turns of the
// record loop, never inside one. A record the schema cannot take stops its partition's batch there
// (decodeFetched); after the turn's appends, every such record's fields are committed to the table
// as one widened schema (`widen`, the catalog's), and then the decoder, the WAL and the slots'
// environment change to it together: the open segments are rotated first, so a segment never holds
// rows of two schemas, and no row reaches a segment whose schema lacks its fields.
//
// A change another worker (or engine) made is read at START-COMMIT like any dataset's, and waits
// here for the loop too: until it is applied, this worker's rows keep the schema they were
// decoded under, in segments of that schema.
import type { NestedField } from '../shared/iceberg/index.ts'
import { isFloeError, messageOf } from '../shared/index.ts'
import type { Logger, PhaseClock } from '../shared/telemetry/index.ts'
import type { Decoder } from './decode/index.ts'
import type { TableFollower, TableShape } from './table-follower.ts'

export interface InferredColumnsOptions {
  follower: TableFollower
  decoder: Decoder
  /** Commits the table's schema widened to take every request; resolves to the table's schema and spec after it. */
  widen(requests: readonly (readonly NestedField[])[]): Promise<TableShape>
  /** Makes every open log rotate and follow the shape (each slot's, or the shared WAL). */
  followTable(shape: TableShape): Promise<void>
  logger: Logger
  phases: PhaseClock
}

export class InferredColumns {
  readonly #o: InferredColumnsOptions
  #requests: (readonly NestedField[])[] = []
  /** A change read from the table, not yet applied. */
  #read: TableShape | undefined
  /** Counts the shapes applied: a read begun before the last one may hold an older schema. */
  #applied = 0

  constructor(options: InferredColumnsOptions) {
    this.#o = options
  }

  /** A batch stopped at a record that needs these fields (the turn's appends go first). */
  request(fields: readonly NestedField[]): void {
    this.#requests.push(fields)
  }

  /** Stamps a read of the table about to begin, for `changed`. */
  get generation(): number {
    return this.#applied
  }

  /**
   * The table changed (read at START-COMMIT, begun at `generation`): applied at the loop's next
   * turn. A read that began before this worker applied a widening of its own may have seen the
   * table before it, and is dropped: the next START-COMMIT reads again.
   */
  changed(shape: TableShape, generation: number): void {
    if (generation === this.#applied) this.#read = shape
  }

  /** Whether the loop has something to apply before it fetches again. */
  get pending(): boolean {
    return this.#requests.length > 0 || this.#read !== undefined
  }

  /**
   * Commits the requested widening, if any, and applies the table's schema of the moment. A failure
   * (the catalog down) throws and leaves the requests: the loop fetches nothing until a later turn
   * succeeds (while the catalog is down no round commits either).
   */
  async settle(): Promise<void> {
    if (!this.pending) return
    this.#o.phases.switchTo('schema')
    let shape = this.#read
    if (this.#requests.length > 0) {
      shape = await this.#widen(this.#requests)
      this.#requests = []
    }
    this.#read = undefined
    if (!shape) return
    const { follower, decoder } = this.#o
    const current = follower.shape
    if (shape.schema['schema-id'] === current.schema['schema-id'] && shape.spec['spec-id'] === current.spec['spec-id'])
      return
    // Adopted before the WAL rotates: a log a sync opens meanwhile follows the new shape, as the decoder does.
    this.#applied++
    follower.adopt(shape)
    decoder.useSchema?.(shape.schema)
    this.#o.logger.info(
      { schemaId: shape.schema['schema-id'], columns: shape.schema.fields.length },
      'records decode and segments open under the widened schema',
    )
    await this.#o.followTable(shape)
  }

  /**
   * Commits the requests together; when the catalog refuses that schema (a 400: a name or type it
   * does not take), each request alone, so that one record's fields cannot hold back another's. The
   * refused ones are the decoder's to dead-letter, with the catalog's words, until the schema changes.
   */
  async #widen(requests: readonly (readonly NestedField[])[]): Promise<TableShape> {
    try {
      return await this.#o.widen(requests)
    } catch (error) {
      if (!isFloeError(error, 'CATALOG_BAD_REQUEST')) throw error
    }
    let shape: TableShape | undefined
    for (const request of requests) {
      try {
        shape = await this.#o.widen([request])
      } catch (error) {
        if (!isFloeError(error, 'CATALOG_BAD_REQUEST')) throw error
        this.#o.logger.warn(
          { fields: request.map((field) => field.name), err: messageOf(error) },
          'the catalog refused the columns records brought: such records go to the dead-letter path',
        )
        this.#o.decoder.refuseWidening?.(request, messageOf(error))
      }
    }
    return shape ?? (await this.#o.widen([]))
  }
}
