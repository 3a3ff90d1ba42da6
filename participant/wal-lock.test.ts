import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { isFloeError } from '../shared/index.ts'
import { lockWalDir, WAL_LOCK_FILE } from './wal-lock.ts'

function logger() {
  const lines: string[] = []
  return { lines, warn: (_: Record<string, unknown>, message: string) => lines.push(message) }
}

async function walDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'floe-wal-lock-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}

describe('the WAL directory lock', () => {
  test('a second worker on a locked directory is refused with the directory and the owner', async (t) => {
    const dir = await walDir(t)
    const first = await lockWalDir(dir, { workerId: 'w1', logger: logger(), pid: 100, host: 'h', alive: () => true })
    await assert.rejects(
      lockWalDir(dir, { workerId: 'w2', logger: logger(), pid: 200, host: 'h', alive: () => true }),
      (error) => {
        assert.ok(isFloeError(error, 'WAL_IN_USE'))
        assert.ok(error.fatal)
        assert.match(error.message, new RegExp(`WAL directory ${dir} is in use by worker w1 \\(pid 100 on h`))
        return true
      },
    )
    await first.release()
    const second = await lockWalDir(dir, { workerId: 'w2', logger: logger(), pid: 200, host: 'h', alive: () => true })
    assert.equal(JSON.parse(await readFile(join(dir, WAL_LOCK_FILE), 'utf8')).workerId, 'w2')
    await second.release()
  })

  test('a lock of a dead pid on this host is taken over, with a log line', async (t) => {
    const dir = await walDir(t)
    await lockWalDir(dir, { workerId: 'w1', logger: logger(), pid: 100, host: 'h' })
    const log = logger()
    const lock = await lockWalDir(dir, {
      workerId: 'w2',
      logger: log,
      pid: 200,
      host: 'h',
      alive: (pid) => pid !== 100,
    })
    assert.equal(lock.owner.workerId, 'w2')
    assert.equal(log.lines.length, 1)
    assert.match(log.lines[0] ?? '', /taking over the WAL lock of worker w1: pid 100 is not running/)
  })

  test('a lock of another host is never taken over: its pid says nothing here', async (t) => {
    const dir = await walDir(t)
    await lockWalDir(dir, { workerId: 'w1', logger: logger(), pid: 100, host: 'other' })
    await assert.rejects(
      lockWalDir(dir, { workerId: 'w2', logger: logger(), pid: 200, host: 'h', alive: () => false }),
      /in use by worker w1 \(pid 100 on other/,
    )
  })

  test("a lock file that is not Floe's is refused, not overwritten", async (t) => {
    const dir = await walDir(t)
    await writeFile(join(dir, WAL_LOCK_FILE), 'garbage')
    await assert.rejects(lockWalDir(dir, { workerId: 'w2', logger: logger() }), /not Floe's/)
    assert.equal(await readFile(join(dir, WAL_LOCK_FILE), 'utf8'), 'garbage')
  })

  test('release leaves a lock that another worker holds alone', async (t) => {
    const dir = await walDir(t)
    const first = await lockWalDir(dir, { workerId: 'w1', logger: logger(), pid: 100, host: 'h' })
    await rm(join(dir, WAL_LOCK_FILE))
    await lockWalDir(dir, { workerId: 'w2', logger: logger(), pid: 200, host: 'h' })
    await first.release()
    assert.equal(JSON.parse(await readFile(join(dir, WAL_LOCK_FILE), 'utf8')).workerId, 'w2')
  })
})
