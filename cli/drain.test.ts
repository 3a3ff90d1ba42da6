import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { ControlBody, ControlMessage, ControlReceiver } from '../protocol/index.ts'
import { type DrainedDataset, drain } from './drain.ts'

/** The control topic of one test: what is sent is kept; `deliver` hands a message to every receiver. */
class FakeChannel {
  readonly sent: ControlMessage[] = []
  readonly receivers = new Set<ControlReceiver>()
  failSend = false
  async send(message: ControlMessage): Promise<void> {
    if (this.failSend) throw new Error('broker down')
    this.sent.push(message)
  }
  register(receiver: ControlReceiver): () => void {
    this.receivers.add(receiver)
    return () => this.receivers.delete(receiver)
  }
  async deliver(dataset: string, commitId: string, timeMs: number, body: ControlBody): Promise<void> {
    const message: ControlMessage = {
      dataset,
      group: `floe-${dataset}`,
      commitId,
      sender: { workerId: 'other', memberId: 'm', generation: 3 },
      timeMs,
      body,
    }
    for (const receiver of this.receivers) await receiver.receive(message)
  }
}

const startCommit: ControlBody = { type: 'StartCommit', tableOffsets: [], snapshotId: null }
const acked: ControlBody = {
  type: 'CommitAcked',
  snapshotId: 1n,
  committedOffsets: [],
  committedFiles: [],
  rejections: [],
}

function dataset(name: string, coordinating: boolean, round: Promise<unknown> = Promise.resolve()) {
  const requests: string[] = []
  const d: DrainedDataset & { requests: string[] } = {
    name,
    group: `floe-${name}`,
    coordinating,
    requests,
    coordinator: {
      requestRound: (reason) => {
        requests.push(reason)
        return round
      },
    },
    membership: () => ({ memberId: `${name}-member`, generation: 7 }),
  }
  return d
}

/** A drain timeout that fires only when the test says so. */
function timeout() {
  let fire = () => {}
  const wait = () => new Promise<void>((resolve) => (fire = resolve))
  return { wait, fire: () => fire() }
}

const quiet = { info: () => {}, warn: () => {} }

describe("a worker's drain", () => {
  test('asks its own coordinator for a last round and finishes when that round ends', async () => {
    const channel = new FakeChannel()
    const events = dataset('events', true)
    const finished = await drain([events], 1000, { channel, workerId: 'w1', logger: quiet, wait: timeout().wait })
    assert.equal(finished, true)
    assert.deepEqual(events.requests, ['shutdown'])
    assert.deepEqual(channel.sent, [])
  })

  test("asks another worker's coordinator over the control topic, as this member of the group", async () => {
    const channel = new FakeChannel()
    const clock = { now: 1000 }
    const done = drain([dataset('events', false)], 1000, {
      channel,
      workerId: 'w1',
      logger: quiet,
      now: () => clock.now,
      wait: timeout().wait,
    })
    await Promise.resolve()
    assert.equal(channel.sent.length, 1)
    const request = channel.sent[0]!
    assert.equal(request.body.type, 'CommitRequested')
    assert.deepEqual(request.sender, { workerId: 'w1', memberId: 'events-member', generation: 7 })
    assert.equal(request.group, 'floe-events')
    await channel.deliver('events', 'c1', 1001, startCommit)
    await channel.deliver('events', 'c1', 1002, acked)
    assert.equal(await done, true)
    assert.equal(channel.receivers.size, 0, 'stops listening once done')
  })

  test('waits for the ACK of a round that started after the request, not of one already running', async () => {
    const channel = new FakeChannel()
    const clock = { now: 1000 }
    const limit = timeout()
    let finished: boolean | undefined
    const done = drain([dataset('events', false), dataset('clicks', false)], 1000, {
      channel,
      workerId: 'w1',
      logger: quiet,
      now: () => clock.now,
      wait: limit.wait,
    }).then((f) => (finished = f))
    await new Promise((resolve) => setImmediate(resolve))
    // a round started before the request: its ACK does not carry what this worker wrote since
    await channel.deliver('events', 'old', 999, startCommit)
    await channel.deliver('events', 'old', 1001, acked)
    await channel.deliver('events', 'new', 1002, startCommit)
    await channel.deliver('clicks', 'c2', 1002, startCommit)
    await channel.deliver('clicks', 'c2', 1003, acked)
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(finished, undefined, 'events is still waiting')
    await channel.deliver('events', 'new', 1004, acked)
    await done
    assert.equal(finished, true)
  })

  test('gives up at the drain timeout, and says so', async () => {
    const channel = new FakeChannel()
    const limit = timeout()
    const lines: string[] = []
    const never = new Promise<never>(() => {})
    const done = drain([dataset('events', true, never), dataset('clicks', false)], 5000, {
      channel,
      workerId: 'w1',
      logger: { info: (_, message) => lines.push(message), warn: () => {} },
      wait: limit.wait,
    })
    await new Promise((resolve) => setImmediate(resolve))
    limit.fire()
    assert.equal(await done, false)
    assert.deepEqual(lines, ['drain timed out; leftovers are safe by recovery'])
  })

  test('a request that cannot be sent is logged, and the drain still runs to its timeout', async () => {
    const channel = new FakeChannel()
    channel.failSend = true
    const limit = timeout()
    const warnings: string[] = []
    const done = drain([dataset('events', false)], 5000, {
      channel,
      workerId: 'w1',
      logger: { info: () => {}, warn: (_, message) => warnings.push(message) },
      wait: limit.wait,
    })
    await new Promise((resolve) => setImmediate(resolve))
    limit.fire()
    assert.equal(await done, false)
    assert.deepEqual(warnings, ['could not ask for a last round'])
  })

  test('asks again until a round that started since ends its collecting', async () => {
    const channel = new FakeChannel()
    const limit = timeout()
    const done = drain([dataset('events', false)], 5000, {
      channel,
      workerId: 'w1',
      logger: quiet,
      wait: limit.wait,
      now: () => 1000,
      askAgainMs: 5,
    })
    const asked = async (more: number) => {
      const target = channel.sent.length + more
      while (channel.sent.length < target) await new Promise((resolve) => setTimeout(resolve, 5))
    }
    // Nobody coordinates yet (partition 0 is moving): the request is sent again.
    await asked(2)
    // A new coordinator's first round opens on its own schedule, without having heard the request.
    await channel.deliver('events', 'c1', 1001, startCommit)
    await asked(2)
    await channel.deliver('events', 'c1', 1002, { type: 'EndCommit', expectedPartitions: [] })
    const sent = channel.sent.length
    await new Promise((resolve) => setTimeout(resolve, 30))
    assert.equal(channel.sent.length, sent, 'no request once that round ended its collecting')
    assert.ok(channel.sent.every((m) => m.body.type === 'CommitRequested' && m.dataset === 'events'))
    await channel.deliver('events', 'c1', 1003, acked)
    assert.equal(await done, true)
  })

  test('the timeout passed is the one waited for', async () => {
    const waited: number[] = []
    await drain([dataset('events', true)], 96_000, {
      channel: new FakeChannel(),
      workerId: 'w1',
      logger: quiet,
      wait: async (ms) => {
        waited.push(ms)
        return new Promise(() => {})
      },
    })
    assert.deepEqual(waited, [96_000])
  })
})
