// The table's schema and default spec as a participant writes them. Another engine may evolve the
// table while Floe runs (a column added, the spec changed); read once a round, a change makes every
// segment opened afterwards follow the new schema and spec (open ones finish under theirs, see
// PartitionLog.useTable). Also the partition type of every spec a segment was written under, for
// the WRITE-STATUS.
import type { DatasetConfig } from '../shared/config/index.ts'
import type { PartitionSpec, Schema, StructType } from '../shared/iceberg/index.ts'
import { compilePartitioner } from '../shared/iceberg/partitioning/index.ts'
import { FloeError, messageOf } from '../shared/index.ts'
import type { Logger } from '../shared/telemetry/index.ts'

export interface TableShape {
  schema: Schema
  spec: PartitionSpec
}

export class TableFollower {
  /** Updated in place: the slots' environment reads its schema and spec when a log opens. */
  readonly #shape: TableShape
  readonly #current: (() => Promise<TableShape>) | undefined
  readonly #logger: Logger
  readonly #partitionTypes = new Map<number, StructType>()
  #reading = false

  constructor(shape: TableShape, current: (() => Promise<TableShape>) | undefined, logger: Logger) {
    this.#shape = shape
    this.#current = current
    this.#logger = logger
    this.#partitionTypes.set(shape.spec['spec-id'], compilePartitioner(shape.spec, shape.schema).partitionType)
  }

  /** The partition type of a spec this participant wrote files under. */
  partitionTypeOf(specId: number, filePath: string): StructType {
    const type = this.#partitionTypes.get(specId)
    if (!type) {
      throw new FloeError(
        'INVARIANT_BROKEN',
        `data file ${filePath} follows spec ${specId}, which this participant never wrote`,
        { details: { filePath, specId } },
      )
    }
    return type
  }

  /** The schema and spec in use: what a log opened now follows. */
  get shape(): Readonly<TableShape> {
    return this.#shape
  }

  /**
   * Makes `shape` the one in use (a dataset that infers its columns does so itself, when its
   * decoder and WAL change with it), and remembers its spec's partition type.
   */
  adopt(shape: TableShape): void {
    this.#partitionTypes.set(shape.spec['spec-id'], compilePartitioner(shape.spec, shape.schema).partitionType)
    this.#shape.schema = shape.schema
    this.#shape.spec = shape.spec
  }

  /**
   * Reads the table's schema and spec; when they changed, updates the shape (unless `adopt` is
   * false: the caller adopts it) and calls `changed`.
   * Never throws: a table that cannot be read, or a spec this worker cannot partition by (a
   * transform it lacks), keeps the shape in use (files of any spec the table knows commit).
   */
  async follow(changed: (shape: TableShape) => void, options: { adopt: boolean } = { adopt: true }): Promise<void> {
    const current = this.#current
    if (!current || this.#reading) return
    this.#reading = true
    const shape = this.#shape
    try {
      const { schema, spec } = await current()
      if (schema['schema-id'] === shape.schema['schema-id'] && spec['spec-id'] === shape.spec['spec-id']) return
      // throws for a spec this worker cannot partition by, before anything changes
      compilePartitioner(spec, schema)
      this.#logger.info(
        {
          schemaId: schema['schema-id'],
          specId: spec['spec-id'],
          previousSchemaId: shape.schema['schema-id'],
          previousSpecId: shape.spec['spec-id'],
        },
        'the table changed: new segments follow its schema and partition spec',
      )
      if (options.adopt) this.adopt({ schema, spec })
      changed({ schema, spec })
    } catch (error) {
      this.#logger.warn(
        { err: messageOf(error) },
        "could not follow the table's schema and spec; keeping the current ones",
      )
    } finally {
      this.#reading = false
    }
  }
}

/** The field ids of the dataset's bloom-filter columns in the table's schema. */
export function bloomFieldIdsOf(dataset: DatasetConfig, schema: Schema): number[] {
  return dataset.bloomFilterColumns.map((name) => {
    const field = schema.fields.find((f) => f.name === name)
    if (!field) throw new FloeError('CONFIG_INVALID', `bloom filter column ${name} is not in table ${dataset.table}`)
    return field.id
  })
}
