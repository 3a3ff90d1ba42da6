// The one ControlChannel of a worker (../shared/STYLE.md item 3): it owns the control topic's
// producer and consumer, decodes what arrives and hands each message to the registered
// receivers. The coordinator and the participant only implement `receive`.
//
// The control topic has one partition, so every worker sees every message in one order. Each
// worker reads it with a consumer group of its own that never commits, from the end: a worker
// acts only on messages sent after it came online (as Hudi's and Iceberg's sinks do).
import { randomUUID } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import { FloeError, messageOf } from '../shared/index.ts'
import {
  type IncomingRecord,
  KafkaAdmin,
  type KafkaConnection,
  KafkaConsumer,
  KafkaProducer,
} from '../shared/kafka/index.ts'
import { type ControlMessage, decodeEnvelope, encodeEnvelope } from './messages.ts'

export interface ControlReceiver {
  /**
   * Called once per message, in topic order; the next message waits for the returned promise.
   * Every message comes here, of every dataset and group and the worker's own: choosing (by
   * dataset, group, commit id) is the receiver's. A throw is logged and does not stop the channel.
   */
  receive(message: ControlMessage): void | Promise<void>
}

/** The part of a pino logger the channel uses. */
export interface ControlLogger {
  info(details: Record<string, unknown>, message: string): void
  warn(details: Record<string, unknown>, message: string): void
  error(details: Record<string, unknown>, message: string): void
}

export interface ControlChannelOptions {
  connection: KafkaConnection
  /** The control topic; created with one partition when missing. */
  topic: string
  /** The channel's consumer group is `<groupPrefix>-control-<workerId>`. */
  groupPrefix: string
  /** Unique per worker process: two channels with one worker id would split the topic between them. */
  workerId: string
  logger: ControlLogger
  /** Configs for the topic when this channel creates it (retention.ms, ...). */
  topicConfigs?: Record<string, string>
  /** How long start() may take to join and position the consumer. Default 60 s. */
  startTimeoutMs?: number
  /** The control consumer's session timeout. Default 10 s, so a restarted worker rejoins soon. */
  sessionTimeoutMs?: number
}

// A probe is a record only its own channel acts on (others skip it by this header): when a
// channel reads back its own probe, its consumer is positioned, so everything sent afterwards
// reaches it. shared/kafka's consumer does not say when its 'latest' position is fixed.
const PROBE_HEADER = 'floe-control-probe'
const PROBE_INTERVALS_MS = [250, 500, 1000, 2000]
const CONTROL_PARTITION = 0

export class ControlChannel {
  readonly topic: string
  readonly groupId: string
  readonly #options: ControlChannelOptions
  readonly #logger: ControlLogger
  readonly #receivers = new Set<ControlReceiver>()
  readonly #probes = new Set<string>()
  #producer: KafkaProducer | undefined
  #consumer: KafkaConsumer | undefined
  #loop: Promise<unknown> | undefined
  readonly #positioned = deferred()
  #started = false
  #closing = false

  constructor(options: ControlChannelOptions) {
    this.#options = options
    this.#logger = options.logger
    this.topic = options.topic
    this.groupId = `${options.groupPrefix}-control-${options.workerId}`
  }

  /** Adds a receiver of every message from now on; returns its removal. */
  register(receiver: ControlReceiver): () => void {
    this.#receivers.add(receiver)
    return () => {
      this.#receivers.delete(receiver)
    }
  }

