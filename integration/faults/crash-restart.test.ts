// kill -9 of a worker that then starts again as the same machine, on the WAL folder it left: its
// active segments (no footer) are deleted, its ready files are reused when they start at the
// table's offset and deleted otherwise (docs/design.md "Recovery"). The fleet tests in e2e/ give each
// new worker a fresh folder; here recovery meets what a crash really leaves behind. These pin the
// per-partition layout (shared-wal.test.ts runs the same kill -9 on the shared one), and the last
// one moves a killed worker in place to the shared layout. A kill while the round's commit hangs on
// a frozen catalog is in servers.test.ts, with the other frozen servers.
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { basename } from 'node:path'
import { describe, test } from 'node:test'
import { parseWalFileName } from '../../participant/wal/index.ts'
import { Fleet } from '../e2e/fleet.ts'
import { assertExactlyOnce, badEvery, killAtRandomAndRestart, minute, perPartition, recovered } from './support.ts'

/** The per-partition layout's ready data files in a WAL folder. */
function readyFiles(walDir: string): number {
  const names = readdirSync(walDir, { recursive: true, encoding: 'utf8' })
  return names.filter((name) => parseWalFileName(basename(name))?.kind === 'ready-parquet').length
}

describe('kill -9 and restart on the same WAL', { concurrency: false }, () => {
  test('workers killed at random moments and restarted on their WAL lose and duplicate nothing', async (t) => {
    const fleet = await Fleet.create(t, { ...perPartition, commitIntervalSeconds: 3 })
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    await killAtRandomAndRestart(fleet, 4)
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(4 * minute))
    t.diagnostic(`WAL files found at restart: ${JSON.stringify(recovered(fleet.workers))}`)
  })

  test('a worker killed with ready files and restarted on the shared layout warns of them and loses nothing', async (t) => {
    // Rounds 30 s apart and segments rotated after 3 s: ready files ahead of the table at the kill.
    const fleet = await Fleet.create(t, { ...perPartition, commitIntervalSeconds: 30 })
    const rotateFast = { FLOE_INGESTION__WAL__MAX_FILE_AGE_MINUTES: '0.05' }
    const worker = await fleet.start('solo', rotateFast)
    await fleet.produce(2000, { badEvery })
    const dir = fleet.walDir('solo')
    await fleet.waitFor(() => readyFiles(dir) >= 6, minute, 'six ready files')
    worker.kill('SIGKILL')
    await worker.exited
    // The restarted worker's rounds are 3 s apart (nothing needs them long now), and so is the
    // settling time: three of its rounds.
    const upgraded = await fleet.start('solo', {
      ...rotateFast,
      FLOE_INGESTION__WAL__LAYOUT: 'shared',
      FLOE_INGESTION__COMMIT_INTERVAL_SECONDS: '3',
    })
    await fleet.produce(500, { badEvery })
    await assertExactlyOnce(fleet, await fleet.waitSettled(3 * minute, 3 * 3000))
    const warned = upgraded.lines().filter((line) => String(line.msg).startsWith('WAL files of the partition layout'))
    t.diagnostic(`the upgraded worker warned: ${JSON.stringify(warned)}`)
    assert.equal(warned.length, 1, 'one warning of the files the other layout left')
    assert.ok(Number(warned[0]?.files) > 0 && Number(warned[0]?.partitionCount) > 0)
  })
})
