// The decode step: Kafka record value -> one row of the dataset's table, or a RECORD_MALFORMED
// error naming why (reasons.ts). Compiled once per dataset; `decode` runs per record.
//
// Hot-path choices (the figures are in decode.bench.ts, mapping.ts and text.ts):
// - Per-column state lives in parallel arrays built at compile time (expression, how to evaluate
//   it, converter, column name), so a record costs one loop and no closure or object spread.
// - The mapped values go into one scratch array owned by the decoder (decode is synchronous and
//   never re-entered), so splitting map and convert costs no allocation per record.
// - The row object gets its columns in schema order every time, so every row shares one hidden
//   class and the WAL's column writers read it monomorphically.
//
// Numbers beyond double precision: JSON.parse rounds them, silently. The value converters
// (shared/iceberg/values) refuse, at any depth, what that rounding would change: a `long` given a
// JSON number outside ±(2^53 - 1), a `decimal` given one of more than 15 significant digits, a
// `float` or `double` given one that overflowed to Infinity; each message says to send a string.
import { type DatasetConfig, parseKafkaSource } from '../../shared/config/index.ts'
import type { NestedField, Schema, StructValue } from '../../shared/iceberg/index.ts'
import { compileConverter, type ValueConverter } from '../../shared/iceberg/values/index.ts'
import { FloeError, messageOf } from '../../shared/index.ts'
import { compileKafkaColumn, type RecordCoordinates } from './kafka-columns.ts'
import {
  compileColumnExpression,
  type EvaluationKind,
  type ExpressionNode,
  INTERPRETED,
  interpret,
  KAFKA_SOURCE,
  PLAIN_PATH,
  walkOwnPath,
  walkPath,
} from './mapping.ts'
import { parseJsonObject, refuseTooLarge } from './parse.ts'
import { conversionRefusal, malformed } from './reasons.ts'
import { RecordRoute, type RouteTables } from './route.ts'

export interface DecoderOptions {
  /** A record longer than this (bytes) is refused as too-large: `ingestion.maxRecordBytes`. */
  maxRecordBytes: number
  /** Deepest nesting of JSON containers accepted; the top-level object is depth 1. Default 64. */
  maxDepth?: number
}

/** Internal knobs for the benchmark's comparisons; the product always uses the defaults. */
export interface DecoderTuning {
  /** Evaluate plain dotted paths without the JMESPath interpreter. Default true. */
  plainPaths: boolean
}

export interface Decoder {
  readonly dataset: string
  /** The table's top-level columns, in schema order: the keys of every decoded row. */
  readonly columns: readonly string[]
  /** Some column or the route reads the record's Kafka coordinates (`$kafka.offset`, ...): decode needs them. */
  readonly readsCoordinates: boolean
  /** A routed dataset's tables, numbered as records first name them; undefined without a route. */
  readonly routeTables?: RouteTables
  /**
   * The table number (routeTables) of the row decode returned last; 0 without a route. A field
   * rather than a second return value: decode runs per record and allocates nothing more for it.
   */
  readonly table: number
  /**
   * A routed dataset's: the table `route` (an earlier route generation's) sends the record decode
   * was given last to (one it refused because the current route names no table for it too), or
   * undefined when that route sends it to none or the record did not parse.
   */
  tableBy?(route: RecordRoute, record?: RecordCoordinates): string | undefined
  /**
   * One Kafka record value -> one row. Throws FloeError RECORD_MALFORMED (details.reason, column).
   * `record`: the record's coordinates, needed when readsCoordinates.
   */
  decode(value: Buffer | undefined, record?: RecordCoordinates): StructValue
  /**
   * A decoder whose columns follow the table (a dataset that infers them): decode by this schema
   * from now on. Its decode throws SchemaWidening for a record the schema cannot take as it is.
   */
  useSchema?(schema: Schema): void
  /**
   * The catalog refused the schema these fields would make: a record that needs no more than them
   * is refused (schema-refused) instead of asking again, until the next useSchema.
   */
  refuseWidening?(fields: readonly NestedField[], reason: string): void
}

export const DEFAULT_MAX_DEPTH = 64

const NOTHING_PARSED: object = Object.freeze({})

// The expression slot of a column read from the record's coordinates: never evaluated, one for all.
const NO_EXPRESSION: ExpressionNode = compileColumnExpression('@', false).node

export class RecordDecoder implements Decoder {
  readonly dataset: string
  readonly columns: readonly string[]
  readonly readsCoordinates: boolean
  readonly routeTables: RecordRoute | undefined
  table = 0
  /** The value decode parsed last (a routed dataset's), for tableBy. */
  #lastData: object | undefined
  readonly #maxRecordBytes: number
  readonly #maxDepth: number
  readonly #count: number
  readonly #expressions: readonly string[]
  readonly #nodes: readonly ExpressionNode[]
  readonly #kinds: readonly EvaluationKind[]
  readonly #paths: readonly string[][]
  readonly #converters: readonly ValueConverter[]
  readonly #mapped: unknown[]
  /** Every column reads the record's coordinates (a raw archive): the value is never parsed. */
  readonly #coordinatesOnly: boolean
  // A column named like an Object.prototype member would set the row's prototype (`__proto__`) or
  // go through an inherited setter; the rare schema with one builds rows with defineProperty.
  readonly #guardedRow: boolean

