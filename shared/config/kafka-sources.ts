// Mapping sources that are not in a record's value but in its Kafka coordinates: a customMapping
// expression `$kafka.topic`, `$kafka.partition`, `$kafka.offset`, `$kafka.timestamp`,
// `$kafka.timestampType`, `$kafka.key`, `$kafka.value`, `$kafka.headers.<name>` or
// `$kafka.headers` fills its column from the record itself. The names and the column types each
// may go into are checked here, with the config; reading them per record is the decoder's
// (participant/decode).
import { compile } from '@jmespath-community/jmespath'
import { messageOf } from '../errors.ts'
import type { IcebergType } from '../iceberg/index.ts'

export type KafkaSource =
  | { kind: 'topic' }
  | { kind: 'partition' }
  | { kind: 'offset' }
  | { kind: 'timestamp' }
  | { kind: 'timestampType' }
  | { kind: 'key' }
  | { kind: 'value' }
  | { kind: 'header'; name: string }
  | { kind: 'headers' }

const PREFIX = '$kafka'

const fixed: Record<string, KafkaSource> = {
  topic: { kind: 'topic' },
  partition: { kind: 'partition' },
  offset: { kind: 'offset' },
  timestamp: { kind: 'timestamp' },
  timestampType: { kind: 'timestampType' },
  key: { kind: 'key' },
  value: { kind: 'value' },
  headers: { kind: 'headers' },
}

/** The column types each source fills (a key or header as text or as its bytes). */
const fits: Record<KafkaSource['kind'], (type: IcebergType) => boolean> = {
  topic: (type) => type === 'string',
  partition: (type) => type === 'int' || type === 'long',
  offset: (type) => type === 'long',
  timestamp: (type) => type === 'timestamptz' || type === 'timestamp' || type === 'long',
  timestampType: (type) => type === 'string',
  key: (type) => type === 'string' || type === 'binary',
  value: (type) => type === 'string' || type === 'binary',
  header: (type) => type === 'string' || type === 'binary',
  headers: (type) => headersShape(type) !== undefined,
}

/**
 * How a `$kafka.headers` column holds the headers: a map (one value per name, the last of a
 * repeated one) or a list of key-value structs (every header, in order: lossless).
 */
export type HeadersShape = { kind: 'map' | 'list'; value: 'string' | 'binary' }

export function headersShape(type: IcebergType): HeadersShape | undefined {
  if (typeof type !== 'object') return undefined
  if (type.type === 'map') {
    return type.key === 'string' && (type.value === 'string' || type.value === 'binary')
      ? { kind: 'map', value: type.value }
      : undefined
  }
  if (type.type !== 'list' || typeof type.element !== 'object' || type.element.type !== 'struct') return undefined
  const [key, value, ...rest] = type.element.fields
  if (rest.length > 0 || key?.name !== 'key' || key.type !== 'string' || value?.name !== 'value') return undefined
  return value.type === 'string' || value.type === 'binary' ? { kind: 'list', value: value.type } : undefined
}

const wanted: Record<KafkaSource['kind'], string> = {
  topic: 'string',
  partition: 'int or long',
  offset: 'long',
  timestamp: 'timestamptz, timestamp or long (milliseconds)',
  timestampType: 'string',
  key: 'string or binary',
  value: 'string or binary',
  header: 'string or binary',
  headers: 'map<string, string|binary> or list<struct<key: string, value: string|binary>>',
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
      '$kafka.timestampType, $kafka.key, $kafka.value, $kafka.headers.<name> or $kafka.headers',
  )
}

/** Why a column of `type` cannot hold the source; undefined when it can. */
export function kafkaSourceMismatch(source: KafkaSource, type: IcebergType): string | undefined {
  if (fits[source.kind](type)) return undefined
  const found = typeof type === 'string' ? type : type.type
  return `$kafka.${source.kind === 'header' ? `headers.${source.name}` : source.kind} goes into a ${wanted[source.kind]} column, not ${found}`
}

/**
 * A customMapping column's or a route's expression, checked: the Kafka source it names, undefined
 * for a JMESPath expression, or an Error saying why it is neither.
 */
export function parseSourceExpression(expression: string): KafkaSource | Error | undefined {
  const source = parseKafkaSource(expression)
  if (source !== undefined) return source
  try {
    compile(expression)
  } catch (error) {
    return new Error(`not a JMESPath expression: ${messageOf(error)}`)
  }
  return undefined
}
