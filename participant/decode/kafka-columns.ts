// The columns a customMapping fills from a record's Kafka coordinates (`$kafka.offset`, ...; the
// sources and the types they fit are shared/config's kafka-sources.ts). Each column's reader is
// compiled once for its type and reads only what it needs of the record, so a dataset that maps
// none pays nothing and one that maps the offset pays one bigint per record.
import type { KafkaSource } from '../../shared/config/index.ts'
import type { IcebergType, IcebergValue } from '../../shared/iceberg/index.ts'
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
  readonly key: Buffer | undefined
  /** In the order the producer wrote them; a name may repeat. */
  readonly headers: Iterable<readonly [Buffer | null | undefined, Buffer | null | undefined]>
}

type FetchedRecord = RecordsBatch['records'][number]

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
  get timestampMs(): bigint {
    return (this.#batch as RecordsBatch).firstTimestamp + (this.#record as FetchedRecord).timestampDelta
  }
  get key(): Buffer | undefined {
    return this.#record?.key ?? undefined
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
    case 'key': {
      const bytes = bytesOf(type, column)
      return (record) => (record.key === undefined ? null : bytes(record.key))
    }
    case 'header': {
      const bytes = bytesOf(type, column)
      // compared as bytes: no string made per header of every record
      const name = Buffer.from(source.name)
      return (record) => {
        // the last of a repeated header, as a Kafka Connect header converter reads it
        let found: Buffer | null | undefined
        for (const [key, value] of record.headers) if (key?.equals(name)) found = value
        return found === undefined ? null : bytes(found ?? Buffer.alloc(0))
      }
    }
    case 'headers': {
      const value = typeof type === 'object' && type.type === 'map' ? type.value : 'string'
      const bytes = bytesOf(value, `${column}[]`)
      return (record) => {
        const map = new Map<IcebergValue, IcebergValue>()
        for (const [key, found] of record.headers) {
          if (!key) continue
          const name = utf8Text(key)
          if (name === undefined) throw refused(`${column}.key`, 'string', 'bytes that are not UTF-8')
          map.set(name, bytes(found ?? Buffer.alloc(0)))
        }
        return map
      }
    }
  }
}

/** Bytes as the column holds them: as they are for binary, as UTF-8 text for string. */
function bytesOf(type: IcebergType, column: string): (bytes: Buffer) => IcebergValue {
  if (type === 'binary') return (bytes) => bytes
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
