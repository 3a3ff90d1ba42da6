// Consuming a topic as a member of a consumer group, in batches. This is the small seam the
// participant builds on; offsets are committed explicitly, never automatically, because Floe's
// progress lives in the Iceberg table and the group offset only mirrors it for lag monitoring.
import { Consumer, type Message, type MessagesStream } from '@platformatic/kafka'
import { clientOptions, type KafkaConnection } from './connection.ts'

export interface IncomingRecord {
  topic: string
  partition: number
  offset: bigint
  timestamp: bigint
  key: Buffer | undefined
  value: Buffer | undefined
  headers: Map<Buffer, Buffer>
}

export interface ConsumerSettings {
  groupId: string
  topics: string[]
  /** Where a partition without a committed offset starts. */
  startFrom?: 'earliest' | 'latest'
  /** Only records of committed transactions (read_committed). Default true. */
  readCommitted?: boolean
  sessionTimeoutMs?: number
  maxWaitMs?: number
}

// Kafka's isolation levels in the Fetch request.
const READ_UNCOMMITTED = 0
const READ_COMMITTED = 1

export class KafkaConsumer {
  readonly #consumer: Consumer<Buffer, Buffer, Buffer, Buffer>
  readonly #settings: ConsumerSettings
  #stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> | undefined
  #failed: Error | undefined

  constructor(connection: KafkaConnection, settings: ConsumerSettings) {
    this.#settings = settings
    this.#consumer = new Consumer({
      ...clientOptions(connection, 'consumer'),
      groupId: settings.groupId,
      sessionTimeout: settings.sessionTimeoutMs ?? 30_000,
      heartbeatInterval: Math.min(3000, Math.floor((settings.sessionTimeoutMs ?? 30_000) / 3)),
      maxWaitTime: settings.maxWaitMs ?? 500,
    })
    // A failed rejoin of the group (the broker restarted) is emitted as 'error', which with no
    // listener ends the process: it ends the record stream instead, and the reader's owner
    // decides (the ControlChannel starts a new consumer).
    this.#consumer.on('error', (error: Error) => {
      this.#failed = error
      this.#stream?.destroy(error)
    })
  }

  /** Starts fetching; yields each record as it arrives. */
  async *records(): AsyncGenerator<IncomingRecord> {
    this.#stream = await this.#consumer.consume({
      topics: this.#settings.topics,
      autocommit: false,
      mode: 'committed',
      fallbackMode: this.#settings.startFrom ?? 'earliest',
      isolationLevel: this.#settings.readCommitted === false ? READ_UNCOMMITTED : READ_COMMITTED,
    })
    if (this.#failed) this.#stream.destroy(this.#failed)
    for await (const message of this.#stream) yield toRecord(message as Message<Buffer, Buffer, Buffer, Buffer>)
  }

  /** Commits the group's offsets: partition -> next offset to read. */
  async commit(topic: string, offsets: Map<number, bigint>): Promise<void> {
    await this.#consumer.commit({
      offsets: [...offsets].map(([partition, offset]) => ({ topic, partition, offset, leaderEpoch: -1 })),
    })
  }

  async close(): Promise<void> {
    await this.#stream?.close()
    await this.#consumer.close(true)
  }
}

function toRecord(message: Message<Buffer, Buffer, Buffer, Buffer>): IncomingRecord {
  return {
    topic: message.topic,
    partition: message.partition,
    offset: message.offset,
    timestamp: message.timestamp,
    key: message.key ?? undefined,
    value: message.value ?? undefined,
    headers: message.headers,
  }
}
