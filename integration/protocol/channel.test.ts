// The ControlChannel on the real local broker: workers see each other's messages in one order, a
// channel started later reads only what is sent after it started, and bytes that are not a Floe
// envelope are logged and skipped.
import assert from 'node:assert/strict'
import { after, before, describe, type TestContext, test } from 'node:test'
import {
  ControlChannel,
  type ControlLogger,
  type ControlMessage,
  type ControlReceiver,
  encodeEnvelope,
} from '../../protocol/index.ts'
import { message, writeStatus } from '../../protocol/test-fixtures.ts'
import { KafkaAdmin, type KafkaConnection, KafkaProducer } from '../../shared/kafka/index.ts'
import { endpoints, uniqueName } from '../harness.ts'

const connection = (): KafkaConnection => ({ brokers: endpoints().kafka.brokers, clientId: 'floe-it-protocol' })

interface LogLine {
  level: 'info' | 'warn' | 'error'
  details: Record<string, unknown>
  message: string
}

function recordingLogger(): ControlLogger & { lines: LogLine[] } {
  const lines: LogLine[] = []
  return {
    lines,
    info: (details, message) => lines.push({ level: 'info', details, message }),
    warn: (details, message) => lines.push({ level: 'warn', details, message }),
    error: (details, message) => lines.push({ level: 'error', details, message }),
  }
}

/** A receiver that keeps what it got and lets a test wait for the n-th message. */
class Inbox implements ControlReceiver {
  readonly messages: ControlMessage[] = []
  #waiters: { count: number; resolve: () => void }[] = []

  receive(message: ControlMessage): void {
    this.messages.push(message)
    const ready = this.#waiters.filter((w) => this.messages.length >= w.count)
    this.#waiters = this.#waiters.filter((w) => this.messages.length < w.count)
    for (const waiter of ready) waiter.resolve()
  }

  /** Resolves once `count` messages arrived; fails the test after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 20_000): Promise<ControlMessage[]> {
    if (this.messages.length < count) {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        new Promise<void>((resolve) => this.#waiters.push({ count, resolve })),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`got ${this.messages.length} of ${count} control messages`)),
            timeoutMs,
          )
        }),
      ]).finally(() => clearTimeout(timer))
    }
    return this.messages.slice(0, count)
  }
}

describe('the control channel on the local broker', () => {
  const channels: ControlChannel[] = []
  let admin: KafkaAdmin

  async function startChannel(workerId: string, topic: string, groupPrefix: string) {
    const logger = recordingLogger()
    const inbox = new Inbox()
    const channel = new ControlChannel({ connection: connection(), topic, groupPrefix, workerId, logger })
    channel.register(inbox)
    channels.push(channel)
    await channel.start()
    return { channel, inbox, logger }
  }

  /** worker-a and worker-b on a control topic and group prefix of the test's own, removed after it. */
  async function twoWorkers(t: TestContext) {
    const topic = uniqueName('it-control')
    const groupPrefix = uniqueName('it-floe')
    const started: Awaited<ReturnType<typeof startChannel>>[] = []
    t.after(async () => {
      await Promise.all(started.map(({ channel }) => channel.close()))
      await admin.deleteTopic(topic).catch(() => {})
    })
    const start = async (workerId: string) => {
      const worker = await startChannel(workerId, topic, groupPrefix)
      started.push(worker)
      return worker
    }
    return { topic, groupPrefix, start, a: await start('worker-a'), b: await start('worker-b') }
  }

  before(() => {
    admin = new KafkaAdmin(connection())
  })
  after(async () => {
    await Promise.all(channels.map((channel) => channel.close()))
    await admin.close()
  })

  test('two workers see each other and themselves, in one order', async (t) => {
    const { topic, groupPrefix, a, b } = await twoWorkers(t)
    assert.equal(a.channel.groupId, `${groupPrefix}-control-worker-a`)
    assert.equal(await admin.partitionCount(topic), 1)

    const start = message({
      type: 'StartCommit',
      tableOffsets: [{ topic: 'events', partition: 0, offset: 2n ** 60n }],
      snapshotId: 2n ** 62n + 1n,
    })
    const status = { ...message(writeStatus(5)), sender: { workerId: 'worker-b', memberId: 'm-b', generation: 3 } }
    await a.channel.send(start)
    await b.channel.send(status)

    for (const { inbox } of [a, b]) assert.deepStrictEqual(await inbox.waitFor(2), [start, status])
  })

