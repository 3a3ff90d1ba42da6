// S3 keys vended by an OAuth 2 REST catalog whose warehouse is on S3: the stack's auth front,
// under `/s3/`, answers each table load asked for vended credentials with an S3 key
// (`s3.access-key-id`, `s3.secret-access-key`). The workers are configured with no S3 key at all
// and no AWS chain to find one in, so every data file and manifest they write goes up with the key
// the catalog vended; every id lands once, read back by pyiceberg, and no log holds the key. Under
// `/s3-scoped/` each table is vended a key of its own that S3 allows under that table's location
// only (an IAM user per table): a routed dataset writes every table with that table's key.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { assertEveryIdOnce, Fleet } from '../e2e/fleet.ts'
import { endpoints } from '../harness.ts'
import { s3Endpoints, withoutS3 } from './support.ts'

const minute = 60_000

function withoutVendingFront(): string | false {
  const noS3 = withoutS3()
  if (noS3) return noS3
  return endpoints().restAuth?.s3Uri ? false : 'the stack runs without --rest-auth'
}

/** Workers with no S3 key of their own and no AWS chain to find one in: only the catalog's keys. */
function vendedOnly(
  auth: NonNullable<ReturnType<typeof endpoints>['restAuth']>,
  uri = auth.s3Uri,
): Record<string, string | undefined> {
  return {
    FLOE_CATALOG__URI: uri,
    FLOE_CATALOG__CREDENTIAL: `${auth.clientId}:${auth.clientSecret}`,
    FLOE_CATALOG__ACCESS_DELEGATION: 'vended-credentials',
    FLOE_STORAGE__S3__ACCESS_KEY_ID: undefined,
    FLOE_STORAGE__S3__SECRET_ACCESS_KEY: undefined,
    AWS_ACCESS_KEY_ID: undefined,
    AWS_SECRET_ACCESS_KEY: undefined,
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
    AWS_CONFIG_FILE: '/nonexistent',
    AWS_EC2_METADATA_DISABLED: 'true',
  }
}

function assertNoSecretLogged(fleet: Fleet, auth: NonNullable<ReturnType<typeof endpoints>['restAuth']>): void {
  const logged = fleet.workers.flatMap((w) => w.lines()).map((l) => JSON.stringify(l))
  for (const secret of [s3Endpoints().secretAccessKey, auth.clientSecret])
    assert.ok(!logged.some((line) => line.includes(secret)), 'a worker logged a secret')
}

describe('S3 keys vended by a REST catalog on S3', { skip: withoutVendingFront() }, () => {
  test('workers without an S3 key of their own write with the vended one and land every id once', async (t) => {
    const auth = endpoints().restAuth!
    const fleet = await Fleet.create(t, { storage: 's3', env: vendedOnly(auth) })
    await Promise.all([fleet.start(), fleet.start()])
    await fleet.produce(2000)
    const report = await fleet.waitSettled(3 * minute)
    assertEveryIdOnce(fleet, report)
    assert.ok(
      report.metadataLocation?.startsWith(`${s3Endpoints().rest.warehouse}/`),
      `metadata at ${report.metadataLocation}`,
    )
    assertNoSecretLogged(fleet, auth)
  })

  test('a routed dataset: every table the route makes is created, written and committed with vended keys', async (t) => {
    const auth = endpoints().restAuth!
    const tables = 6
    const fleet = await Fleet.create(t, {
      storage: 's3',
      env: vendedOnly(auth),
      route: { kindOf: (n) => `k${n % tables}`, extra: ', maxOpenTables: 4' },
    })
    await Promise.all([fleet.start(), fleet.start()])
    await fleet.produce(1200)
    const report = await fleet.waitSettled(3 * minute)
    assertEveryIdOnce(fleet, report)
    assert.equal(report.tables, tables, 'one table per route value')
    assertNoSecretLogged(fleet, auth)
  })

  test("a routed dataset whose catalog vends each table a key for its own location writes every table with that table's", async (t) => {
    const auth = endpoints().restAuth!
    const tables = 4
    const fleet = await Fleet.create(t, {
      storage: 's3',
      env: vendedOnly(auth, auth.s3ScopedUri),
      route: { kindOf: (n) => `k${n % tables}`, extra: ', maxOpenTables: 2' },
    })
    await Promise.all([fleet.start(), fleet.start()])
    await fleet.produce(800)
    const report = await fleet.waitSettled(3 * minute)
    assertEveryIdOnce(fleet, report)
    assert.equal(report.tables, tables, 'one table per route value')
    // the ledger's key is refused under a routed table's location: each was written with its own
    const scoped = ((await (await fetch(auth.issued)).json()) as { scoped: string[] }).scoped
    const ours = scoped.filter((location) => location.includes(`/${fleet.table.split('.')[0]}/`))
    t.diagnostic(`tables with a key of their own: ${ours.map((l) => l.split('/').at(-1)).join(', ')}`)
    assert.equal(ours.length, 1 + tables)
    assertNoSecretLogged(fleet, auth)
  })
})
