// A TCP proxy on loopback for fault tests: put it between a client and a real server (the REST
// catalog, Kafka, Azurite) and make the network misbehave on cue. Bytes are never altered or
// reordered; the faults are delays and losses a real network or a hung server produces:
//
// - `pass()`: everything flows (and whatever is held flows now, in order).
// - `hold(direction, ms)`: from now, bytes in that direction wait, and are forwarded `ms` later.
//   Bytes already on their way when the client gives up still reach the server afterwards, as
//   they would from a kernel's send buffer: a held request can land after its client saw a timeout.
// - `holdFrom(direction, match, ms)`: arms a hold that starts at the first chunk `match` accepts
//   (that chunk is held too), e.g. the request line of a catalog commit.
// - `freeze()`: both directions wait until `pass()`.
// - `dropConnections()`: every open connection is cut at once, both ways; held bytes are lost.
//
// HTTP keep-alive carries many requests on one connection, and a hold applies to every connection
// of the proxy: a test holds "the commit and everything after it", not a single request.
import { createServer, type Server, Socket } from 'node:net'

/** `up` is client -> server, `down` server -> client. */
export type Direction = 'up' | 'down'

export interface TcpProxyOptions {
  targetHost?: string
  targetPort: number
  /** Default 0: any free port. */
  listenPort?: number
}

/** One direction of one connection: forwards chunks, or queues them while the proxy holds. */
class Pipe {
  readonly #to: Socket
  readonly #pending: Buffer[] = []
  #ended = false
  #closed = false

  constructor(to: Socket) {
    this.#to = to
  }

