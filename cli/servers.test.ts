import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { FloeError, isFloeError } from '../shared/index.ts'
import { answerWithin, reach, reasonOf, serverFailure } from './servers.ts'

describe('a start step that may wait on a server', () => {
  test('one that never answers gives up with the server named and the wait said', async () => {
    const hung = () => new Promise<never>(() => {})
    await assert.rejects(
      answerWithin('catalog sql (floe.db), table ns.events', 'CATALOG_UNAVAILABLE', 20, hung),
      (error) => {
        assert.ok(isFloeError(error, 'CATALOG_UNAVAILABLE'))
        assert.equal(error.message, 'catalog sql (floe.db), table ns.events: no answer within 0.02 s')
        assert.equal(error.details['server'], 'catalog sql (floe.db), table ns.events')
        return true
      },
    )
  })

  test('one that never answers has the wait as its reason, so a check names the server once', async () => {
    const hung = () => new Promise<never>(() => {})
    for (const wait of [answerWithin, reach]) {
      await assert.rejects(wait('storage abfs://w@a/data', 'STORAGE_UNAVAILABLE', 20, hung), (error) => {
        assert.ok(isFloeError(error, 'STORAGE_UNAVAILABLE'))
        assert.equal(error.message, 'storage abfs://w@a/data: no answer within 0.02 s')
        assert.equal(reasonOf(error), 'no answer within 0.02 s')
        return true
      })
    }
  })

  test("one that fails says its own error, not the server's absence", async () => {
    const refused = new FloeError('CONFIG_INVALID', 'the table has no column id')
    await assert.rejects(
      answerWithin('catalog rest', 'CATALOG_UNAVAILABLE', 1000, () => Promise.reject(refused)),
      (error) => error === refused,
    )
  })

  test('one that answers in time gives its answer', async () => {
    assert.equal(await answerWithin('catalog rest', 'CATALOG_UNAVAILABLE', 1000, async () => 42), 42)
  })
})

describe('a failure to reach a server', () => {
  test("is one line naming the server and the root cause, not the client's words", () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9092'), { code: 'ECONNREFUSED' })
    const clientError = Object.assign(new Error('joinGroup failed 4 times.'), { errors: [refused] })
    const error = serverFailure(
      'kafka 127.0.0.1:9092, joining the group of dataset orders',
      'KAFKA_UNAVAILABLE',
      clientError,
    )
    assert.equal(error.code, 'KAFKA_UNAVAILABLE')
    assert.equal(error.message, 'kafka 127.0.0.1:9092, joining the group of dataset orders: connection refused')
    assert.equal(error.details['server'], 'kafka 127.0.0.1:9092, joining the group of dataset orders')
  })

  test('one already named passes as it is', () => {
    const named = new FloeError('CATALOG_UNAVAILABLE', 'catalog rest: no answer', {
      details: { server: 'catalog rest' },
    })
    assert.equal(serverFailure('kafka x', 'KAFKA_UNAVAILABLE', named), named)
  })
})
