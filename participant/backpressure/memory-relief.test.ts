import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type MemoryHolder, planMemoryRelief } from './index.ts'

const MiB = 1024 * 1024
const cap = 100 * MiB

function holder(key: string, heldMiB: number, bufferedMiB: number): MemoryHolder<string> {
  return { key, heldBytes: heldMiB * MiB, bufferedHeldBytes: bufferedMiB * MiB }
}

describe('memory relief', () => {
  test('below 80% of the cap nothing is done', () => {
    const plan = planMemoryRelief([holder('a', 79, 70)], 79 * MiB, { capBytes: cap })
    assert.deepEqual(plan, { flush: [], rotate: [] })
  })

  test('from 80% on, the largest buffers flush until the total would be back at 60%', () => {
    const holders = [holder('small', 10, 9), holder('large', 40, 35), holder('middle', 30, 25)]
    const plan = planMemoryRelief(holders, 80 * MiB, { capBytes: cap })
    // 20 MiB to free: the largest buffer (35) is enough
    assert.deepEqual(plan, { flush: ['large'], rotate: [] })
    const more = planMemoryRelief(holders, 95 * MiB, { capBytes: cap })
    // 35 MiB to free: 35 from the largest reaches it exactly
    assert.deepEqual(more, { flush: ['large'], rotate: [] })
    const most = planMemoryRelief(holders, 100 * MiB, { capBytes: cap })
    assert.deepEqual(most, { flush: ['large', 'middle'], rotate: [] })
  })

  test('the worker total decides, even when this caller holds only part of it', () => {
    // another dataset holds the rest: this one frees what it can, its largest first
    const plan = planMemoryRelief([holder('a', 5, 4), holder('b', 6, 5)], 90 * MiB, { capBytes: cap })
    assert.deepEqual(plan, { flush: ['b', 'a'], rotate: [] })
  })

  test('buffers too small for a worthwhile row group rotate instead, the largest holders first, after every flush', () => {
    const holders = [
      holder('tiny-rows-big-file', 3, 0.25),
      holder('worth-a-row-group', 4, 2),
      holder('tiny', 1, 0.5),
      holder('empty', 0, 0),
    ]
    const plan = planMemoryRelief(holders, 85 * MiB, { capBytes: cap, minRowGroupHeldBytes: MiB })
    assert.deepEqual(plan, { flush: ['worth-a-row-group'], rotate: ['tiny-rows-big-file', 'tiny'] })
  })

  test('many small holders (1,000 partitions) rotate only as many as needed to reach the target', () => {
    const holders = Array.from({ length: 1000 }, (_, i) => holder(`p${i}`, 0.09, 0.05))
    const plan = planMemoryRelief(holders, 90 * MiB, { capBytes: cap })
    assert.equal(plan.flush.length, 0)
    // 30 MiB to free at 0.09 MiB each
    assert.equal(plan.rotate.length, Math.ceil(30 / 0.09))
  })

  test('holders that hold nothing are left alone', () => {
    const plan = planMemoryRelief([holder('empty', 0, 0)], 100 * MiB, { capBytes: cap })
    assert.deepEqual(plan, { flush: [], rotate: [] })
  })
})