  push(chunk: Buffer, held: boolean): void {
    if (this.#closed) return
    if (held || this.#pending.length > 0) this.#pending.push(chunk)
    else this.#to.write(chunk)
  }

  /** The source ended: the destination ends too, once nothing is queued. */
  end(): void {
    this.#ended = true
    if (this.#pending.length === 0 && !this.#closed) this.#to.end()
  }

  flush(): void {
    if (this.#closed) return
    for (const chunk of this.#pending.splice(0)) this.#to.write(chunk)
    if (this.#ended) this.#to.end()
  }

  drop(): void {
    this.#closed = true
    this.#pending.length = 0
    this.#to.destroy()
  }

  get pendingBytes(): number {
    return this.#pending.reduce((sum, chunk) => sum + chunk.length, 0)
  }
}

interface Connection {
  client: Socket
  server: Socket
  up: Pipe
  down: Pipe
}

interface Trigger {
  direction: Direction
  match: (chunk: Buffer) => boolean
  ms: number
  fired: () => void
}

export class TcpProxy {
  readonly #server: Server
  readonly #options: TcpProxyOptions
  readonly #connections = new Set<Connection>()
  /** Per direction: held until this time (ms since epoch); Infinity while frozen. */
  readonly #heldUntil: Record<Direction, number> = { up: 0, down: 0 }
  readonly #timers = new Set<NodeJS.Timeout>()
  #trigger: Trigger | undefined
  #accepted = 0

  private constructor(server: Server, options: TcpProxyOptions) {
    this.#server = server
    this.#options = options
  }

  static async start(options: TcpProxyOptions): Promise<TcpProxy> {
    const server = createServer()
    const proxy = new TcpProxy(server, options)
    server.on('connection', (client) => proxy.#accept(client))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(options.listenPort ?? 0, '127.0.0.1', () => resolve())
    })
    return proxy
  }

  get port(): number {
    const address = this.#server.address()
    if (address === null || typeof address === 'string') throw new Error('the proxy is not listening')
    return address.port
  }

  /** Connections accepted since the start, and open now. */
  get accepted(): number {
    return this.#accepted
  }
  get open(): number {
    return this.#connections.size
  }

  /** Bytes waiting in a direction, over every connection. */
  heldBytes(direction: Direction): number {
    let bytes = 0
    for (const connection of this.#connections) bytes += connection[direction].pendingBytes
    return bytes
  }

  /** Ends every fault; what was held flows now, in order. */
  pass(): void {
    this.#trigger = undefined
    for (const timer of this.#timers) clearTimeout(timer)
    this.#timers.clear()
    this.#heldUntil.up = 0
    this.#heldUntil.down = 0
    this.#flush('up')
    this.#flush('down')
  }

  /** Holds new bytes in `direction` for `ms`, then forwards them. */
  hold(direction: Direction, ms: number): void {
    const until = Date.now() + ms
    this.#heldUntil[direction] = Math.max(this.#heldUntil[direction], until)
    this.#releaseAfter(direction, ms)
  }

  // A timer runs on the event loop's clock, which lags Date.now() while a callback runs, so it
  // may fire a little before the hold ends: it then waits out the rest instead of giving up (which
  // would hold the bytes forever). A hold extended meanwhile is released by its own timer.
  #releaseAfter(direction: Direction, ms: number): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer)
      // frozen meanwhile: pass() releases it
      if (this.#heldUntil[direction] === Number.POSITIVE_INFINITY) return
      const left = this.#heldUntil[direction] - Date.now()
      if (left > 0) {
        this.#releaseAfter(direction, left)
        return
      }
      this.#heldUntil[direction] = 0
      this.#flush(direction)
    }, ms)
    this.#timers.add(timer)
  }

  /**
   * Arms a hold of `ms` in `direction` that starts with the first chunk `match` accepts. Resolves
   * when it fired (the matching chunk is held).
   */
  holdFrom(direction: Direction, match: (chunk: Buffer) => boolean, ms: number): Promise<void> {
    return new Promise((fired) => {
      this.#trigger = { direction, match, ms, fired }
    })
  }

  /** Both directions wait until pass(). */
  freeze(): void {
    this.#heldUntil.up = Number.POSITIVE_INFINITY
    this.#heldUntil.down = Number.POSITIVE_INFINITY
  }

  /** Cuts every open connection, both ways, now. */
  dropConnections(): void {
    for (const connection of this.#connections) this.#drop(connection)
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer)
    this.#timers.clear()
    this.dropConnections()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  #accept(client: Socket): void {
    this.#accepted++
    const server = new Socket()
    const connection: Connection = { client, server, up: new Pipe(server), down: new Pipe(client) }
    this.#connections.add(connection)
    client.setNoDelay(true)
    server.setNoDelay(true)
    // Queued until the server side connects (`net` buffers writes on a connecting socket).
    server.connect(this.#options.targetPort, this.#options.targetHost ?? '127.0.0.1')
    client.on('data', (chunk: Buffer) => this.#onData(connection, 'up', chunk))
    server.on('data', (chunk: Buffer) => this.#onData(connection, 'down', chunk))
    // A side that ends or fails ends the other once what is queued for it went out.
    client.on('end', () => connection.up.end())
    server.on('end', () => connection.down.end())
    client.on('error', () => connection.up.end())
    server.on('error', () => {
      connection.down.end()
      client.destroy()
    })
    const forget = () => {
      if (client.destroyed && server.destroyed) this.#connections.delete(connection)
    }
    client.on('close', forget)
    server.on('close', forget)
  }

  #onData(connection: Connection, direction: Direction, chunk: Buffer): void {
    const trigger = this.#trigger
    if (trigger && trigger.direction === direction && trigger.match(chunk)) {
      this.#trigger = undefined
      this.hold(direction, trigger.ms)
      trigger.fired()
    }
    connection[direction].push(chunk, Date.now() < this.#heldUntil[direction])
  }

  #flush(direction: Direction): void {
    for (const connection of this.#connections) connection[direction].flush()
  }

  #drop(connection: Connection): void {
    connection.up.drop()
    connection.down.drop()
    connection.client.destroy()
    this.#connections.delete(connection)
  }
}
