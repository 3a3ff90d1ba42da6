// The one ControlChannel of a worker: it owns the control topic's
// producer and consumer, decodes what arrives and hands each message to the registered
// receivers. The coordinator and the participant only implement `receive`.
//
// The control topic has one partition, so every worker sees every message in one order. Each
// worker reads it with a consumer group of its own that never commits, from the end: a worker
// acts only on messages sent after it came online (as Hudi's and Iceberg's sinks do).
import { randomUUID } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import { type Deferred, deferred, FloeError, messageOf } from '../shared/index.ts'
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
  /**
   * A worker's channel: it keeps sending probes to itself and says whether it still hears the topic
   * (`hearing`), and a reader that stays deaf is replaced by a new consumer. With or without it, a
   * reader that fails once the channel started is replaced (`floe observe` goes on through a broker
   * restart too).
   */
  liveness?: LivenessOptions
}

export interface LivenessOptions {
  /** How often a probe goes out. Default 5 s. */
  probeIntervalMs?: number
  /** Nothing heard (not even a probe) for this long: the channel is deaf. Default 20 s. */
  deafAfterMs?: number
  /** Deaf for this long: the consumer is replaced. Default 60 s. */
  reconnectAfterMs?: number
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
  readonly #positioned = unwatched()
  #started = false
  #closing = false
  readonly #closed = new AbortController()
  #lastHeardAt = Date.now()
  #deaf = false
  /** Set while a deaf reader is being replaced. */
  #recycling = false
  /** Ends the current reader's wait at once: the deaf reader is left behind, whatever it is stuck in. */
  #abandonReader: (() => void) | undefined
  #heartbeat: NodeJS.Timeout | undefined

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
    this.#lastHeardAt = Date.now()
    if (this.#options.liveness) this.#startHeartbeat(this.#options.liveness)
  }

  /**
   * Whether this channel heard the topic lately (its own probes come back): false while the broker
   * is out of reach or the reader is being replaced. Always true without liveness options (without
   * them a failed reader is still replaced, but nothing watches for a reader that hears nothing).
   */
  get hearing(): boolean {
    return !this.#deaf
  }

  /** Sends one message; resolves when the broker has it. */
  async send(message: ControlMessage): Promise<void> {
    const bytes = encodeEnvelope(message)
    await this.#send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), Buffer.from(message.dataset))
  }

  /** Resolves when the channel stopped: with undefined after close(), with the error if reading failed before start() resolved. */
  async whenStopped(): Promise<unknown> {
    return this.#loop
  }

  async close(): Promise<void> {
    if (this.#closing) {
      await this.#loop
      return
    }
    this.#closing = true
    clearInterval(this.#heartbeat)
    this.#closed.abort()
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

  // Reads until closed. Once started, a reader that fails, ends (the broker restarted, the client
  // gave up) or is recycled for deafness is replaced by a new consumer after a growing wait: a
  // channel that stopped for good would leave a worker ingesting but deaf to every round. Messages
  // sent meanwhile are missed, as by a restarted worker: a round this worker missed times out and
  // its partitions answer the next. Before start() resolves, a failure fails start() instead.
  async #consume(first: KafkaConsumer): Promise<unknown> {
    let consumer = first
    for (let attempt = 1; ; attempt++) {
      const { error, read } = await this.#readUntilAbandoned(consumer)
      if (this.#closing) return undefined
      if (!this.#started) {
        if (error === undefined) return undefined
        this.#logger.error({ topic: this.topic, error: messageOf(error) }, 'control channel stopped reading')
        this.#positioned.reject(error)
        return error
      }
      if (read) attempt = 1
      const waitMs = Math.min(5_000, 500 * 2 ** Math.min(attempt - 1, 4))
      this.#logger.error(
        { topic: this.topic, error: error === undefined ? 'deaf' : messageOf(error), attempt, waitMs },
        'control channel stopped reading; reconnecting',
      )
      this.#recycling = false
      await withTimeout(consumer.close(), 5000).catch(() => {})
      await delay(waitMs, undefined, { signal: this.#closed.signal }).catch(() => {})
      if (this.#closing) return undefined
      consumer = this.#newConsumer()
      this.#consumer = consumer
    }
  }

  // A stuck reader may never end, even when closed: the client's group join can wait on a broker
  // that woke from a freeze without ever settling. Abandoning it (the heartbeat's call) lets the
  // loop start a new consumer at once; the old one, should it wake, delivers nothing more.
  #readUntilAbandoned(consumer: KafkaConsumer): Promise<{ error: unknown; read: boolean }> {
    const abandoned = new Promise<{ error: unknown; read: boolean }>((resolve) => {
      this.#abandonReader = () => resolve({ error: undefined, read: false })
    })
    return Promise.race([this.#read(consumer), abandoned]).finally(() => {
      this.#abandonReader = undefined
    })
  }

  async #read(consumer: KafkaConsumer): Promise<{ error: unknown; read: boolean }> {
    let read = false
    try {
      for await (const record of consumer.records()) {
        if (consumer !== this.#consumer) return { error: undefined, read }
        read = true
        this.#lastHeardAt = Date.now()
        if (record.partition !== CONTROL_PARTITION) continue
        const probe = probeId(record)
        if (probe !== undefined) {
          if (this.#probes.delete(probe)) this.#positioned.resolve()
          continue
        }
        await this.#deliver(record)
      }
      return { error: undefined, read }
    } catch (error) {
      return { error, read }
    }
  }

  #startHeartbeat(options: LivenessOptions): void {
    const intervalMs = options.probeIntervalMs ?? 5000
    const deafAfterMs = options.deafAfterMs ?? 20_000
    const reconnectAfterMs = options.reconnectAfterMs ?? 60_000
    this.#heartbeat = setInterval(() => {
      const silentMs = Date.now() - this.#lastHeardAt
      const deaf = silentMs > deafAfterMs
      if (deaf !== this.#deaf) {
        this.#deaf = deaf
        if (deaf) this.#logger.error({ topic: this.topic, silentMs }, 'control channel cannot hear the topic')
        else this.#logger.info({ topic: this.topic }, 'control channel hears the topic again')
      }
      if (silentMs > reconnectAfterMs && !this.#recycling) {
        // A reader stuck without an error: the loop leaves it (closing it in the background) and
        // reconnects.
        this.#recycling = true
        this.#lastHeardAt = Date.now() - deafAfterMs
        this.#abandonReader?.()
      }
      // Only this channel acts on its probe; that it comes back is what `hearing` means.
      const id = randomUUID()
      this.#probes.add(id)
      if (this.#probes.size > 100) this.#probes.delete(this.#probes.values().next().value as string)
      this.#send(Buffer.alloc(0), Buffer.from(PROBE_HEADER), { [PROBE_HEADER]: id }).catch(() => {
        this.#probes.delete(id)
      })
    }, intervalMs)
    this.#heartbeat.unref()
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

/** A deferred whose rejection no one need wait for: nobody may be waiting when the channel fails or closes. */
function unwatched(): Deferred<void> {
  const positioned = deferred()
  positioned.promise.catch(() => {})
  return positioned
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    work,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

function probeId(record: IncomingRecord): string | undefined {
  for (const [name, value] of record.headers) if (name.toString() === PROBE_HEADER) return value.toString()
  return undefined
}
