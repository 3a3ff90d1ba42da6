// Producing records: idempotent by default (no duplicates from the producer's own retries), and
// transactional on request. Keys, values and headers are bytes; serialization is the caller's.
import { ProduceAcks, Producer } from '@platformatic/kafka'
import { clientOptions, type KafkaConnection } from './connection.ts'

export interface OutgoingRecord {
  topic: string
  partition?: number
  key?: Buffer
  value: Buffer
  headers?: Record<string, string | Buffer>
  timestamp?: bigint
}

export interface ProducerSettings {
  /** Makes every send part of a transaction with this id (fences older producers with the same id). */
  transactionalId?: string
  /** zstd, gzip, snappy, lz4 or none. */
  compression?: 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd'
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
    })
  }

  /** Sends and waits for the brokers' acknowledgement. Returns the offset of each record's batch. */
  async send(records: OutgoingRecord[]): Promise<void> {
    await this.#producer.send({ messages: records.map(toMessage) })
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
    value: record.value,
    headers,
    ...(record.partition === undefined ? {} : { partition: record.partition }),
    ...(record.key === undefined ? {} : { key: record.key }),
    ...(record.timestamp === undefined ? {} : { timestamp: record.timestamp }),
  }
}
