import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { WakeUp } from './wake-up.ts'

describe("the record loop's idle wait", () => {
  test('ends early when woken', async () => {
    const wakeUp = new WakeUp()
    const started = performance.now()
    const waiting = wakeUp.idle(60_000)
    wakeUp.wake()
    await waiting
    assert.ok(performance.now() - started < 1000)
  })

  test('a change while the loop was busy ends the next wait at once', async () => {
    const wakeUp = new WakeUp()
    wakeUp.wake()
    const started = performance.now()
    await wakeUp.idle(60_000)
    assert.ok(performance.now() - started < 1000)
  })

  test('ends after its time when nothing changed', async () => {
    const wakeUp = new WakeUp()
    await wakeUp.idle(5)
  })
})
