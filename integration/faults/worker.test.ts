// A worker never dies silently, on the real stack with real `floe run` processes: a fatal error
// (a damaged progress marker) stops it with a non-zero exit and one line; a second worker on a WAL
// directory in use refuses to start, naming the directory and the owner, and a stale lock of a
// killed worker is taken over. (A worker that loses the broker and says so on /readyz is in
// servers.test.ts, with the other frozen servers: this file freezes nothing and runs beside others.)
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Fleet, WorkerProcess } from '../e2e/fleet.ts'

/** Lines a worker wrote that are not JSON log lines: what an operator sees on the console. */
function plainLines(worker: WorkerProcess): string[] {
  return readFileSync(worker.logFile, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('{'))
}

describe('a worker never dies silently', () => {
  test('a damaged progress marker stops the worker with a non-zero exit and one line', async (t) => {
    const fleet = await Fleet.create(t, { partitions: 2 })
    // The marker a table carries for the group (used while no snapshot has one) is not JSON.
    const text = readFileSync(fleet.config, 'utf8')
    const prefix = /groupPrefix: (\S+)/.exec(text)?.[1]
    assert.ok(prefix)
    writeFileSync(
      fleet.config,
      text.replace(
        '    dlqTopic:',
        `    tableProperties:\n      floe.offsets.${prefix}-events: '{broken'\n    dlqTopic:`,
      ),
    )
    const worker = await fleet.start()
    const code = await Promise.race([worker.exited, sleep(90_000).then(() => 'still running')])
    assert.equal(code, 3, 'exit code 3 after a fatal error')
    const plain = plainLines(worker)
    assert.equal(plain.length, 1, plain.join('\n'))
    assert.match(plain[0] ?? '', /^floe run: fatal: the progress marker is not JSON \(INVARIANT_BROKEN\)$/)
    assert.ok(worker.lines().some((l) => l.msg === 'fatal error: stopping' && l.code === 'INVARIANT_BROKEN'))
  })

  test("a second worker on a WAL directory in use refuses to start; a dead owner's lock is taken over", async (t) => {
    const fleet = await Fleet.create(t, { partitions: 2 })
    const first = await fleet.start('w1')
    await fleet.waitFor(() => first.logged('worker started'), 90_000, 'w1 started')
    const wal = join(fleet.dir, 'w1', 'wal')
    const second = new WorkerProcess('w2', fleet.config, join(fleet.dir, 'w2.log'), { FLOE_INGESTION__WAL__DIR: wal })
    fleet.workers.push(second)
    assert.equal(await second.exited, 1)
    const refusal = plainLines(second).join('\n')
    assert.match(refusal, new RegExp(`WAL directory ${wal} is in use by worker w1 \\(pid ${first.child.pid} on `))
    assert.equal(second.logged('worker started'), false)

    // Killed at once: its lock stays behind with a pid that no longer runs.
    first.kill('SIGKILL')
    await first.exited
    const third = new WorkerProcess('w3', fleet.config, join(fleet.dir, 'w3.log'), { FLOE_INGESTION__WAL__DIR: wal })
    fleet.workers.push(third)
    await fleet.waitFor(() => third.logged('worker started') || !third.running, 90_000, 'w3 started')
    assert.ok(third.running, 'w3 runs')
    const takeover = third.lines().find((l) => String(l.msg).startsWith('taking over the WAL lock of worker w1'))
    assert.ok(takeover, 'the takeover is logged')
  })
})
