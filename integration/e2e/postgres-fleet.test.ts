// Exactly-once with the SQL catalog on a real PostgreSQL server: `floe run` workers whose catalog
// is the stack's PostgreSQL (the Iceberg JDBC layout, the password from FLOE_CATALOG__PASSWORD),
// events produced while they run, and pyiceberg reading the table through its own SqlCatalog on
// the same database, every id exactly once.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { withoutPostgres } from '../harness.ts'
import { assertEveryIdOnce, Fleet } from './fleet.ts'

const minute = 60_000

describe('exactly-once on the PostgreSQL SQL catalog', { skip: withoutPostgres() }, () => {
  test('three workers commit every produced event exactly once, and none logs the password', async (t) => {
    const fleet = await Fleet.create(t, { catalog: 'postgres' })
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    await fleet.produce(3000)
    await sleep(2000)
    await fleet.produce(3000)
    assertEveryIdOnce(fleet, await fleet.waitSettled(3 * minute))
    assert.ok(fleet.workers.every((w) => w.logged('worker started')))
    assert.deepEqual(fleet.secretsLogged(), [], 'workers whose log holds the PostgreSQL password')
  })
})
