// The decode step of a dataset that infers its columns (no customMapping): each record's JSON
// object becomes a row of the table's schema of the moment, field by field, by name. A record the
// schema cannot take as it is (a new field, an integer beyond an int column) is not decoded: the
// decoder throws SchemaWidening with the fields the record suggests, the participant commits the
// widened schema to the table, makes its WAL follow it (useSchema here), and reads the record again.
// Values of another kind than their column's (a string in a long column, a fraction in an integer
// one: Iceberg cannot widen an integer to a double) are refused, as with a mapping.
import { type DatasetConfig, parseKafkaSource } from '../../shared/config/index.ts'
import type { NestedField, Schema, StructValue } from '../../shared/iceberg/index.ts'
import { widenFields } from '../../shared/iceberg/metadata/index.ts'
import { compileRowConverter } from '../../shared/iceberg/values/index.ts'
import { FloeError, isFloeError } from '../../shared/index.ts'
import { DEFAULT_MAX_DEPTH, type Decoder, type DecoderOptions } from './decoder.ts'
import { compileWideningCheck, fieldCount, type InferenceRules, inferFields, type WideningCheck } from './inference.ts'
import { compileKafkaColumn, type KafkaColumnReader, type RecordCoordinates } from './kafka-columns.ts'
import { parseJsonObject } from './parse.ts'
import { conversionRefusal, malformed } from './reasons.ts'

/**
 * The most field ids (columns, nested fields, list elements) a table of inferred columns may reach.
 * Records whose new fields would pass it are refused: a producer that writes ids or timestamps as
 * keys would otherwise add a column per record, and every file would carry them all.
 */
export const MAX_INFERRED_FIELDS = 2000

/** Not an error: the record needs the table's schema widened first; `fields` are what it suggests. */
export class SchemaWidening extends Error {
  readonly fields: readonly NestedField[]
  constructor(fields: readonly NestedField[]) {
    super('the record needs new columns')
    this.name = 'SchemaWidening'
    this.fields = fields
  }
}

interface KafkaColumn {
  name: string
  read: KafkaColumnReader
}

export class InferringDecoder implements Decoder {
  readonly dataset: string
  readonly readsCoordinates: boolean
  /** Never routed (the configuration refuses a route without a mapping): every row to table 0. */
  readonly table = 0
  readonly #maxRecordBytes: number
  readonly #maxDepth: number
  readonly #unit: DatasetConfig['timestampUnit']
  readonly #rules: InferenceRules
  /** The columns mapped from `$kafka.*` sources (a partition spec's kafka_timestamp, ...). */
  readonly #kafkaColumns: readonly KafkaColumn[]
  #columns: readonly string[] = []
  /** The schema's fields that records fill: every field but the Kafka columns. */
  #recordFields: readonly NestedField[] = []
  #needsWidening: WideningCheck = () => false
  #convert: (json: unknown) => StructValue = () => ({})
  /** Schemas the catalog refused (the current one widened so), with its words; cleared by useSchema. */
  #refused: { widened: readonly NestedField[]; reason: string }[] = []

  constructor(dataset: DatasetConfig, options: DecoderOptions, schema: Schema) {
    this.dataset = dataset.name
    this.#maxRecordBytes = options.maxRecordBytes
    this.#maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH
    this.#unit = dataset.timestampUnit
    const kafkaColumns: KafkaColumn[] = []
    for (const field of dataset.icebergSchema.fields) {
      const source = parseKafkaSource(dataset.customMapping[field.name] ?? '')
      if (source instanceof Error) throw new FloeError('CONFIG_INVALID', `dataset ${dataset.name}: ${source.message}`)
      if (source)
        kafkaColumns.push({
          name: field.name,
          read: compileKafkaColumn(source, field.type, field.name, field.required),
        })
    }
    this.#kafkaColumns = kafkaColumns
    this.readsCoordinates = kafkaColumns.length > 0
    this.#rules = {
      timestampPaths: new Set(dataset.timestampFields),
      reserved: new Set(kafkaColumns.map((column) => column.name)),
    }
    this.useSchema(schema)
  }

  /** The table's top-level columns of the schema in use, in its order. */
  get columns(): readonly string[] {
    return this.#columns
  }

  /** Decodes by `schema` from now on: the WAL follows it too (the participant makes sure of that first). */
  useSchema(schema: Schema): void {
    const reserved = this.#rules.reserved
    this.#columns = schema.fields.map((field) => field.name)
    this.#recordFields = schema.fields.filter((field) => !reserved.has(field.name))
    this.#refused = []
    this.#needsWidening = compileWideningCheck(this.#recordFields, this.#rules)
    this.#convert = compileRowConverter(
      { type: 'struct', fields: [...this.#recordFields] },
      { timestampEpochUnit: this.#unit, sparse: true },
    )
  }

  refuseWidening(fields: readonly NestedField[], reason: string): void {
    this.#refused.push({ widened: widenFields(this.#recordFields, fields), reason })
  }

  decode(value: Buffer | undefined, record?: RecordCoordinates): StructValue {
    const data = parseJsonObject(value, this.#maxRecordBytes, this.#maxDepth)
    if (this.#needsWidening(data)) {
      const widening = this.#widening(data)
      if (widening) throw widening
    }
    let row: StructValue
    try {
      row = this.#convert(data)
    } catch (error) {
      // the first values made an integer column; no later value can make it a double
      const fraction =
        isFloeError(error, 'CONVERSION_FAILED') &&
        (error.details.expected === 'int' || error.details.expected === 'long') &&
        error.details.reason === 'not an integer'
      const hint = fraction
        ? `; Iceberg cannot widen an integer column to double: rename the column and declare the field's type in the dataset's schema (docs/operations.md, "A column inferred with the wrong type")`
        : ''
      throw conversionRefusal(error, '(row)', hint)
    }
    for (const column of this.#kafkaColumns) row[column.name] = column.read(record as RecordCoordinates)
    if (this.#recordFields.length === 0 && this.#kafkaColumns.length === 0) {
      // a table without a column yet cannot hold a row: only a record with a field makes one
      throw malformed('conversion-failed', 'record has no field with a value, and the table has no column yet', {
        column: '(row)',
      })
    }
    return row
  }

  /**
   * What the record suggests, or its refusal when its new fields would pass MAX_INFERRED_FIELDS;
   * undefined when no widening would take it after all (an int list given [0.5, 3000000000] asks
   * for doubles, which an int cannot become): the converter then refuses it.
   */
  #widening(data: object): Error | undefined {
    const fields = inferFields(data, this.#rules)
    const widened = widenFields(this.#recordFields, fields)
    if (widened === this.#recordFields) return undefined
    // a record that asks for no more than a refused schema would be refused again
    const refused = this.#refused.find((r) => widenFields(r.widened, fields) === r.widened)
    if (refused) {
      return malformed('schema-refused', `the catalog refused the columns this record needs: ${refused.reason}`)
    }
    const count = fieldCount(widened) + this.#kafkaColumns.length
    if (count > MAX_INFERRED_FIELDS) {
      return malformed(
        'too-many-columns',
        `the record's new fields would give the table ${count} fields, more than the ${MAX_INFERRED_FIELDS} a dataset that infers its columns may have; map the fields with customMapping instead`,
        { details: { fields: count, maxFields: MAX_INFERRED_FIELDS } },
      )
    }
    return new SchemaWidening(fields)
  }
}
