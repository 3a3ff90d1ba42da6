import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { createLogger } from '../shared/telemetry/index.ts'
import { GroupOffsets } from './group-offsets.ts'

function logLines(): { lines: Record<string, unknown>[]; destination: Writable } {
  const lines: Record<string, unknown>[] = []
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>)
      callback()
    },
  })
  return { lines, destination }
}

const nextTick = () => new Promise((resolve) => setImmediate(resolve))

describe('group offsets', () => {
  test('the ACKs of one round go in one request, the later offset of a partition winning', async () => {
    const requests: Array<ReadonlyMap<number, bigint>> = []
    const { destination } = logLines()
    const offsets = new GroupOffsets({
      commit: async (map) => {
        requests.push(map)
      },
      holds: () => true,
      logger: createLogger({ destination }),
    })
    offsets.commit(0, 10n)
    offsets.commit(1, 20n)
    offsets.commit(0, 15n)
    await nextTick()
    offsets.commit(2, 30n)
    await nextTick()
    assert.deepEqual(requests, [
      new Map([
        [0, 15n],
        [1, 20n],
      ]),
      new Map([[2, 30n]]),
    ])
  })

  test('a refused request is tried again, backing off, with a newer offset winning, and logged once', async () => {
    const requests: Array<ReadonlyMap<number, bigint>> = []
    let refuse = 2
    const { lines, destination } = logLines()
    const offsets = new GroupOffsets({
      commit: async (map) => {
        requests.push(map)
        if (refuse-- > 0) throw new Error('REBALANCE_IN_PROGRESS')
      },
      holds: () => true,
      logger: createLogger({ destination }),
      retryMs: 5,
    })
    offsets.commit(0, 10n)
    offsets.commit(1, 20n)
    await nextTick()
    offsets.commit(1, 25n)
    for (let i = 0; i < 200 && requests.length < 3; i++) await sleep(2)
    await sleep(20)
    assert.deepEqual(requests, [
      new Map([
        [0, 10n],
        [1, 20n],
      ]),
      new Map([
        [1, 25n],
        [0, 10n],
      ]),
      new Map([
        [1, 25n],
        [0, 10n],
      ]),
    ])
    assert.equal(lines.filter((line) => String(line.msg).startsWith('could not commit group offsets')).length, 1)
    assert.ok(lines.some((line) => line.msg === 'group offsets committed after a retry' && line.attempts === 3))
  })

  test("a partition revoked meanwhile is not tried again: its offset is the new owner's", async () => {
    const requests: Array<ReadonlyMap<number, bigint>> = []
    const held = new Set([0, 1])
    const { destination } = logLines()
    const offsets = new GroupOffsets({
      commit: async (map) => {
        requests.push(map)
        if (requests.length === 1) throw new Error('REBALANCE_IN_PROGRESS')
      },
      holds: (partition) => held.has(partition),
      logger: createLogger({ destination }),
      retryMs: 5,
    })
    offsets.commit(0, 10n)
    offsets.commit(1, 20n)
    await nextTick()
    held.delete(0)
    for (let i = 0; i < 200 && requests.length < 2; i++) await sleep(2)
    assert.deepEqual(requests[1], new Map([[1, 20n]]))
  })

  test('settle waits for the request in flight and tries a refused one once more, then stops', async () => {
    const requests: Array<ReadonlyMap<number, bigint>> = []
    const { destination } = logLines()
    const offsets = new GroupOffsets({
      commit: async (map) => {
        requests.push(map)
        await sleep(10)
        if (requests.length === 1) throw new Error('NOT_COORDINATOR')
      },
      holds: () => true,
      logger: createLogger({ destination }),
      retryMs: 60_000,
    })
    offsets.commit(3, 30n)
    await nextTick()
    await offsets.settle()
    assert.deepEqual(requests, [new Map([[3, 30n]]), new Map([[3, 30n]])])
    offsets.commit(3, 40n)
    await sleep(10)
    assert.equal(requests.length, 2, 'nothing is sent after settle')
  })

  test('settle gives up after its timeout when the broker does not answer', async () => {
    const offsets = new GroupOffsets({
      commit: () => new Promise(() => {}),
      holds: () => true,
      logger: createLogger({ destination: logLines().destination }),
    })
    offsets.commit(0, 1n)
    await nextTick()
    const started = Date.now()
    await offsets.settle(30)
    assert.ok(Date.now() - started < 1000)
  })
})
