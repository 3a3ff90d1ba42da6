// Exactly-once with the table wholly on S3, behind either kind of catalog: Floe's SQL catalog with
// its warehouse on the stack's S3 server (data files, manifests and metadata files all through
// S3Storage), and the REST catalog whose warehouse is on S3 (Iceberg Java's S3FileIO writes the
// metadata files, Floe the data files and manifests). Three `floe run` workers land every
// produced id once, read back by pyiceberg through its own S3 FileIO, and no worker's log holds
// the S3 secret key (it comes from FLOE_STORAGE__S3__SECRET_ACCESS_KEY).
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { assertEveryIdOnce, Fleet } from '../e2e/fleet.ts'
import { s3Endpoints, withoutS3 } from './support.ts'

const minute = 60_000

async function threeWorkersOnce(fleet: Fleet, warehouse: string): Promise<void> {
  await Promise.all([fleet.start(), fleet.start(), fleet.start()])
  await fleet.produce(3000)
  await sleep(2000)
  await fleet.produce(3000)
  const report = await fleet.waitSettled(3 * minute)
  assertEveryIdOnce(fleet, report)
  assert.ok(report.metadataLocation?.startsWith(`${warehouse}/`), `metadata at ${report.metadataLocation}`)
  assert.deepEqual(fleet.secretsLogged(), [], 'workers whose log holds the S3 secret key')
}

describe('exactly-once on S3', { skip: withoutS3() }, () => {
  test('three workers, the SQL catalog’s warehouse on S3: every id once, read by pyiceberg through S3', async (t) => {
    await threeWorkersOnce(await Fleet.create(t, { storage: 's3', catalog: 'sql' }), s3Endpoints().warehouse)
  })

  test('three workers, a REST catalog whose warehouse is on S3: every id once, read by pyiceberg through S3', async (t) => {
    await threeWorkersOnce(await Fleet.create(t, { storage: 's3' }), s3Endpoints().rest.warehouse)
  })
})
