// Producing records: idempotent by default (no duplicates from the producer's own retries), and
// transactional on request. Keys, values and headers are bytes; serialization is the caller's.
//
// A failed send is classified here, once, so callers decide by code (shared/errors.ts):
// - KAFKA_REFUSED: asking again cannot help. `details.reason` is `too-large` (a record or a batch
//   over the broker's or topic's limit), `topic-missing`, `not-authorized` or `invalid` (a record
//   the broker refuses as such, a policy, an unsupported compression).
// - KAFKA_UNAVAILABLE: anything else (a broker down, a leader moving, a timeout): may succeed later.
import { findErrorBy, ProduceAcks, Producer } from '@platformatic/kafka'
import { FloeError, messageOf } from '../errors.ts'
import { clientOptions, type KafkaConnection } from './connection.ts'

export interface OutgoingRecord {
  topic: string
  partition?: number
  key?: Buffer
  /** null produces a tombstone. */
  value: Buffer | null
  headers?: Record<string, string | Buffer>
  timestamp?: bigint
}

export interface ProducerSettings {
  /** Makes every send part of a transaction with this id (fences older producers with the same id). */
  transactionalId?: string
  /** zstd, gzip, snappy, lz4 or none. */
  compression?: 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd'
  /**
   * How often the client itself retries a retriable failure before `send` rejects. Unset: without
   * end, as an idempotent producer does by default (a send then waits out any outage).
   */
  retries?: number
  /** Wait between the client's own retries (ms). */
  retryDelayMs?: number
  /** Wait for one request's answer (ms). */
  timeoutMs?: number
}

/** Broker error ids no retry fixes, by the reason Floe reports. */
const refusals: Record<string, 'too-large' | 'topic-missing' | 'not-authorized' | 'invalid'> = {
  MESSAGE_TOO_LARGE: 'too-large',
  RECORD_LIST_TOO_LARGE: 'too-large',
  UNKNOWN_TOPIC_OR_PARTITION: 'topic-missing',
  UNKNOWN_TOPIC_ID: 'topic-missing',
  INVALID_TOPIC_EXCEPTION: 'topic-missing',
  TOPIC_AUTHORIZATION_FAILED: 'not-authorized',
  CLUSTER_AUTHORIZATION_FAILED: 'not-authorized',
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 'not-authorized',
  SASL_AUTHENTICATION_FAILED: 'not-authorized',
  INVALID_RECORD: 'invalid',
  CORRUPT_MESSAGE: 'invalid',
  POLICY_VIOLATION: 'invalid',
  UNSUPPORTED_COMPRESSION_TYPE: 'invalid',
  UNSUPPORTED_FOR_MESSAGE_FORMAT: 'invalid',
  INVALID_TIMESTAMP: 'invalid',
}

/** A failed produce as one FloeError: KAFKA_REFUSED (with details.reason and details.kafkaError) or KAFKA_UNAVAILABLE. */
export function classifyProduceError(error: unknown, topics: readonly string[]): FloeError {
  if (error instanceof FloeError) return error
  for (const [id, reason] of Object.entries(refusals)) {
    if (findErrorBy(error as Error, 'apiId', id)) {
      return new FloeError('KAFKA_REFUSED', `kafka refused the records for ${topics.join(', ')}: ${id}`, {
        cause: error,
        details: { reason, kafkaError: id, topics },
      })
    }
  }
  return new FloeError('KAFKA_UNAVAILABLE', `could not produce to ${topics.join(', ')}: ${messageOf(error)}`, {
    cause: error,
    details: { topics },
  })
}

export class KafkaProducer {
  readonly #producer: Producer<Buffer, Buffer, Buffer, Buffer>

  constructor(connection: KafkaConnection, settings: ProducerSettings = {}) {
    this.#producer = new Producer({
      ...clientOptions(connection, 'producer'),
      idempotent: true,
      acks: ProduceAcks.ALL,
      ...(settings.transactionalId ? { transactionalId: settings.transactionalId } : {}),
      ...(settings.compression && settings.compression !== 'none' ? { compression: settings.compression } : {}),
      ...(settings.retries === undefined ? {} : { retries: settings.retries }),
      ...(settings.retryDelayMs === undefined ? {} : { retryDelay: settings.retryDelayMs }),
      ...(settings.timeoutMs === undefined ? {} : { timeout: settings.timeoutMs }),
    })
  }

  /**
   * Sends and waits for the brokers' acknowledgement. Rejects with KAFKA_REFUSED or
   * KAFKA_UNAVAILABLE (classifyProduceError).
   */
  async send(records: OutgoingRecord[]): Promise<void> {
    try {
      await this.#producer.send({ messages: records.map(toMessage) })
    } catch (error) {
      throw classifyProduceError(error, [...new Set(records.map((r) => r.topic))])
    }
  }

  /** Sends all records in one Kafka transaction: all become visible to read_committed readers, or none. */
  async sendInTransaction(records: OutgoingRecord[]): Promise<void> {
    const transaction = await this.#producer.beginTransaction()
    try {
      await transaction.send({ messages: records.map(toMessage) })
      await transaction.commit()
    } catch (error) {
      await transaction.abort().catch(() => {})
      throw error
    }
  }

  /** Starts a transaction the caller ends, for tests of aborted and open transactions. */
  async begin(): Promise<{
    send(records: OutgoingRecord[]): Promise<void>
    commit(): Promise<void>
    abort(): Promise<void>
  }> {
    const transaction = await this.#producer.beginTransaction()
    return {
      send: async (records) => {
        await transaction.send({ messages: records.map(toMessage) })
      },
      commit: () => transaction.commit(),
      abort: () => transaction.abort(),
    }
  }

  async close(): Promise<void> {
    await this.#producer.close()
  }
}

function toMessage(record: OutgoingRecord) {
  const headers = new Map<Buffer, Buffer>()
  for (const [name, value] of Object.entries(record.headers ?? {})) {
    headers.set(Buffer.from(name), typeof value === 'string' ? Buffer.from(value) : value)
  }
  return {
    topic: record.topic,
    headers,
    // No value at all is a tombstone on the wire.
    ...(record.value === null ? {} : { value: record.value }),
    ...(record.partition === undefined ? {} : { partition: record.partition }),
    ...(record.key === undefined ? {} : { key: record.key }),
    ...(record.timestamp === undefined ? {} : { timestamp: record.timestamp }),
  }
}
