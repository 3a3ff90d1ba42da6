// RoundReports: the statuses of one round go out in one message once nobody flushes that round;
// a slow flush is waited for at most the window. Node's mock timers drive the window.
import assert from 'node:assert/strict'
import { describe, type TestContext, test } from 'node:test'
import type { PartitionWriteStatus } from '../protocol/index.ts'
import { RoundReports } from './round-reports.ts'

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

const empty = (partition: number): PartitionWriteStatus => ({ kind: 'empty', topic: 't', partition })

function collector(t: TestContext) {
  t.mock.timers.enable({ apis: ['setTimeout'] })
  const flushing = new Set<string>()
  const sent: { commitId: string; partitions: number[] }[] = []
  const broker = { down: false }
  const reports = new RoundReports({
    send: async (commitId, { statuses }) => {
      if (broker.down) throw new Error('broker down')
      sent.push({ commitId, partitions: statuses.map((s) => s.partition) })
    },
    flushing: (commitId) => [...flushing].some((key) => key.startsWith(`${commitId}:`)),
    windowMs: 1000,
  })
  return { reports, flushing, sent, broker }
}

describe('RoundReports', () => {
  test('sends one message with every partition once none is flushing the round', async (t) => {
    const { reports, flushing, sent } = collector(t)
    flushing.add('c1:0').add('c1:1').add('c1:2')
    const done: number[] = []
    for (const partition of [2, 0]) {
      flushing.delete(`c1:${partition}`)
      void reports.submit('c1', empty(partition)).then(() => done.push(partition))
    }
    await turn()
    assert.deepEqual(sent, [], 'partition 1 is still flushing')
    flushing.delete('c1:1')
    void reports.submit('c1', empty(1)).then(() => done.push(1))
    await turn()
    await turn()
    assert.deepEqual(sent, [{ commitId: 'c1', partitions: [0, 1, 2] }])
    assert.deepEqual(done.sort(), [0, 1, 2])
  })

  test('a partition that stops flushing without a status (a superseded round) lets the rest go', async (t) => {
    const { reports, flushing, sent } = collector(t)
    flushing.add('c1:1')
    void reports.submit('c1', empty(0))
    await turn()
    assert.deepEqual(sent, [])
    flushing.delete('c1:1')
    reports.poke()
    await turn()
    await turn()
    assert.deepEqual(sent, [{ commitId: 'c1', partitions: [0] }])
  })

  test('a flush slower than the window gets a message of its own', async (t) => {
    const { reports, flushing, sent } = collector(t)
    flushing.add('c1:1')
    void reports.submit('c1', empty(0))
    await turn()
    t.mock.timers.tick(1000)
    await turn()
    assert.deepEqual(sent, [{ commitId: 'c1', partitions: [0] }])
    flushing.delete('c1:1')
    void reports.submit('c1', empty(1))
    await turn()
    await turn()
    assert.deepEqual(sent, [
      { commitId: 'c1', partitions: [0] },
      { commitId: 'c1', partitions: [1] },
    ])
  })

  test('rounds are kept apart, and a repeated status of a partition replaces its first', async (t) => {
    const { reports, sent } = collector(t)
    void reports.submit('c1', empty(0))
    void reports.submit('c2', empty(0))
    void reports.submit('c1', { kind: 'error', topic: 't', partition: 0, message: 'again' })
    await turn()
    await turn()
    assert.deepEqual(sent, [
      { commitId: 'c1', partitions: [0] },
      { commitId: 'c2', partitions: [0] },
    ])
  })

  test('a failed send fails every status of the message, and close fails the ones waiting', async (t) => {
    const { reports, flushing, broker } = collector(t)
    broker.down = true
    const statuses = [reports.submit('c1', empty(0)), reports.submit('c1', empty(1))]
    for (const status of statuses) await assert.rejects(status, /broker down/)
    flushing.add('c2:1')
    const waiting = reports.submit('c2', empty(0))
    reports.close(new Error('stopped'))
    await assert.rejects(waiting, /stopped/)
    await assert.rejects(reports.submit('c3', empty(0)), /stopped/)
  })
})
