// A routed WAL folder drops what another route wrote before recovery reads it.
import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { silentLogger } from '../shared/telemetry/index.ts'
import { forgetOtherRoute, WAL_ROUTE_FILE } from './shared-wal-open.ts'

const logger = silentLogger

test("a routed WAL keeps its own route's rotations and drops another's", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-wal-route-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const files = ['rotation_0001.json', 'segment_a.parquet', 'segment_a.json']
  for (const file of files) await writeFile(join(dir, file), 'x')

  // a folder written before routes were named is taken to be this route's
  await forgetOtherRoute(dir, 'route-a', logger)
  assert.deepEqual((await readdir(dir)).sort(), [...files, WAL_ROUTE_FILE].sort())
  assert.equal(await readFile(join(dir, WAL_ROUTE_FILE), 'utf8'), 'route-a\n')

  await forgetOtherRoute(dir, 'route-a', logger)
  assert.equal((await readdir(dir)).length, files.length + 1, 'the same route keeps everything')

  await forgetOtherRoute(dir, 'route-b', logger)
  assert.deepEqual(await readdir(dir), [WAL_ROUTE_FILE], 'another route: every rotation dropped')
  assert.equal(await readFile(join(dir, WAL_ROUTE_FILE), 'utf8'), 'route-b\n')
  // a folder not made yet (a worker's first start) is made
  await forgetOtherRoute(join(dir, 'new', 'shared'), 'route-a', logger)
  assert.equal(await readFile(join(dir, 'new', 'shared', WAL_ROUTE_FILE), 'utf8'), 'route-a\n')
})
