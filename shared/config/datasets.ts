// What a dataset's configuration means for its table: the Iceberg schema (with field ids), the
// partition spec, and the column mapping, checked together so that a mistake is refused before
// anything starts, with the key path in the message.
import { FloeError, messageOf } from '../errors.ts'
import type { IcebergType, NestedField, PartitionField, PartitionSpec, Schema } from '../iceberg/index.ts'
import { canTransform, parseTransform } from '../iceberg/partitioning/index.ts'
import { assignFieldIds, parseColumnType } from './column-types.ts'
import { type KafkaSource, kafkaSourceMismatch, parseKafkaSource, parseSourceExpression } from './kafka-sources.ts'
import { type DatasetRoute, resolveRoute } from './routes.ts'
import type { RawDataset } from './schema.ts'

export type BadRecordsChoice = 'dlq' | 'skip' | 'stop'

export interface DatasetConfig
  extends Omit<
    RawDataset,
    'badRecords' | 'customMapping' | 'schema' | 'partitionSpec' | 'topic' | 'topics' | 'topicPattern' | 'route'
  > {
  /**
   * The topics the dataset reads, in name order, each once (`topic` or `topics`); with a
   * topicPattern, the ones it matched when the worker looked (empty in the configuration).
   */
  topics: readonly string[]
  /** `topicPattern`, anchored: a topic is read when its whole name matches. */
  topicPattern: RegExp | undefined
  /**
   * Read from `topics` or `topicPattern`, not `topic`: each topic's shared WAL then has a folder
   * of its own, as the first topic's would not know a second one is added later.
   */
  severalTopics: boolean
  /** Which table each record goes to; undefined: every record to `table`. */
  route: DatasetRoute | undefined
  /** What a record that cannot be decoded does; resolved from badRecords and dlqTopic. */
  badRecords: BadRecordsChoice
  /** Column -> JMESPath or `$kafka.*` source; in raw mode, the archive's fixed columns (RAW_ARCHIVE). */
  customMapping: Record<string, string>
  /**
   * The columns come from the records (no customMapping): customMapping and schema then hold only
   * the columns known at start (schema's, top-level timestampFields, `$kafka` partition sources).
   */
  inferColumns: boolean
  /** Column -> type, as the operator writes it. */
  schema: Record<string, string>
  partitionSpec: string[]
  namespace: string[]
  tableName: string
  /** The schema Floe creates the table with (field ids from 1). */
  icebergSchema: Schema
  /** The partition spec Floe creates the table with (partition field ids from 1000). */
  icebergSpec: PartitionSpec
}

// `day(ts)`, `bucket[16](user_id)` or `bucket(16, user_id)` (the second form needs no quotes in
// a YAML flow list), `truncate[4](name)` or `truncate(4, name)`, or a bare column for identity.
const transformPattern =
  /^\s*(?:(identity|year|month|day|hour|void|bucket\[\s*(\d+)\s*\]|truncate\[\s*(\d+)\s*\])\s*\(\s*([^()\s,]+)\s*\)|(bucket|truncate)\s*\(\s*(\d+)\s*,\s*([^()\s,]+)\s*\)|([^()[\]\s,]+))\s*$/

