import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { S3ServiceException } from '@aws-sdk/client-s3'
import { FloeError, isFloeError } from '../errors.ts'
import { namedStorageFailure, parseS3Location, S3Storage, s3Failure, storageFor } from './index.ts'

function serviceError(name: string, status: number): S3ServiceException {
  return new S3ServiceException({
    name,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode: status },
  })
}

function socketError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code })
}

const location = 's3://lake/warehouse/t/data/a.parquet'

describe('parseS3Location', () => {
  test('reads the bucket and key of s3 and s3a locations', () => {
    assert.deepEqual(parseS3Location('s3://lake/w/t/x.parquet'), { scheme: 's3', bucket: 'lake', key: 'w/t/x.parquet' })
    assert.deepEqual(parseS3Location('S3A://lake'), { scheme: 's3a', bucket: 'lake', key: '' })
  })
  for (const bad of ['s3:/lake/x', 'abfs://c@a.dfs.core.windows.net/x', '/lake/x', 's3:///x']) {
    test(`refuses ${bad}`, () => {
      assert.throws(
        () => parseS3Location(bad),
        (e) => isFloeError(e, 'CONFIG_INVALID'),
      )
    })
  }
})

describe('S3 failure classification', () => {
  // Each row: what the SDK threw, for which operation, and the class and reason Floe gives it.
  const rows: { what: string; error: unknown; operation: string; code: string; reason: string; says?: RegExp }[] = [
    {
      what: 'a missing key on get',
      error: serviceError('NoSuchKey', 404),
      operation: 'get',
      code: 'STORAGE_NOT_FOUND',
      reason: 'no-such-key',
    },
    {
      what: 'a missing bucket',
      error: serviceError('NoSuchBucket', 404),
      operation: 'put',
      code: 'STORAGE_UNAVAILABLE',
      reason: 'no-such-bucket',
      says: /bucket lake does not exist/,
    },
    {
      what: 'an unknown access key',
      error: serviceError('InvalidAccessKeyId', 403),
      operation: 'put',
      code: 'STORAGE_UNAVAILABLE',
      reason: 'credentials-refused',
      says: /refused the credentials \(InvalidAccessKeyId\)/,
    },
    {
      what: 'a wrong secret key',
      error: serviceError('SignatureDoesNotMatch', 403),
      operation: 'get',
      code: 'STORAGE_UNAVAILABLE',
      reason: 'credentials-refused',
      says: /refused the credentials/,
    },
    {
      what: 'an expired session token',
      error: serviceError('ExpiredToken', 400),
      operation: 'list',
      code: 'STORAGE_UNAVAILABLE',
      reason: 'credentials-refused',
    },
    {
      what: 'a denied access',
      error: serviceError('AccessDenied', 403),
      operation: 'put',
      code: 'STORAGE_UNAVAILABLE',
      reason: 'access-denied',
      says: /denied access to bucket lake/,
    },
    {
      what: 'throttling',
      error: serviceError('SlowDown', 503),
      operation: 'put',
      code: 'STORAGE_UNAVAILABLE',
      reason: 'throttled',
    },
    {
      what: 'a server error',
      error: serviceError('InternalError', 500),
      operation: 'put',
      code: 'STORAGE_UNAVAILABLE',
      reason: 'server-error',
    },
    {
      what: 'a refused connection',
      error: socketError('ECONNREFUSED'),
      operation: 'put',
      code: 'STORAGE_UNAVAILABLE',
      reason: 'unreachable',
      says: /unreachable \(ECONNREFUSED\)/,
    },
    {
      what: 'a reset connection under a wrapper',
      error: new Error('socket hang up', { cause: socketError('ECONNRESET') }),
      operation: 'get',
      code: 'STORAGE_UNAVAILABLE',
      reason: 'unreachable',
    },
    {
      what: 'a request timeout',
      error: Object.assign(new Error('timed out'), { name: 'TimeoutError' }),
      operation: 'put',
      code: 'STORAGE_UNAVAILABLE',
      reason: 'unreachable',
    },
    {
      what: 'no credentials in the chain',
      error: Object.assign(new Error('Could not load credentials'), { name: 'CredentialsProviderError' }),
      operation: 'put',
      code: 'STORAGE_UNAVAILABLE',
      reason: 'no-credentials',
      says: /FLOE_STORAGE__S3__ACCESS_KEY_ID/,
    },
    {
      what: 'an unexpected 400',
      error: serviceError('InvalidArgument', 400),
      operation: 'put',
      code: 'STORAGE_UNAVAILABLE',
      reason: 'other',
    },
  ]
  for (const row of rows) {
    test(`${row.what}: ${row.code} (${row.reason})`, () => {
      const failure = s3Failure(row.error, row.operation, location, 'lake')
      assert.ok(failure instanceof FloeError)
      assert.equal(failure.code, row.code)
      assert.equal(failure.details['reason'], row.reason)
      assert.equal(failure.cause, row.error, 'the SDK error stays the cause, for the log')
      if (row.says) assert.match(failure.message, row.says)
      if (row.code === 'STORAGE_UNAVAILABLE') assert.equal(failure.retryable, true)
    })
  }

  test('passes FloeErrors and aborts through untouched', () => {
    const floe = new FloeError('CONFIG_INVALID', 'x')
    assert.equal(s3Failure(floe, 'put', location, 'lake'), floe)
    const abort = new DOMException('aborted', 'AbortError')
    assert.equal(s3Failure(abort, 'put', location, 'lake'), abort)
  })

  test('names a missing bucket and refused credentials for one-line reports, not a network failure', () => {
    const bucket = s3Failure(serviceError('NoSuchBucket', 404), 'put', location, 'lake')
    assert.match(namedStorageFailure(bucket) ?? '', /bucket lake does not exist/)
    const credentials = s3Failure(serviceError('InvalidAccessKeyId', 403), 'put', location, 'lake')
    assert.match(namedStorageFailure(credentials) ?? '', /refused the credentials/)
    assert.equal(namedStorageFailure(s3Failure(socketError('ECONNREFUSED'), 'put', location, 'lake')), undefined)
  })
})