  test('a worker that starts later sees only what is sent after it started', async (t) => {
    const { start, a } = await twoWorkers(t)
    const earlier = message({ type: 'StartCommit', tableOffsets: [], snapshotId: null })
    await a.channel.send(earlier)
    assert.deepStrictEqual(await a.inbox.waitFor(1), [earlier])
    const c = await start('worker-c')
    const end = message({ type: 'EndCommit', expectedPartitions: [{ topic: 'events', partition: 0 }] })
    await a.channel.send(end)
    assert.deepStrictEqual(await c.inbox.waitFor(1), [end])
    assert.deepStrictEqual(await a.inbox.waitFor(2), [earlier, end])
    await c.channel.close()
    assert.equal(await c.channel.whenStopped(), undefined)
  })

  test('bytes that are not a Floe envelope are logged and skipped, and the next message arrives', async (t) => {
    const { topic, a, b } = await twoWorkers(t)
    const before = b.inbox.messages.length
    const producer = new KafkaProducer(connection())
    try {
      await producer.send([
        { topic, partition: 0, value: Buffer.from('{"not":"protobuf"}') },
        { topic, partition: 0, value: Buffer.from([0x08, 0x02, 0x12, 0x01, 0x78]) }, // version 2
        { topic, partition: 0, value: Buffer.alloc(0) },
      ])
    } finally {
      await producer.close()
    }
    const ack = message({
      type: 'CommitAcked',
      snapshotId: 7n,
      committedOffsets: [{ topic: 'events', partition: 0, offset: 10n }],
      committedFiles: [{ topic: 'events', partition: 0, filePaths: ['file:///a.parquet'] }],
      rejections: [],
    })
    await a.channel.send(ack)
    assert.deepStrictEqual((await b.inbox.waitFor(before + 1)).at(-1), ack)
    const dropped = b.logger.lines.filter((line) => line.level === 'warn' && line.message.startsWith('dropped'))
    assert.deepStrictEqual(
      dropped.map((line) => line.details['code']),
      ['PROTOCOL_UNDECODABLE', 'PROTOCOL_VERSION_UNSUPPORTED', 'PROTOCOL_UNDECODABLE'],
    )
  })

  test('a receiver that throws is logged and does not stop the others', async (t) => {
    const { a, b } = await twoWorkers(t)
    const before = b.inbox.messages.length
    const unregister = b.channel.register({
      receive() {
        throw new Error('receiver bug')
      },
    })
    const requested = message({ type: 'CommitRequested', reason: 'shutdown', partitions: [] }, '')
    await a.channel.send(requested)
    await a.channel.send(requested)
    assert.equal((await b.inbox.waitFor(before + 2)).length, before + 2)
    unregister()
    assert.equal(b.logger.lines.filter((line) => line.message === 'a control receiver failed').length, 2)
  })

  test('on a control topic with several partitions, a channel warns and uses partition 0 only', async () => {
    const wide = uniqueName('it-control-wide')
    await admin.ensureTopic(wide, 3)
    try {
      const groupPrefix = uniqueName('it-floe')
      const d = await startChannel('worker-d', wide, groupPrefix)
      const e = await startChannel('worker-e', wide, groupPrefix)
      assert.ok(d.logger.lines.some((line) => line.level === 'warn' && line.details['partitions'] === 3))
      const producer = new KafkaProducer(connection())
      try {
        const elsewhere = message({ type: 'EndCommit', expectedPartitions: [] }, 'on-partition-1')
        await producer.send([{ topic: wide, partition: 1, value: Buffer.from(encodeEnvelope(elsewhere)) }])
      } finally {
        await producer.close()
      }
      const onZero = message({ type: 'EndCommit', expectedPartitions: [] }, 'on-partition-0')
      await d.channel.send(onZero)
      assert.deepStrictEqual(await e.inbox.waitFor(1), [onZero])
      await Promise.all([d.channel.close(), e.channel.close()])
    } finally {
      await admin.deleteTopic(wide).catch(() => {})
    }
  })
})
