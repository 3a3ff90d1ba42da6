// The fault proxy against a plain TCP echo server on loopback: bytes pass untouched, a hold
// delays them and then delivers them in order (even after the client gave up), a triggered hold
// starts at the chunk it matches, a freeze lasts until pass(), and a drop cuts connections.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { TcpProxy } from './tcp-proxy.ts'

let echo: Server
/** Everything the echo server received, per connection, in order. */
const received: Buffer[][] = []
let proxy: TcpProxy

before(async () => {
  echo = createServer((socket) => {
    const mine: Buffer[] = []
    received.push(mine)
    socket.on('data', (chunk: Buffer) => {
      mine.push(chunk)
      socket.write(chunk)
    })
    socket.on('error', () => {})
    socket.on('end', () => socket.end())
  })
  echo.listen(0, '127.0.0.1')
  await once(echo, 'listening')
  const address = echo.address()
  assert.ok(address && typeof address === 'object')
  proxy = await TcpProxy.start({ targetPort: address.port })
})
after(async () => {
  await proxy.close()
  echo.close()
})

async function connect(): Promise<Socket> {
  const socket = createConnection({ port: proxy.port, host: '127.0.0.1' })
  await once(socket, 'connect')
  socket.on('error', () => {})
  return socket
}

/** Reads until `bytes` arrived; resolves with them and the wait. */
function readBytes(socket: Socket, bytes: number): Promise<{ text: string; ms: number }> {
  const started = Date.now()
  let text = ''
  return new Promise((resolve) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString()
      if (text.length >= bytes) {
        socket.off('data', onData)
        resolve({ text, ms: Date.now() - started })
      }
    }
    socket.on('data', onData)
  })
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('TcpProxy', () => {
  test('passes bytes both ways untouched', async () => {
    const socket = await connect()
    const reply = readBytes(socket, 5)
    socket.write('hello')
    assert.equal((await reply).text, 'hello')
    socket.destroy()
  })

  test('a hold delays the bytes of its direction, then delivers them in order', async () => {
    const socket = await connect()
    proxy.hold('up', 300)
    const reply = readBytes(socket, 6)
    socket.write('ab')
    socket.write('cd')
    socket.write('ef')
    const { text, ms } = await reply
    assert.equal(text, 'abcdef')
    assert.ok(ms >= 250, `held ${ms} ms`)
    socket.destroy()
  })

  test('held bytes still reach the server after the client closed its connection', async () => {
    const before = received.length
    const socket = await connect()
    await until(() => received.length > before, 'the server to accept')
    const serverSide = received[before] as Buffer[]
    proxy.hold('up', 200)
    socket.write('late request')
    socket.destroy()
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(Buffer.concat(serverSide).toString(), '')
    await until(() => Buffer.concat(serverSide).toString() === 'late request', 'the held bytes')
  })

  test('a triggered hold starts with the chunk it matches', async () => {
    const socket = await connect()
    const fired = proxy.holdFrom('up', (chunk) => chunk.includes('POST'), 300)
    const first = readBytes(socket, 3)
    socket.write('GET')
    assert.ok((await first).ms < 250)
    const second = readBytes(socket, 4)
    socket.write('POST')
    await fired
    const { text, ms } = await second
    assert.equal(text, 'POST')
    assert.ok(ms >= 250, `held ${ms} ms`)
    socket.destroy()
  })

  test('a freeze holds both ways until pass()', async () => {
    const socket = await connect()
    proxy.freeze()
    const reply = readBytes(socket, 4)
    socket.write('cold')
    await until(() => proxy.heldBytes('up') === 4, 'the bytes to be held')
    proxy.pass()
    assert.equal((await reply).text, 'cold')
    socket.destroy()
  })

  test('dropConnections cuts every open connection', async () => {
    const socket = await connect()
    const closed = once(socket, 'close')
    await until(() => proxy.open > 0, 'the connection')
    proxy.dropConnections()
    await closed
    assert.equal(proxy.open, 0)
  })
})
