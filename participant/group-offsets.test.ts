import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, test } from 'node:test'
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

  test('a failed request is logged and not retried: the offsets serve lag metrics only', async () => {
    let calls = 0
    const { lines, destination } = logLines()
    const offsets = new GroupOffsets({
      commit: async () => {
        calls++
        throw new Error('coordinator not available')
      },
      logger: createLogger({ destination }),
    })
    offsets.commit(0, 10n)
    for (let tick = 0; tick < 10 && lines.length === 0; tick++) await nextTick()
    assert.equal(calls, 1)
    assert.ok(lines.some((line) => String(line.msg).includes('could not commit group offsets')))
  })
})
