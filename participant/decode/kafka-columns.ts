// The columns a customMapping fills from a record's Kafka coordinates (`$kafka.offset`, ...; the
// sources and the types they fit are shared/config's kafka-sources.ts). Each column's reader is
// compiled once for its type and reads only what it needs of the record, so a dataset that maps
// none pays nothing and one that maps the offset pays one bigint per record.
import { headersShape, type KafkaSource } from '../../shared/config/index.ts'
import type { IcebergType, IcebergValue, StructValue } from '../../shared/iceberg/index.ts'
import { FloeError } from '../../shared/index.ts'
import type { RecordsBatch } from '../../shared/kafka/index.ts'
import { utf8Text } from './text.ts'

/** What the decoder may read of the record it decodes, besides its value. */
export interface RecordCoordinates {
  readonly topic: string
  readonly partition: number
  readonly offset: bigint
  /** The record's timestamp, milliseconds since the epoch (create or log-append time, as the topic keeps it). */
  readonly timestampMs: bigint
  /** Which of the two timestampMs is, by Kafka's names for them. */
  readonly timestampType: TimestampType
  readonly key: Buffer | undefined
  /** Undefined for a tombstone (a record with no value). */
  readonly value: Buffer | undefined
  /** In the order the producer wrote them; a name may repeat. */
  readonly headers: Iterable<readonly [Buffer | null | undefined, Buffer | null | undefined]>
}

export type TimestampType = 'CreateTime' | 'LogAppendTime'

type FetchedRecord = RecordsBatch['records'][number]

/** A header present without a value, where a column holds one value per name: empty, not absent. */
const NO_BYTES = Buffer.alloc(0)

// A batch attribute: the broker stamped the batch with its own time (the topic's
// message.timestamp.type is LogAppendTime). The records then keep the producer's timestamps and
// the batch's maxTimestamp holds the broker's, which is every record's timestamp.
const LOG_APPEND_TIME = 0x08

const stampedByBroker = (batch: RecordsBatch): boolean => (batch.attributes & LOG_APPEND_TIME) !== 0

/** The timestamp (ms) of a batch's first record. */
export function batchTimestampMs(batch: RecordsBatch): bigint {
  return stampedByBroker(batch) ? batch.maxTimestamp : batch.firstTimestamp
}

/**
 * The coordinates of one record of a fetched batch, moved from record to record by the decode
 * loop: one object per batch, and the offset and timestamp made only when a column reads them.
 */
export class BatchCoordinates implements RecordCoordinates {
  readonly topic: string
  readonly partition: number
  #batch: RecordsBatch | undefined
  #record: FetchedRecord | undefined

  constructor(topic: string, partition: number) {
    this.topic = topic
    this.partition = partition
  }

  at(batch: RecordsBatch, record: FetchedRecord): this {
    this.#batch = batch
    this.#record = record
    return this
  }