describe('S3Storage configuration', () => {
  const config = { bucket: 'lake', prefix: 'warehouse/', endpoint: 'http://127.0.0.1:1', forcePathStyle: true }

  test('is what storageFor gives an s3 location, with storage.s3 configured', () => {
    assert.ok(storageFor('s3://lake/warehouse/x', { s3: config }) instanceof S3Storage)
    assert.throws(
      () => storageFor('s3://lake/x'),
      (e) => isFloeError(e, 'CONFIG_INVALID') && /storage\.s3/.test((e as Error).message),
    )
  })

  test('refuses a location in another bucket or outside the prefix before any request', async () => {
    const storage = new S3Storage(config)
    await assert.rejects(storage.get('s3://other/warehouse/x'), (e) => isFloeError(e, 'CONFIG_INVALID'))
    await assert.rejects(storage.put('s3://lake/elsewhere/x', new Uint8Array(1)), (e) =>
      isFloeError(e, 'CONFIG_INVALID'),
    )
    storage.close()
    const whole = new S3Storage({ ...config, prefix: '' })
    await assert.rejects(whole.exists('s3://lake'), (e) => isFloeError(e, 'CONFIG_INVALID'), 'no key')
    whole.close()
  })

  test('refuses half a pair of static credentials', () => {
    assert.throws(
      () => new S3Storage({ ...config, accessKeyId: 'AKIA' }),
      (e) => isFloeError(e, 'CONFIG_INVALID'),
    )
  })

  test('says the endpoint is unreachable, retryably, when nothing listens', async () => {
    const storage = new S3Storage({ ...config, accessKeyId: 'a', secretAccessKey: 'b', maxAttempts: 1 })
    await assert.rejects(storage.put('s3://lake/warehouse/x', new Uint8Array(3)), (e) => {
      assert.ok(isFloeError(e, 'STORAGE_UNAVAILABLE'))
      assert.equal(e.details['reason'], 'unreachable')
      return true
    })
    storage.close()
  })
})
