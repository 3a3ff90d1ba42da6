// Exactly-once with the table wholly on S3: Floe's SQL catalog with its warehouse on the stack's
// S3 server, so data files, manifests and metadata files all go through S3Storage. Three `floe
// run` workers land every produced id once, read back by pyiceberg through its own S3 FileIO, and
// no worker's log holds the S3 secret key (it comes from FLOE_STORAGE__S3__SECRET_ACCESS_KEY).
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { assertEveryIdOnce, Fleet } from '../e2e/fleet.ts'
import { s3Endpoints, withoutS3 } from './support.ts'

const minute = 60_000

describe('exactly-once on S3', { skip: withoutS3() }, () => {
  test('three workers, the SQL catalog’s warehouse on S3: every id once, read by pyiceberg through S3', async (t) => {
    const fleet = await Fleet.create(t, { storage: 's3', catalog: 'sql' })
    await Promise.all([fleet.start(), fleet.start(), fleet.start()])
    await fleet.produce(3000)
    await sleep(2000)
    await fleet.produce(3000)
    const report = await fleet.waitSettled(3 * minute)
    assertEveryIdOnce(fleet, report)
    const warehouse = s3Endpoints().warehouse
    assert.ok(report.metadataLocation?.startsWith(`${warehouse}/`), `metadata at ${report.metadataLocation}`)
    assert.deepEqual(fleet.secretsLogged(), [], 'workers whose log holds the S3 secret key')
  })
})