  get offset(): bigint {
    return (this.#batch as RecordsBatch).firstOffset + BigInt((this.#record as FetchedRecord).offsetDelta)
  }
  /** As Kafka's own clients read it: the broker's time for a batch it stamped. */
  get timestampMs(): bigint {
    const batch = this.#batch as RecordsBatch
    return stampedByBroker(batch)
      ? batch.maxTimestamp
      : batch.firstTimestamp + (this.#record as FetchedRecord).timestampDelta
  }
  get timestampType(): TimestampType {
    return stampedByBroker(this.#batch as RecordsBatch) ? 'LogAppendTime' : 'CreateTime'
  }
  get key(): Buffer | undefined {
    return this.#record?.key ?? undefined
  }
  get value(): Buffer | undefined {
    return this.#record?.value ?? undefined
  }
  get headers(): Iterable<readonly [Buffer | null | undefined, Buffer | null | undefined]> {
    return this.#record?.headers ?? []
  }
}

/** Reads one column's value from the coordinates; throws CONVERSION_FAILED for what the column cannot hold. */
export type KafkaColumnReader = (record: RecordCoordinates) => IcebergValue

/**
 * The reader of a column mapped from `source`. The config has checked that the type fits; bytes
 * that are not UTF-8 for a string column, or nothing for a required one, are the record's fault.
 */
export function compileKafkaColumn(
  source: KafkaSource,
  type: IcebergType,
  column: string,
  required: boolean,
): KafkaColumnReader {
  const read = compileRead(source, type, column)
  if (!required) return read
  return (record) => {
    const value = read(record)
    if (value !== null) return value
    throw refused(column, type, 'nothing', 'the column is required')
  }
}

function compileRead(source: KafkaSource, type: IcebergType, column: string): KafkaColumnReader {
  switch (source.kind) {
    case 'topic':
      return (record) => record.topic
    case 'partition':
      return type === 'long' ? (record) => BigInt(record.partition) : (record) => record.partition
    case 'offset':
      return (record) => record.offset
    case 'timestamp':
      // Iceberg timestamps are microseconds; a long column takes Kafka's milliseconds as they are.
      return type === 'long' ? (record) => record.timestampMs : (record) => record.timestampMs * 1000n
    case 'timestampType':
      return (record) => record.timestampType
    case 'key': {
      const bytes = bytesOf(type, column)
      return (record) => (record.key === undefined ? null : bytes(record.key))
    }
    case 'value': {
      const bytes = bytesOf(type, column)
      return (record) => (record.value === undefined ? null : bytes(record.value))
    }
    case 'header': {
      const bytes = bytesOf(type, column)
      // compared as bytes: no string made per header of every record
      const name = Buffer.from(source.name)
      return (record) => {
        // the last of a repeated header, as a Kafka Connect header converter reads it
        let found: Buffer | null | undefined
        for (const [key, value] of record.headers) if (key?.equals(name)) found = value
        return found === undefined ? null : bytes(found ?? NO_BYTES)
      }
    }
    case 'headers': {
      const shape = headersShape(type)
      if (shape?.kind === 'list') return compileHeaderList(shape.value, column)
      const bytes = bytesOf(shape?.value ?? 'string', `${column}[]`)
      return (record) => {
        const map = new Map<IcebergValue, IcebergValue>()
        for (const [key, found] of record.headers) {
          if (!key) continue
          map.set(headerName(key, column), bytes(found ?? NO_BYTES))
        }
        return map
      }
    }
  }
}

/**
 * Every header in the order it came, each a { key, value } struct: what an archive needs to give
 * the record back as it was (a repeated name, a header with no value). A list, not a map, for that.
 */
function compileHeaderList(valueType: 'string' | 'binary', column: string): KafkaColumnReader {
  const bytes = bytesOf(valueType, `${column}[].value`)
  return (record) => {
    const list: IcebergValue[] = []
    for (const [key, found] of record.headers) {
      // a header with no name cannot be produced again; Kafka's own clients never write one
      if (!key) continue
      list.push({ key: headerName(key, column), value: found == null ? null : bytes(found) } as StructValue)
    }
    return list
  }
}

/** Kafka's protocol writes header names as UTF-8 strings; a name that is not is the record's fault. */
function headerName(key: Buffer, column: string): string {
  const name = utf8Text(key)
  if (name === undefined) throw refused(`${column}.key`, 'string', 'bytes that are not UTF-8')
  return name
}

/**
 * Bytes as the column holds them: a copy for binary (the fetched record is a view into its whole
 * batch, which a buffered row would otherwise keep alive beyond what the memory accounting
 * counts), UTF-8 text for string.
 */
function bytesOf(type: IcebergType, column: string): (bytes: Buffer) => IcebergValue {
  if (type === 'binary') return (bytes) => Buffer.from(bytes)
  return (bytes) => {
    const text = utf8Text(bytes)
    if (text === undefined) throw refused(column, 'string', 'bytes that are not UTF-8')
    return text
  }
}

function refused(column: string, type: IcebergType, found: string, reason?: string): FloeError {
  const expected = typeof type === 'string' ? type : type.type
  const message = `column ${column}: expected ${expected}, got ${found}${reason ? ` (${reason})` : ''}`
  return new FloeError('CONVERSION_FAILED', message, {
    details: { column, expected, found, ...(reason ? { reason } : {}) },
  })
}
