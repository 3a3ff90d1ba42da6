import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { afterEach, describe, mock, test } from 'node:test'
import { createLogger } from '../shared/telemetry/index.ts'
import { participantEventLogger } from './partition-events.ts'

function logged(): { lines: Array<Record<string, unknown>>; destination: Writable } {
  const lines: Array<Record<string, unknown>> = []
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as Record<string, unknown>)
      callback()
    },
  })
  return { lines, destination }
}

const pending = { type: 'participant.sync-failed', reason: 'assigned', message: 'the route switch is pending' } as const
const flushed = () => new Promise((resolve) => setImmediate(resolve))

describe('a partition event logger', () => {
  afterEach(() => mock.timers.reset())

  test('a sync failing the same way every second warns once a minute with how often it failed since', async () => {
    mock.timers.enable({ apis: ['Date'], now: 0 })
    const { lines, destination } = logged()
    const log = participantEventLogger(createLogger({ level: 'debug', destination }), 3)
    for (let second = 0; second < 125; second++) {
      log(pending)
      mock.timers.tick(1_000)
    }
    await flushed()
    const warns = lines.filter((l) => l.level === 'warn')
    assert.deepEqual(
      warns.map((l) => [l.partition, l.failedSince]),
      [
        [3, undefined],
        [3, 59],
        [3, 59],
      ],
    )
    assert.equal(lines.filter((l) => l.level === 'debug').length, 125 - 3)
  })

  test('another failure warns at once, and so does the same one after the partition synced', async () => {
    mock.timers.enable({ apis: ['Date'], now: 0 })
    const { lines, destination } = logged()
    const log = participantEventLogger(createLogger({ destination }), 0)
    log(pending)
    log({ ...pending, message: 'the catalog is unavailable' })
    log({ type: 'participant.synced', reason: 'assigned', position: 5n, origin: 'table' })
    log({ ...pending, message: 'the catalog is unavailable' })
    await flushed()
    assert.deepEqual(
      lines.filter((l) => l.level === 'warn').map((l) => l.err),
      ['the route switch is pending', 'the catalog is unavailable', 'the catalog is unavailable'],
    )
  })
})
