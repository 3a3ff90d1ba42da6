// The SQL catalog's PostgreSQL stopped and started again while `floe run` workers ingest: rounds
// whose catalog calls meet no server (CATALOG_UNAVAILABLE before a statement is sent, an unknown
// outcome when the connection goes mid-commit) retry and look for their commit, so once the
// server is back every id is in the table exactly once. Both a clean shutdown and a kill -9.
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { assertEveryIdOnce, Fleet } from '../e2e/fleet.ts'
import { withoutPostgres } from '../harness.ts'
import { restartPostgres } from '../stack/index.ts'

const minute = 60_000

async function ingestThroughRestart(t: Parameters<typeof Fleet.create>[0], hard: boolean): Promise<void> {
  const fleet = await Fleet.create(t, { catalog: 'postgres', commitIntervalSeconds: 1, partitions: 4 })
  let restarted = false
  t.after(async () => {
    if (!restarted) await restartPostgres().catch(() => {})
  })
  await Promise.all([fleet.start(), fleet.start()])
  await fleet.produce(1500)
  await fleet.nextCommit(3 * minute)
  // Events keep arriving while the catalog is gone: they wait in the WAL for the next round.
  const during = fleet.produce(1500, { batch: 100 })
  await sleep(500)
  await restartPostgres({ hard, downMs: 8000 })
  restarted = true
  await during
  await fleet.produce(1000)
  assertEveryIdOnce(fleet, await fleet.waitSettled(4 * minute))
}

describe('a PostgreSQL catalog restart during ingest', { concurrency: false, skip: withoutPostgres() }, () => {
  test('a clean stop and start loses and duplicates nothing', async (t) => {
    await ingestThroughRestart(t, false)
  })

  test('a kill -9 and start loses and duplicates nothing', async (t) => {
    await ingestThroughRestart(t, true)
  })
})
