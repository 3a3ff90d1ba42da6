import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { PartitionQueue, PartitionQueues } from './partition-queue.ts'

describe('a partition queue', () => {
  test('runs steps one at a time in call order, each after the one before settled', async () => {
    const queue = new PartitionQueue()
    const seen: string[] = []
    let release: () => void = () => {}
    const first = queue.run(async () => {
      seen.push('first started')
      await new Promise<void>((resolve) => {
        release = resolve
      })
      seen.push('first done')
    })
    const second = queue.run(async () => {
      seen.push('second started')
    })
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(seen, ['first started'])
    release()
    await Promise.all([first, second])
    assert.deepEqual(seen, ['first started', 'first done', 'second started'])
  })

  test('a failed step fails its caller and the next step still runs', async () => {
    const queue = new PartitionQueue()
    const failed = queue.run(() => Promise.reject(new Error('disk full')))
    const next = queue.run(async () => 'ran')
    await assert.rejects(failed, /disk full/)
    assert.equal(await next, 'ran')
  })

  test('a partition number keeps its queue, so a re-assigned partition waits for the old slot', () => {
    const queues = new PartitionQueues()
    assert.equal(queues.of(3), queues.of(3))
    assert.notEqual(queues.of(3), queues.of(4))
  })
})