function parsePartitionEntry(match: RegExpExecArray): { transform: string; column: string; width: number | undefined } {
  if (match[5]) return { transform: `${match[5]}[${match[6]}]`, column: match[7] ?? '', width: Number(match[6]) }
  if (match[1]) {
    const width = match[2] ?? match[3]
    const name = match[1].replace(/\[.*$/, '')
    return {
      transform: width ? `${name}[${Number(width)}]` : name,
      column: match[4] ?? '',
      width: width ? Number(width) : undefined,
    }
  }
  return { transform: 'identity', column: match[8] ?? '', width: undefined }
}

const suffixes: Record<string, string> = {
  year: '_year',
  month: '_month',
  day: '_day',
  hour: '_hour',
  bucket: '_bucket',
  truncate: '_trunc',
  void: '_null',
  identity: '',
}

function invalid(path: string, problem: string): never {
  throw new FloeError('CONFIG_INVALID', `${path}: ${problem}`)
}

function checkTransform(path: string, transform: string, column: string, type: IcebergType): void {
  if (typeof type !== 'string') invalid(path, `cannot partition by ${transform} of nested column ${column}`)
  if (!canTransform(parseTransform(transform), type)) {
    invalid(path, `${transform} does not apply to column ${column} of type ${type}`)
  }
}

/**
 * Nothing is dropped by default without a word: without a dead-letter topic the operator says
 * whether bad records are skipped or stop the worker.
 */
function badRecordsOf(raw: RawDataset, at: string): BadRecordsChoice {
  const choice = raw.badRecords
  if (choice === undefined) {
    if (raw.dlqTopic) return 'dlq'
    invalid(
      `${at}.badRecords`,
      'the dataset has no dlqTopic: set badRecords to skip (drop and log bad records) or stop (stop the worker), or name a dlqTopic',
    )
  }
  if (choice === 'dlq' && !raw.dlqTopic) invalid(`${at}.dlqTopic`, 'badRecords: dlq needs a dead-letter topic')
  if (choice === 'skip' && raw.dlqTopic) {
    invalid(`${at}.badRecords`, 'skip drops bad records, but dlqTopic is set: use dlq or stop, or remove dlqTopic')
  }
  return choice
}

/**
 * A raw archive's columns: every part of a record a producer set or the broker stamped, so that
 * the record can be produced again as it was (headers as a list: order and repeats kept).
 */
const RAW_ARCHIVE: Readonly<Record<string, { source: string; type: string }>> = {
  topic: { source: '$kafka.topic', type: 'string not null' },
  partition: { source: '$kafka.partition', type: 'int not null' },
  offset: { source: '$kafka.offset', type: 'long not null' },
  timestamp: { source: '$kafka.timestamp', type: 'timestamptz not null' },
  timestamp_type: { source: '$kafka.timestampType', type: 'string not null' },
  key: { source: '$kafka.key', type: 'binary' },
  value: { source: '$kafka.value', type: 'binary' },
  headers: { source: '$kafka.headers', type: 'list<struct<key: string, value: binary>> not null' },
}

const RAW_ARCHIVE_SPEC = ['day(timestamp)']

type Layout = Pick<DatasetConfig, 'customMapping' | 'schema' | 'partitionSpec'>

/** The columns, their sources and the partition spec the dataset's mode gives it. */
function layoutOf(raw: RawDataset, at: string): Layout {
  if (raw.mode === 'raw') {
    if (raw.timestampFields.length > 0) {
      invalid(`${at}.timestampFields`, 'a raw dataset stores each value as bytes: remove timestampFields')
    }
    for (const key of ['customMapping', 'schema'] as const) {
      if (raw[key] !== undefined) {
        invalid(
          `${at}.${key}`,
          `a raw dataset's columns are fixed (${Object.keys(RAW_ARCHIVE).join(', ')}): remove ${key}`,
        )
      }
    }
    const columns = Object.entries(RAW_ARCHIVE)
    return {
      customMapping: Object.fromEntries(columns.map(([name, column]) => [name, column.source])),
      schema: Object.fromEntries(columns.map(([name, column]) => [name, column.type])),
      partitionSpec: raw.partitionSpec ?? RAW_ARCHIVE_SPEC,
    }
  }
  if (raw.customMapping === undefined) return inferredLayout(raw, at)
  if (raw.schema === undefined) {
    invalid(`${at}.schema`, 'name the type of each mapped column (or leave out customMapping, to infer the columns)')
  }
  if (raw.timestampFields.length > 0) {
    invalid(
      `${at}.timestampFields`,
      'only a dataset that infers its columns reads it: give a mapped column the type timestamptz',
    )
  }
  return { customMapping: raw.customMapping, schema: raw.schema, partitionSpec: raw.partitionSpec ?? [] }
}

/**
 * A dataset that infers its columns starts with the columns its schema declares (a type inference
 * could not guess from a first value: `amount: double` for a field that may come as 0) and its
 * top-level timestampFields, so a partition spec can use them; every other column is added as
 * records bring it. Each column reads the record's field of its name. A field name with a dot would
 * read as a path, in timestampFields and in Iceberg's own column references alike.
 */
function inferredLayout(raw: RawDataset, at: string): Layout {
  const schema: Record<string, string> = { ...raw.schema }
  for (const [i, path] of raw.timestampFields.entries()) {
    const names = path.split('.')
    if (names.some((name) => name === '')) invalid(`${at}.timestampFields[${i}]`, `'${path}' has an empty name`)
    if (names.length > 1) continue
    if (path in schema) invalid(`${at}.timestampFields[${i}]`, `${path} is declared in schema too: keep one`)
    schema[path] = 'timestamptz'
  }
  const customMapping = Object.fromEntries(Object.keys(schema).map((name) => [name, JSON.stringify(name)]))
  return { customMapping, schema, partitionSpec: raw.partitionSpec ?? [] }
}

// The column a partition transform of a `$kafka` source adds when no column is mapped from it:
// named after the source, of the type a partition value of it is most useful in.
const kafkaPartitionColumns: Partial<Record<KafkaSource['kind'], { name: string; type: string }>> = {
  topic: { name: 'kafka_topic', type: 'string' },
  partition: { name: 'kafka_partition', type: 'int' },
  offset: { name: 'kafka_offset', type: 'long' },
  timestamp: { name: 'kafka_timestamp', type: 'timestamptz' },
  timestampType: { name: 'kafka_timestamp_type', type: 'string' },
  key: { name: 'kafka_key', type: 'string' },
  header: { name: 'kafka_header', type: 'string' },
}

/**
 * `day($kafka.timestamp)` in partitionSpec partitions by the column mapped from that source, and
 * adds one (kafka_timestamp, timestamptz) when none is: Iceberg partitions only by a table column.
 */
function partitionByKafkaSources(layout: Layout, at: string): Layout {
  const customMapping = { ...layout.customMapping }
  const schema = { ...layout.schema }
  const mappedSources = Object.entries(customMapping).map(([name, expression]) => ({
    name,
    source: parseKafkaSource(expression),
  }))
  const partitionSpec = layout.partitionSpec.map((entry, i) => {
    const match = transformPattern.exec(entry)
    const column = match ? parsePartitionEntry(match).column : ''
    const source = parseKafkaSource(column)
    if (source === undefined) return entry
    const path = `${at}.partitionSpec[${i}]`
    if (source instanceof Error) invalid(path, source.message)
    const mapped = mappedSources.find((column) => sameSource(column.source, source))
    if (mapped !== undefined) return entry.replace(column, mapped.name)
    const implicit = kafkaPartitionColumns[source.kind]
    if (!implicit)
      invalid(path, `cannot partition by ${column}: map it to a column and partition by a transform of that`)
    const name = source.kind === 'header' ? `${implicit.name}_${source.name.replace(/\W/g, '_')}` : implicit.name
    if (name in schema) {
      invalid(
        path,
        `${column} needs a column ${name}, which the schema has for something else: map a column from ${column} and partition by it`,
      )
    }
    customMapping[name] = column
    schema[name] = implicit.type
    return entry.replace(column, name)
  })
  return { customMapping, schema, partitionSpec }
}

function sameSource(a: KafkaSource | Error | undefined, b: KafkaSource): boolean {
  if (a === undefined || a instanceof Error || a.kind !== b.kind) return false
  return a.kind !== 'header' || (b.kind === 'header' && a.name === b.name)
}

export function resolveDataset(input: RawDataset, index: number): DatasetConfig {
  const at = `datasets[${index}]`
  const raw = { ...input, ...partitionByKafkaSources(layoutOf(input, at), at) }
  const inferColumns = input.mode === 'mapped' && input.customMapping === undefined
  const columns = Object.keys(raw.schema)
  if (columns.length === 0 && !inferColumns) invalid(`${at}.schema`, 'name at least one column')
  for (const column of Object.keys(raw.customMapping)) {
    if (!(column in raw.schema)) invalid(`${at}.customMapping.${column}`, 'no such column in schema')
  }
  // the columns mapped from the record's Kafka coordinates; their types are checked once known
  const kafkaSources = new Map<string, KafkaSource>()
  for (const column of columns) {
    if (!(column in raw.customMapping)) invalid(`${at}.schema.${column}`, 'no JMESPath expression in customMapping')
    const expression = raw.customMapping[column] ?? ''
    const source = parseSourceExpression(expression)
    if (source instanceof Error) invalid(`${at}.customMapping.${column}`, source.message)
    if (source) kafkaSources.set(column, source)
  }

  let lastId = 0
  const next = () => ++lastId
  const topFields: NestedField[] = columns.map((name) => {
    const { type, required } = parseColumnType(raw.schema[name] ?? '', `${at}.schema.${name}`)
    return { id: next(), name, required, type }
  })
  const fields = topFields.map((f) => ({ ...f, type: assignFieldIds(f.type, next) }))
  for (const field of fields) {
    const source = kafkaSources.get(field.name)
    const mismatch = source && kafkaSourceMismatch(source, field.type)
    if (mismatch) invalid(`${at}.customMapping.${field.name}`, mismatch)
  }
  const icebergSchema: Schema = { type: 'struct', 'schema-id': 0, fields }

  const partitionFields: PartitionField[] = raw.partitionSpec.map((entry, i) => {
    const path = `${at}.partitionSpec[${i}]`
    const match = transformPattern.exec(entry)
    if (!match) invalid(path, `expected transform(column) or a column, got '${entry}'`)
    const { transform, column, width } = parsePartitionEntry(match)
    const source = fields.find((f) => f.name === column)
    if (!source) {
      invalid(
        path,
        inferColumns
          ? `no column ${column} at start: a dataset that infers its columns partitions by its top-level timestampFields or a $kafka source`
          : `no such column: ${column}`,
      )
    }
    if (width !== undefined && width < 1) invalid(path, 'width must be at least 1')
    checkTransform(path, transform, column, source.type)
    const name = `${column}${suffixes[transform.replace(/\[.*$/, '')] ?? ''}`
    return { 'source-id': source.id, 'field-id': 1000 + i, name, transform }
  })
  const names = new Set<string>()
  for (const [i, field] of partitionFields.entries()) {
    if (names.has(field.name)) invalid(`${at}.partitionSpec[${i}]`, `partition field ${field.name} appears twice`)
    names.add(field.name)
  }

  for (const [i, column] of raw.bloomFilterColumns.entries()) {
    const field = fields.find((f) => f.name === column)
    if (!field) invalid(`${at}.bloomFilterColumns[${i}]`, `no such column: ${column}`)
    if (typeof field.type !== 'string') invalid(`${at}.bloomFilterColumns[${i}]`, `${column} is nested`)
  }

  const parts = raw.table.split('.')
  const { topic: _topic, topics: _topics, topicPattern: _pattern, ...rest } = raw
  return {
    ...rest,
    ...topicsOf(input, at),
    badRecords: badRecordsOf(raw, at),
    route: resolveRoute(input, at),
    inferColumns,
    namespace: parts.slice(0, -1),
    tableName: parts.at(-1) ?? raw.table,
    icebergSchema,
    icebergSpec: { 'spec-id': 0, fields: partitionFields },
  }
}

function topicsOf(input: RawDataset, at: string): Pick<DatasetConfig, 'topics' | 'severalTopics' | 'topicPattern'> {
  const given = (['topic', 'topics', 'topicPattern'] as const).filter((key) => input[key] !== undefined)
  if (given.length > 1)
    invalid(`${at}.${given[1]}`, `give one of topic, topics and topicPattern, not ${given.join(' and ')}`)
  if (input.topicPattern !== undefined) {
    try {
      return { topics: [], severalTopics: true, topicPattern: new RegExp(`^(?:${input.topicPattern})$`) }
    } catch (error) {
      invalid(`${at}.topicPattern`, `not a regular expression: ${messageOf(error)}`)
    }
  }
  if (input.topics !== undefined) {
    const seen = new Set<string>()
    for (const [i, topic] of input.topics.entries()) {
      if (seen.has(topic)) invalid(`${at}.topics[${i}]`, `${topic} is named twice`)
      seen.add(topic)
    }
    return { topics: [...seen].sort(), severalTopics: true, topicPattern: undefined }
  }
  if (input.topic === undefined) invalid(`${at}.topic`, 'name the topic to read (or topics, or a topicPattern)')
  return { topics: [input.topic], severalTopics: false, topicPattern: undefined }
}

/**
 * The topics a dataset reads among `names` (the cluster's): its list, or, with a topicPattern, the
 * names it matches in name order, leaving out Kafka's internal topics and `excluded` (the control
 * topic and the dead-letter topics, which a broad pattern would otherwise read back).
 */
export function topicsMatching(
  dataset: DatasetConfig,
  names: Iterable<string>,
  excluded: ReadonlySet<string>,
): string[] {
  const pattern = dataset.topicPattern
  if (!pattern) return [...dataset.topics]
  return [...new Set(names)]
    .filter((name) => !name.startsWith('__') && !excluded.has(name) && pattern.test(name))
    .sort()
}

/** A dataset as the participant of one of its topics sees it: the topic it reads. */
export interface TopicDataset extends DatasetConfig {
  topic: string
}

/** The dataset once per topic, in name order. */
export function topicDatasets(dataset: DatasetConfig): TopicDataset[] {
  return dataset.topics.map((topic) => ({ ...dataset, topic }))
}
