// Floe's S3 storage on the stack's real S3 server (moto, with signature checks on): a segment-sized
// file goes up as a streamed multipart upload and reads back byte-equal; a repeated upload of the
// same name replaces the object; a wrong bucket, a wrong key or secret, and a dead endpoint are
// each named as such; S3 keys vended with a table replace a refused key.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { HeadObjectCommand, ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3'
import { isFloeError } from '../../shared/errors.ts'
import { multipartPartSize, RoutedStorage, S3Storage } from '../../shared/storage/index.ts'
import { uniqueName } from '../harness.ts'
import { s3Endpoints, stackS3, withoutS3 } from './support.ts'

describe('S3 storage on the stack’s S3 server', { skip: withoutS3() }, () => {
  let dir: string
  let storage: S3Storage
  let client: S3Client
  let base: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-s3-'))
    storage = stackS3()
    const s3 = s3Endpoints()
    client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    })
    base = `s3://${s3.bucket}/${uniqueName('it-objects')}`
  })
  after(async () => {
    storage.close()
    client.destroy()
    await rm(dir, { recursive: true, force: true })
  })

  test('a file of several parts goes up as one multipart upload and reads back byte-equal', async () => {
    const parts = 5
    const content = randomBytes(parts * multipartPartSize + 12345)
    const source = join(dir, 'segment.parquet')
    await writeFile(source, content)
    const location = `${base}/data/big.parquet`
    await storage.putFile(location, source)
    const key = location.slice(`s3://${s3Endpoints().bucket}/`.length)
    const head = await client.send(new HeadObjectCommand({ Bucket: s3Endpoints().bucket, Key: key }))
    // S3's ETag of a multipart object is the digest of the parts' digests, then "-<number of parts>".
    assert.match(head.ETag ?? '', new RegExp(`-${parts + 1}"$`), `ETag ${head.ETag}`)
    assert.equal(head.ContentLength, content.length)
    assert.ok(Buffer.from(await storage.get(location)).equals(content), 'reads back byte-equal')
    const listed = []
    for await (const object of storage.list(`${base}/data/`)) listed.push(object)
    assert.deepEqual(
      listed.map(({ location, size }) => ({ location, size })),
      [{ location, size: content.length }],
    )
    // LastModified is the server's clock, to the second: the same machine's here.
    assert.ok(Math.abs(listed[0]!.lastModified - Date.now()) < 5 * 60_000, `listed at ${listed[0]!.lastModified}`)
    const pending = await client.send(new ListMultipartUploadsCommand({ Bucket: s3Endpoints().bucket, Prefix: key }))
    assert.equal(pending.Uploads?.length ?? 0, 0, 'no multipart upload is left open')
  })

  test('a small object goes up whole; a repeated put of the name replaces it; delete says whether there was one', async () => {
    const location = `${base}/metadata/v1.metadata.json`
    await storage.put(location, new TextEncoder().encode('{"first":true, "longer": 1}'))
    await storage.put(location, new TextEncoder().encode('{"second":true}'))
    assert.equal(new TextDecoder().decode(await storage.get(location)), '{"second":true}')
    const key = location.slice(`s3://${s3Endpoints().bucket}/`.length)
    const head = await client.send(new HeadObjectCommand({ Bucket: s3Endpoints().bucket, Key: key }))
    assert.doesNotMatch(head.ETag ?? '', /-\d+"$/, 'one PutObject, not a multipart upload')
    assert.equal(await storage.exists(location), true)
    assert.equal(await storage.exists(`${location}.missing`), false)
    assert.equal(await storage.exists(`${base}/metadata/v1`), false, 'a prefix of a key is not an object')
    await assert.rejects(storage.get(`${location}.missing`), (e) => isFloeError(e, 'STORAGE_NOT_FOUND'))
    assert.equal(await storage.delete(location), true)
    assert.equal(await storage.delete(location), false)
  })

  test('S3 keys a catalog vends with a table (s3.access-key-id, ...) are used from the next call on', async () => {
    const s3 = s3Endpoints()
    const settings = { bucket: s3.bucket, region: s3.region, endpoint: s3.endpoint, forcePathStyle: true }
    // A key S3 refuses, so that nothing but the vended key can make the put succeed.
    const routed = new RoutedStorage({
      s3: { ...settings, accessKeyId: 'AKIAUNKNOWNKEY000000', secretAccessKey: 'refused', maxAttempts: 1 },
    })
    const location = `${base}/vended/object.bin`
    await assert.rejects(routed.put(location, new Uint8Array(8)), /S3 refused the credentials/)
    routed.useVendedCredentials({
      's3.access-key-id': s3.accessKeyId,
      's3.secret-access-key': s3.secretAccessKey,
      'write.format.default': 'parquet',
    })
    const bytes = new TextEncoder().encode('vended')
    await routed.put(location, bytes)
    assert.deepEqual(new Uint8Array(await storage.get(location)), bytes)
  })

  test('keys vended with a scope serve the locations under it only, the others keep the unscoped ones', async () => {
    const s3 = s3Endpoints()
    const settings = { bucket: s3.bucket, region: s3.region, endpoint: s3.endpoint, forcePathStyle: true }
    const routed = new RoutedStorage({
      s3: { ...settings, accessKeyId: 'AKIAUNKNOWNKEY000000', secretAccessKey: 'refused', maxAttempts: 1 },
    })
    const good = { 's3.access-key-id': s3.accessKeyId, 's3.secret-access-key': s3.secretAccessKey }
    const refused = { 's3.access-key-id': 'AKIAUNKNOWNKEY000001', 's3.secret-access-key': 'refused' }
    // a routed table's own keys, for its location; the dataset's table's (refused here) elsewhere
    routed.useVendedCredentials(good, `${base}/scoped/t1/`)
    routed.useVendedCredentials(refused, `${base}/scoped/t1/data/refused/`)
    routed.useVendedCredentials(refused)
    await routed.put(`${base}/scoped/t1/data/a.parquet`, new Uint8Array(4))
    await assert.rejects(routed.put(`${base}/scoped/t2/data/a.parquet`, new Uint8Array(4)), /refused the credentials/)
    await assert.rejects(routed.put(`${base}/scoped/t1-other/a`, new Uint8Array(4)), /refused the credentials/)
    // the longest scope wins
    await assert.rejects(routed.put(`${base}/scoped/t1/data/refused/a`, new Uint8Array(4)), /refused the credentials/)
    // the same keys vended again keep the client; new keys for the scope replace it
    routed.useVendedCredentials(good, `${base}/scoped/t1/data/refused/`)
    await routed.put(`${base}/scoped/t1/data/refused/a`, new Uint8Array(4))
  })

  test('names a missing bucket, a wrong key, a wrong secret and a dead endpoint, each retryable', async () => {
    const cases: { storage: S3Storage; location: string; says: RegExp }[] = [
      {
        storage: stackS3({ bucket: 'no-such-bucket' }),
        location: 's3://no-such-bucket/x',
        says: /bucket no-such-bucket does not exist/,
      },
      {
        storage: stackS3({ accessKeyId: 'AKIAUNKNOWNKEY000000' }),
        location: `${base}/x`,
        says: /S3 refused the credentials \(InvalidAccessKeyId\)/,
      },
      {
        storage: stackS3({ secretAccessKey: 'not-the-secret' }),
        location: `${base}/x`,
        says: /S3 refused the credentials \(SignatureDoesNotMatch\)/,
      },
      {
        storage: new S3Storage({
          bucket: s3Endpoints().bucket,
          endpoint: 'http://127.0.0.1:1',
          forcePathStyle: true,
          accessKeyId: 'a',
          secretAccessKey: 'b',
          maxAttempts: 1,
        }),
        location: `${base}/x`,
        says: /S3 endpoint unreachable \(ECONNREFUSED\)/,
      },
    ]
    for (const { storage: bad, location, says } of cases) {
      for (const call of [() => bad.put(location, new Uint8Array(8)), () => bad.exists(location)]) {
        await assert.rejects(call(), (e) => {
          assert.ok(isFloeError(e, 'STORAGE_UNAVAILABLE'), String(e))
          assert.match(e.message, says)
          assert.equal(e.retryable, true)
          assert.ok(!e.message.includes(s3Endpoints().secretAccessKey), 'no secret in the message')
          return true
        })
      }
      bad.close()
    }
  })
})
