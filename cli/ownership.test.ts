import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { nextRestartDelay, type OwnershipFacts, type OwnershipStep, ownershipStep } from './ownership.ts'

const base: OwnershipFacts = {
  owns: false,
  coordinating: false,
  running: false,
  halted: false,
  now: 10_000,
  restartAt: 0,
}

describe("the worker's ownership tick", () => {
  const cases: [string, Partial<OwnershipFacts>, OwnershipStep][] = [
    ['starts a coordinator when partition 0 arrives', { owns: true }, 'start'],
    ['stops it when partition 0 goes', { coordinating: true, running: true }, 'stop'],
    ['stops one that crashed when partition 0 goes', { coordinating: true, running: false }, 'stop'],
    ['leaves a running coordinator alone', { owns: true, coordinating: true, running: true }, 'none'],
    ['does nothing without partition 0', {}, 'none'],
    [
      'restarts a coordinator that stopped unasked while partition 0 stays',
      { owns: true, coordinating: true },
      'restart',
    ],
    ['waits out the restart delay', { owns: true, coordinating: true, restartAt: 10_001 }, 'none'],
    ['restarts once the delay is over', { owns: true, coordinating: true, restartAt: 10_000 }, 'restart'],
    [
      'restarts nothing while the worker stops for a fatal error',
      { owns: true, coordinating: true, halted: true },
      'none',
    ],
  ]
  for (const [name, facts, step] of cases) {
    test(name, () => assert.equal(ownershipStep({ ...base, ...facts }), step))
  }

  test('the restart delay doubles from a second up to a minute', () => {
    const delays = [1000]
    for (let i = 0; i < 8; i++) delays.push(nextRestartDelay(delays.at(-1)!))
    assert.deepEqual(delays, [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000])
    assert.equal(nextRestartDelay(0), 1000)
  })
})
