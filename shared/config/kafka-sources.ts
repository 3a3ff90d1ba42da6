// Mapping sources that are not in a record's value but in its Kafka coordinates: a customMapping
// expression `$kafka.topic`, `$kafka.partition`, `$kafka.offset`, `$kafka.timestamp`,
// `$kafka.key`, `$kafka.headers.<name>` or `$kafka.headers` fills its column from the record
// itself. The names and the column types each may go into are checked here, with the config;
// reading them per record is the decoder's (participant/decode).
import type { IcebergType } from '../iceberg/index.ts'

export type KafkaSource =
  | { kind: 'topic' }
  | { kind: 'partition' }
  | { kind: 'offset' }
  | { kind: 'timestamp' }
  | { kind: 'key' }
  | { kind: 'header'; name: string }
  | { kind: 'headers' }

const PREFIX = '$kafka'

const fixed: Record<string, KafkaSource> = {
  topic: { kind: 'topic' },
  partition: { kind: 'partition' },
  offset: { kind: 'offset' },
  timestamp: { kind: 'timestamp' },
  key: { kind: 'key' },
  headers: { kind: 'headers' },
}

/** The column types each source fills (a key or header as text or as its bytes). */
const fits: Record<KafkaSource['kind'], (type: IcebergType) => boolean> = {
  topic: (type) => type === 'string',
  partition: (type) => type === 'int' || type === 'long',
  offset: (type) => type === 'long',
  timestamp: (type) => type === 'timestamptz' || type === 'timestamp' || type === 'long',
  key: (type) => type === 'string' || type === 'binary',
  header: (type) => type === 'string' || type === 'binary',
  headers: (type) =>
    typeof type === 'object' &&
    type.type === 'map' &&
    type.key === 'string' &&
    (type.value === 'string' || type.value === 'binary'),
}

const wanted: Record<KafkaSource['kind'], string> = {
  topic: 'string',
  partition: 'int or long',
  offset: 'long',
  timestamp: 'timestamptz, timestamp or long (milliseconds)',
  key: 'string or binary',
  header: 'string or binary',
  headers: 'map<string, string> or map<string, binary>',
}

/**
 * The Kafka source an expression names; undefined for any other expression (JMESPath); an Error
 * for a `$kafka` expression that names nothing Floe knows.
 */
export function parseKafkaSource(expression: string): KafkaSource | Error | undefined {
  const text = expression.trim()
  if (text !== PREFIX && !text.startsWith(`${PREFIX}.`)) return undefined
  const rest = text.slice(PREFIX.length + 1)
  const source = Object.hasOwn(fixed, rest) ? fixed[rest] : undefined
  if (source) return source
  if (rest.startsWith('headers.') && rest.length > 'headers.'.length) {
    return { kind: 'header', name: rest.slice('headers.'.length) }
  }
  return new Error(
    `${text} names no Kafka source: use $kafka.topic, $kafka.partition, $kafka.offset, $kafka.timestamp, ` +
      '$kafka.key, $kafka.headers.<name> or $kafka.headers',
  )
}

/** Why a column of `type` cannot hold the source; undefined when it can. */
export function kafkaSourceMismatch(source: KafkaSource, type: IcebergType): string | undefined {
  if (fits[source.kind](type)) return undefined
  const found = typeof type === 'string' ? type : type.type
  return `$kafka.${source.kind === 'header' ? `headers.${source.name}` : source.kind} goes into a ${wanted[source.kind]} column, not ${found}`
}
