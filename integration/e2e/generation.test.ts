// The sender of a coordinator's messages names the worker's real place in the dataset's consumer
// group: the member id and the group generation its participant holds (docs/design.md, "The protocol"),
// the same numbers its own WRITE-STATUS carries, not a constant.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runObserve } from '../../cli/observe.ts'
import { Fleet } from './fleet.ts'

interface Line {
  kind: string
  type?: string
  sender?: string
  memberId?: string
  generation?: number
}

test("a coordinator's START-COMMIT carries the generation its worker's WRITE-STATUS carries", async (t) => {
  // One member, whatever FLOE_TEST_THREADS says: the coordinator's messages and the statuses
  // compared are one sender's.
  const fleet = await Fleet.create(t, { threads: 1 })
  const worker = await fleet.start()
  const lines: Line[] = []
  let buffered = ''
  const stop = new AbortController()
  const observing = runObserve(fleet.config, {
    json: true,
    signal: stop.signal,
    stderr: { write: () => true },
    stdout: {
      write: (text: string) => {
        buffered += text
        const parts = buffered.split('\n')
        buffered = parts.pop() ?? ''
        for (const part of parts) if (part.trim()) lines.push(JSON.parse(part) as Line)
        return true
      },
    },
  })
  t.after(async () => {
    stop.abort()
    await observing
  })
  await fleet.produce(200)
  const own = (type: string) => lines.filter((l) => l.type === type && l.sender === worker.id)
  await fleet.waitFor(
    () => {
      const status = own('WriteStatus').at(-1)
      return status !== undefined && own('StartCommit').some((s) => s.generation === status.generation)
    },
    120_000,
    "a START-COMMIT with the generation of the worker's WRITE-STATUS",
  )
  const status = own('WriteStatus').at(-1)!
  const start = own('StartCommit').find((s) => s.generation === status.generation)!
  assert.ok(status.generation! >= 1, `a real generation: ${status.generation}`)
  assert.equal(start.memberId, status.memberId)
  assert.notEqual(start.memberId, '')
})
