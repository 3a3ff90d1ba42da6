import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { deferred } from './deferred.ts'
import { RoundFirst } from './round-first.ts'

/** Whether `promise` settled once every queued microtask and the next macrotask ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  void promise.then(
    () => {
      done = true
    },
    () => {
      done = true
    },
  )
  await new Promise((resolve) => setImmediate(resolve))
  return done
}

describe('RoundFirst', () => {
  test('a loop with no round work held goes on at once', async () => {
    assert.equal(await new RoundFirst().turn()(), false)
  })

  test('a loop waits for the round work held until it settles, failed or not', async () => {
    const first = new RoundFirst()
    const flush = deferred()
    const upload = deferred()
    void first.hold(flush.promise)
    void first.hold(upload.promise).catch(() => {})
    const waiting = first.turn()()
    flush.resolve()
    assert.equal(await settled(waiting), false, 'one piece of work is still under way')
    upload.reject(new Error('storage down'))
    assert.equal(await waiting, true)
  })

  test('a loop waits for a piece of work once: on its next turn it reads on', async () => {
    const first = new RoundFirst()
    const flush = deferred()
    void first.hold(flush.promise)
    const turn = first.turn(0)
    assert.equal(await turn(), true)
    assert.equal(await turn(), false, 'the same work again')
    const status = deferred()
    void first.hold(status.promise)
    status.resolve()
    assert.equal(await turn(), true, 'work held since it last looked')
  })

  test('each loop waits for the work on its own', async () => {
    const first = new RoundFirst()
    const flush = deferred()
    void first.hold(flush.promise)
    const one = first.turn()()
    const other = first.turn()()
    flush.resolve()
    assert.deepEqual(await Promise.all([one, other]), [true, true])
  })

  test('a loop waits no longer than its bound for work that hangs', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] })
    const first = new RoundFirst()
    void first.hold(deferred().promise)
    const waiting = first.turn(2_000)()
    t.mock.timers.tick(1_999)
    assert.equal(await settled(waiting), false)
    t.mock.timers.tick(1)
    assert.equal(await waiting, true)
  })

  test('work that settled is no longer held', async () => {
    const first = new RoundFirst()
    const flush = deferred()
    void first.hold(flush.promise)
    flush.resolve()
    await flush.promise
    assert.equal(await first.turn()(), false)
  })

  test('a span is held from its start to its end, once however often it is told', async () => {
    const first = new RoundFirst()
    const committing = first.span()
    committing(true)
    committing(true)
    const waiting = first.turn()()
    assert.equal(await settled(waiting), false)
    committing(false)
    assert.equal(await waiting, true)
    committing(false)
    assert.equal(await first.turn()(), false)
  })
})