  /**
   * Ensures the topic, joins the channel's group and positions it at the end of the topic.
   * Resolves once every message sent from then on (by anyone) will be received.
   */
  async start(): Promise<void> {
    if (this.#consumer || this.#closing) throw new FloeError('INVARIANT_BROKEN', 'ControlChannel started twice')
    await this.#ensureTopic()
    this.#producer = new KafkaProducer(this.#options.connection)
    this.#consumer = this.#newConsumer()
    this.#loop = this.#consume(this.#consumer)
    let probes: number
    try {
      probes = await this.#probeUntilPositioned()
    } catch (error) {
      await this.close()
      throw error
    }
    this.#started = true
    this.#logger.info({ topic: this.topic, groupId: this.groupId, probes }, 'control channel started')
  }

  /** Sends one message; resolves when the broker has it. */
  async send(message: ControlMessage): Promise<void> {
    const bytes = encodeEnvelope(message)
    await this.#send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), Buffer.from(message.dataset))
  }

  /** Resolves when the channel stopped: with undefined after close(), with the error if reading failed. */
  async whenStopped(): Promise<unknown> {
    return this.#loop
  }

  async close(): Promise<void> {
    if (this.#closing) {
      await this.#loop
      return
    }
    this.#closing = true
    this.#positioned.reject(new FloeError('KAFKA_UNAVAILABLE', 'control channel closed while starting'))
    await this.#consumer?.close().catch((error: unknown) => {
      this.#logger.warn({ topic: this.topic, error: messageOf(error) }, 'control consumer did not close cleanly')
    })
    await this.#loop
    await this.#producer?.close().catch((error: unknown) => {
      this.#logger.warn({ topic: this.topic, error: messageOf(error) }, 'control producer did not close cleanly')
    })
  }

  async #ensureTopic(): Promise<void> {
    const admin = new KafkaAdmin(this.#options.connection)
    try {
      const { created, partitions } = await admin.ensureTopic(this.topic, 1, this.#options.topicConfigs ?? {})
      if (created) this.#logger.info({ topic: this.topic }, 'created the control topic')
      if (partitions > 1) {
        this.#logger.warn(
          { topic: this.topic, partitions },
          'the control topic has more than one partition; Floe uses partition 0 only',
        )
      }
    } catch (error) {
      if (error instanceof FloeError) throw error
      throw new FloeError('KAFKA_UNAVAILABLE', `could not ensure the control topic ${this.topic}`, { cause: error })
    } finally {
      await admin.close().catch(() => {})
    }
  }

  async #send(value: Buffer, key: Buffer, headers?: Record<string, string>): Promise<void> {
    if (!this.#producer || this.#closing) {
      throw new FloeError('INVARIANT_BROKEN', 'ControlChannel.send outside start() .. close()')
    }
    try {
      await this.#producer.send([
        { topic: this.topic, partition: CONTROL_PARTITION, key, value, ...(headers ? { headers } : {}) },
      ])
    } catch (error) {
      throw new FloeError('KAFKA_UNAVAILABLE', `could not send to the control topic ${this.topic}`, { cause: error })
    }
  }

  // Sends probes until one comes back. A probe sent before the consumer fixed its position may be
  // behind it and never arrive, so another follows after a growing interval.
  async #probeUntilPositioned(): Promise<number> {
    const deadline = Date.now() + (this.#options.startTimeoutMs ?? 60_000)
    for (let attempt = 0; ; attempt++) {
      const id = randomUUID()
      this.#probes.add(id)
      await this.#send(Buffer.alloc(0), Buffer.from(PROBE_HEADER), { [PROBE_HEADER]: id })
      const waitMs = Math.min(PROBE_INTERVALS_MS[attempt] ?? PROBE_INTERVALS_MS.at(-1)!, deadline - Date.now())
      const timer = new AbortController()
      const arrived = await Promise.race([
        this.#positioned.promise.then(() => true),
        delay(Math.max(waitMs, 0), false, { signal: timer.signal }),
      ]).finally(() => timer.abort())
      if (arrived) return attempt + 1
      if (Date.now() >= deadline) {
        throw new FloeError('KAFKA_UNAVAILABLE', `control channel could not join ${this.topic} in time`, {
          details: { topic: this.topic, groupId: this.groupId, probes: attempt + 1 },
        })
      }
    }
  }

  #newConsumer(): KafkaConsumer {
    return new KafkaConsumer(this.#options.connection, {
      groupId: this.groupId,
      topics: [this.topic],
      startFrom: 'latest',
      sessionTimeoutMs: this.#options.sessionTimeoutMs ?? 10_000,
    })
  }

  // Reads until close(). Once started, a reader that fails (the broker restarted or was
  // unreachable longer than the client retries) is replaced by a new one reading from the end, for
  // as long as it takes: a worker whose channel stopped for good would ingest but never answer a
  // round again. Messages sent meanwhile are missed, which the protocol absorbs (a round goes on
  // without the partitions that did not answer; the next START-COMMIT resyncs). Before start()
  // resolves, a failure fails start() instead.
  async #consume(first: KafkaConsumer): Promise<unknown> {
    let consumer = first
    for (let failures = 0; ; failures++) {
      try {
        for await (const record of consumer.records()) {
          failures = 0
          if (record.partition !== CONTROL_PARTITION) continue
          const probe = probeId(record)
          if (probe !== undefined) {
            if (this.#probes.delete(probe)) this.#positioned.resolve()
            continue
          }
          await this.#deliver(record)
        }
        return undefined
      } catch (error) {
        if (this.#closing) return undefined
        if (!this.#started) {
          this.#logger.error({ topic: this.topic, error: messageOf(error) }, 'control channel stopped reading')
          this.#positioned.reject(error)
          return error
        }
        const waitMs = Math.min(500 * 2 ** failures, 5000)
        this.#logger.warn(
          { topic: this.topic, error: messageOf(error), failures: failures + 1, waitMs },
          'control channel lost its reader; reading again from the end',
        )
        await consumer.close().catch(() => {})
        await delay(waitMs)
        if (this.#closing) return undefined
        consumer = this.#newConsumer()
        this.#consumer = consumer
      }
    }
  }

  async #deliver(record: IncomingRecord): Promise<void> {
    let message: ControlMessage
    try {
      message = decodeEnvelope(record.value ?? new Uint8Array(0))
    } catch (error) {
      this.#logger.warn(
        {
          topic: record.topic,
          offset: record.offset.toString(),
          code: error instanceof FloeError ? error.code : undefined,
          reason: error instanceof FloeError ? error.details['reason'] : undefined,
          error: messageOf(error),
        },
        'dropped a control message that cannot be decoded',
      )
      return
    }
    for (const receiver of this.#receivers) {
      try {
        await receiver.receive(message)
      } catch (error) {
        // One receiver's failure must not stop the others or the channel; the receiver owns its
        // recovery (a round times out; a participant resyncs at the next START-COMMIT).
        this.#logger.error(
          {
            topic: record.topic,
            offset: record.offset.toString(),
            body: message.body.type,
            commitId: message.commitId,
            error: messageOf(error),
          },
          'a control receiver failed',
        )
      }
    }
  }
}

// Promise.withResolvers is ES2024, past the ES2023 lib this project compiles against.
function deferred(): { promise: Promise<void>; resolve(): void; reject(error: unknown): void } {
  let resolve!: () => void
  let reject!: (error: unknown) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  // Nobody may be waiting when the channel fails or closes.
  promise.catch(() => {})
  return { promise, resolve, reject }
}

function probeId(record: IncomingRecord): string | undefined {
  for (const [name, value] of record.headers) if (name.toString() === PROBE_HEADER) return value.toString()
  return undefined
}