  constructor(dataset: DatasetConfig, options: DecoderOptions, tuning: DecoderTuning = { plainPaths: true }) {
    this.dataset = dataset.name
    this.#maxRecordBytes = options.maxRecordBytes
    this.#maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH
    const unit = dataset.timestampUnit
    const fields = dataset.icebergSchema.fields
    const expressions: string[] = []
    const nodes: ExpressionNode[] = []
    const kinds: EvaluationKind[] = []
    const paths: string[][] = []
    const converters: ValueConverter[] = []
    for (const field of fields) {
      const text = dataset.customMapping[field.name]
      if (text === undefined) {
        // resolveDataset already refuses this; a hand-built DatasetConfig may not have.
        throw new FloeError('CONFIG_INVALID', `dataset ${dataset.name}: no customMapping for column ${field.name}`)
      }
      const source = parseKafkaSource(text)
      if (source instanceof Error) throw new FloeError('CONFIG_INVALID', `dataset ${dataset.name}: ${source.message}`)
      if (source) {
        // The column's "mapped value" is the record's coordinates; its converter reads them.
        expressions.push(text)
        nodes.push(NO_EXPRESSION)
        kinds.push(KAFKA_SOURCE)
        paths.push([])
        const read = compileKafkaColumn(source, field.type, field.name, field.required)
        converters.push((record) => read(record as RecordCoordinates))
        continue
      }
      const expression = compileColumnExpression(text, tuning.plainPaths)
      expressions.push(text)
      nodes.push(expression.node)
      kinds.push(expression.kind)
      paths.push(expression.path)
      converters.push(compileConverter(field.type, field.name, { required: field.required, timestampEpochUnit: unit }))
    }
    this.columns = fields.map((field) => field.name)
    this.routeTables = dataset.route && new RecordRoute(dataset.route)
    this.readsCoordinates = kinds.includes(KAFKA_SOURCE) || this.routeTables?.readsCoordinates === true
    this.#coordinatesOnly = kinds.every((kind) => kind === KAFKA_SOURCE) && this.routeTables?.readsCoordinates !== false
    this.#count = fields.length
    this.#expressions = expressions
    this.#nodes = nodes
    this.#kinds = kinds
    this.#paths = paths
    this.#converters = converters
    this.#mapped = new Array(fields.length).fill(undefined)
    this.#guardedRow = this.columns.some((name) => name in Object.prototype)
  }

  decode(value: Buffer | undefined, record?: RecordCoordinates): StructValue {
    let data = NOTHING_PARSED
    // cleared first: a record that does not parse has no table under any route (tableBy)
    this.#lastData = undefined
    if (!this.#coordinatesOnly) data = this.parse(value)
    // a tombstone, empty or non-JSON value is a record like any other here; only the size limit holds
    else if (value !== undefined) refuseTooLarge(value, this.#maxRecordBytes)
    if (this.routeTables) {
      // kept before the route judges it: a record this route names no table for may be in the
      // table an earlier route named
      this.#lastData = data
      this.table = this.routeTables.tableOf(data, record)
    }
    this.map(data, record)
    return this.convert()
  }

  tableBy(route: RecordRoute, record?: RecordCoordinates): string | undefined {
    if (this.#lastData === undefined) return undefined
    try {
      return route.names[route.tableOf(this.#lastData, record)]
    } catch {
      return undefined
    }
  }

  /** Bytes -> the parsed top-level JSON object. Public for the benchmark's split. */
  parse(value: Buffer | undefined): object {
    return parseJsonObject(value, this.#maxRecordBytes, this.#maxDepth)
  }

  /** Evaluates every column's expression into the scratch array. Public for the benchmark's split. */
  map(data: object, record?: RecordCoordinates): void {
    const mapped = this.#mapped
    const kinds = this.#kinds
    const paths = this.#paths
    for (let i = 0; i < this.#count; i++) {
      const kind = kinds[i]
      // Branch on a small integer rather than calling a per-column closure: the call sites stay
      // monomorphic, and plain paths never reach the interpreter's try.
      if (kind === PLAIN_PATH) mapped[i] = walkPath(data, paths[i]!)
      else if (kind === INTERPRETED) mapped[i] = this.#interpret(i, data)
      else if (kind === KAFKA_SOURCE) mapped[i] = record
      else mapped[i] = walkOwnPath(data, paths[i]!)
    }
  }

  /** Converts the scratch array into a row. Public for the benchmark's split. */
  convert(): StructValue {
    const mapped = this.#mapped
    const converters = this.#converters
    const columns = this.columns
    const row: StructValue = {}
    let i = 0
    try {
      if (this.#guardedRow) {
        for (; i < this.#count; i++) {
          const value = converters[i]!(mapped[i])
          Object.defineProperty(row, columns[i]!, { value, enumerable: true, writable: true, configurable: true })
        }
      } else {
        for (; i < this.#count; i++) row[columns[i]!] = converters[i]!(mapped[i])
      }
    } catch (error) {
      throw conversionRefusal(error, this.columns[i]!)
    }
    return row
  }

  #interpret(i: number, data: object): unknown {
    try {
      return interpret(this.#nodes[i]!, data)
    } catch (error) {
      const column = this.columns[i]!
      const expression = this.#expressions[i]!
      throw malformed('mapping-failed', `column ${column}: JMESPath '${expression}' failed: ${messageOf(error)}`, {
        column,
        cause: error,
        details: { expression },
      })
    }
  }
}
