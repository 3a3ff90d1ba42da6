// bin/floe, the launcher: which Node it runs and with which options. FLOE_NODE points it at a
// script that prints its arguments instead of a Node, and FLOE_CGROUP_ROOT at a folder standing
// for /sys/fs/cgroup, so the CPU limits of a container are tried without one.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'

const run = promisify(execFile)
const launcher = join(import.meta.dirname, '..', 'bin', 'floe')

describe('bin/floe', () => {
  let dir = ''
  let echo = ''
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-launcher-'))
    echo = join(dir, 'node')
    await writeFile(echo, '#!/bin/sh\necho "FLOE_CORES=$FLOE_CORES"\nprintf "%s\\n" "$@"\n')
    await chmod(echo, 0o755)
  })
  after(() => rm(dir, { recursive: true, force: true }))

  async function launch(env: NodeJS.ProcessEnv = {}): Promise<string[]> {
    const { stdout } = await run(launcher, ['run', '--config', 'floe.yaml'], {
      env: { ...process.env, NODE_OPTIONS: '', FLOE_NODE: echo, FLOE_CGROUP_ROOT: join(dir, 'none'), ...env },
    })
    return stdout.trim().split('\n')
  }

  async function cgroup(name: string, files: Record<string, string>): Promise<string> {
    const root = join(dir, name)
    for (const [file, text] of Object.entries(files)) {
      await mkdir(join(root, file, '..'), { recursive: true })
      await writeFile(join(root, file), `${text}\n`)
    }
    return root
  }

  const poolOf = (args: string[]) => args.find((a) => a.startsWith('--v8-pool-size='))
  const coresOf = (args: string[]) => args.find((a) => a.startsWith('FLOE_CORES='))

  test('runs the CLI with the arguments it was given, last', async () => {
    const args = await launch()
    assert.deepEqual(args.slice(-3), ['run', '--config', 'floe.yaml'])
    assert.match(args.at(-4) ?? '', /cli\/main\.ts$/)
  })

  test("sizes V8's helper pool to the cores less the main thread, from 1 to 4", async () => {
    const expected = Math.min(4, Math.max(1, availableParallelism() - 1))
    assert.equal(poolOf(await launch()), `--v8-pool-size=${expected}`)
  })

  test('takes a cgroup v2 CPU limit, rounded up to whole cores', async () => {
    const root = await cgroup('v2-limit', { 'cpu.max': '150000 100000' })
    const cores = Math.min(availableParallelism(), 2)
    assert.equal(poolOf(await launch({ FLOE_CGROUP_ROOT: root })), `--v8-pool-size=${Math.max(1, cores - 1)}`)
  })

  test('tells the worker its cores (FLOE_CORES, the default of ingestion.threads), CPU quota included', async () => {
    assert.equal(coresOf(await launch()), `FLOE_CORES=${availableParallelism()}`)
    const root = await cgroup('v2-one', { 'cpu.max': '100000 100000' })
    assert.equal(coresOf(await launch({ FLOE_CGROUP_ROOT: root })), 'FLOE_CORES=1')
    assert.equal(coresOf(await launch({ FLOE_CGROUP_ROOT: root, FLOE_CORES: '3' })), 'FLOE_CORES=3')
  })

  test('takes a cgroup v1 CPU quota, and gives one helper to a single core', async () => {
    const root = await cgroup('v1-limit', { 'cpu/cpu.cfs_quota_us': '50000', 'cpu/cpu.cfs_period_us': '100000' })
    assert.equal(poolOf(await launch({ FLOE_CGROUP_ROOT: root })), '--v8-pool-size=1')
  })

  test('reads no limit from a cgroup without one', async () => {
    const v2 = await cgroup('v2-none', { 'cpu.max': 'max 100000' })
    const v1 = await cgroup('v1-none', { 'cpu/cpu.cfs_quota_us': '-1', 'cpu/cpu.cfs_period_us': '100000' })
    const unlimited = poolOf(await launch())
    assert.equal(poolOf(await launch({ FLOE_CGROUP_ROOT: v2 })), unlimited)
    assert.equal(poolOf(await launch({ FLOE_CGROUP_ROOT: v1 })), unlimited)
  })

  test('leaves the pool to NODE_OPTIONS when it sets one', async () => {
    assert.equal(poolOf(await launch({ NODE_OPTIONS: '--v8-pool-size=3' })), undefined)
  })
})
