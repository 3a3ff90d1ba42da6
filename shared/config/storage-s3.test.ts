import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { isFloeError } from '../errors.ts'
import { parseConfig, redact } from './load.ts'

const base = `
kafka:
  brokers: [127.0.0.1:9092]
catalog:
  type: sql
  path: /tmp/catalog.db
  warehouse: s3://lake/warehouse
STORAGE
ingestion:
  wal:
    dir: /tmp/floe-wal
datasets:
  - name: clickEvents
    topic: events
    table: analytics.events
    customMapping: {id: id}
    schema: {id: string not null}
    badRecords: skip
DATASET`

const s3 = `storage:
  type: s3
  s3:
    bucket: lake
    prefix: warehouse/
    region: eu-west-1
    endpoint: http://127.0.0.1:9000
    forcePathStyle: true`

function config(storage: string, dataset = '', env: NodeJS.ProcessEnv = {}) {
  return parseConfig(base.replace('STORAGE', storage).replace('DATASET', dataset), 'floe.yaml', env)
}

function refusal(storage: string, dataset = '', env: NodeJS.ProcessEnv = {}): string {
  try {
    config(storage, dataset, env)
  } catch (error) {
    assert.ok(isFloeError(error, 'CONFIG_INVALID'), String(error))
    return error.message
  }
  assert.fail('expected a refusal')
}

describe('storage.type s3', () => {
  test('reads bucket, prefix, region, endpoint and path style, credentials from the environment', () => {
    const parsed = config(s3, '', {
      FLOE_STORAGE__S3__ACCESS_KEY_ID: 'AKIDEXAMPLE',
      FLOE_STORAGE__S3__SECRET_ACCESS_KEY: 'wJalrXUtnFEMI',
      FLOE_STORAGE__S3__SESSION_TOKEN: 'token',
    })
    assert.deepEqual(parsed.storage, {
      type: 's3',
      s3: {
        bucket: 'lake',
        prefix: 'warehouse/',
        region: 'eu-west-1',
        endpoint: 'http://127.0.0.1:9000',
        forcePathStyle: true,
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: 'wJalrXUtnFEMI',
        sessionToken: 'token',
      },
    })
    assert.deepEqual(parsed.datasets[0]?.storage, parsed.storage, 'the dataset uses the top-level storage')
    const shown = JSON.stringify(redact(parsed))
    for (const secret of ['AKIDEXAMPLE', 'wJalrXUtnFEMI', '"token"']) assert.ok(!shown.includes(secret), secret)
  })

  test('needs only a bucket: no prefix, no path style, credentials from the AWS chain', () => {
    const parsed = config('storage:\n  type: s3\n  s3: {bucket: lake}')
    assert.deepEqual(parsed.storage, { type: 's3', s3: { bucket: 'lake', prefix: '', forcePathStyle: false } })
  })

  test('reads forcePathStyle from an environment override', () => {
    const parsed = config('storage:\n  type: s3\n  s3: {bucket: lake}', '', {
      FLOE_STORAGE__S3__FORCE_PATH_STYLE: 'true',
    })
    assert.equal(parsed.storage.type === 's3' && parsed.storage.s3.forcePathStyle, true)
  })

  test('is valid as a dataset’s own storage, its secrets from the dataset’s variables', () => {
    const own = '    storage:\n      type: s3\n      s3: {bucket: other-lake, endpoint: http://127.0.0.1:9000}\n'
    const parsed = config('', own, {
      FLOE_DATASETS__CLICK_EVENTS__STORAGE__S3__ACCESS_KEY_ID: 'a',
      FLOE_DATASETS__CLICK_EVENTS__STORAGE__S3__SECRET_ACCESS_KEY: 'b',
    })
    assert.deepEqual(parsed.storage, { type: 'local' })
    assert.deepEqual(parsed.datasets[0]?.storage, {
      type: 's3',
      s3: {
        bucket: 'other-lake',
        prefix: '',
        endpoint: 'http://127.0.0.1:9000',
        forcePathStyle: false,
        accessKeyId: 'a',
        secretAccessKey: 'b',
      },
    })
  })

  const refusals: { what: string; storage: string; dataset?: string; env?: NodeJS.ProcessEnv; says: RegExp }[] = [
    {
      what: 'a missing bucket',
      storage: 'storage:\n  type: s3\n  s3: {region: x}',
      says: /storage\.s3\.bucket: missing/,
    },
    {
      what: 'a bad bucket name',
      storage: 'storage:\n  type: s3\n  s3: {bucket: My_Lake}',
      says: /storage\.s3\.bucket: an S3 bucket name/,
    },
    {
      what: 'an endpoint that is no URL',
      storage: 'storage:\n  type: s3\n  s3: {bucket: lake, endpoint: "127.0.0.1:9000"}',
      says: /storage\.s3\.endpoint: expected an http\(s\) URL/,
    },
    {
      what: 'a misspelt key',
      storage: 'storage:\n  type: s3\n  s3: {bucket: lake, forcePathstyle: true}',
      says: /storage\.s3\.forcePathstyle: unknown key/,
    },
    {
      what: 'a non-boolean path style',
      storage: 'storage:\n  type: s3\n  s3: {bucket: lake, forcePathStyle: yes}',
      says: /storage\.s3\.forcePathStyle/,
    },
    {
      what: 'a secret key written in the file',
      storage: 'storage:\n  type: s3\n  s3: {bucket: lake, secretAccessKey: x}',
      says: /storage\.s3\.secretAccessKey: a secret is not written in the configuration file: set FLOE_STORAGE__S3__SECRET_ACCESS_KEY/,
    },
    {
      what: 'an access key id written in the file',
      storage: 'storage:\n  type: s3\n  s3: {bucket: lake, accessKeyId: x}',
      says: /storage\.s3\.accessKeyId: a secret is not written/,
    },
    {
      what: 'a session token in a dataset’s storage',
      storage: '',
      dataset: '    storage:\n      type: s3\n      s3: {bucket: lake, sessionToken: x}\n',
      says: /datasets\[0\]\.storage\.s3\.sessionToken: a secret is not written .* set FLOE_DATASETS__CLICK_EVENTS__STORAGE__S3__SESSION_TOKEN/,
    },
    {
      what: 'an access key id without its secret',
      storage: 'storage:\n  type: s3\n  s3: {bucket: lake}',
      env: { FLOE_STORAGE__S3__ACCESS_KEY_ID: 'a' },
      says: /storage\.s3\.secretAccessKey: set both/,
    },
  ]
  for (const row of refusals) {
    test(`refuses ${row.what}, naming the key`, () => {
      const message = refusal(row.storage, row.dataset ?? '', row.env ?? {})
      assert.match(message, row.says)
      assert.ok(!message.includes('wJalr'), 'no secret in the message')
    })
  }

  test('the documented S3 example is a valid configuration, with its credentials from the environment', () => {
    const example = join(import.meta.dirname, '..', '..', 'docs', 'examples', 'floe.s3.yaml')
    const parsed = parseConfig(readFileSync(example, 'utf8'), example, {
      FLOE_STORAGE__S3__ACCESS_KEY_ID: 'a',
      FLOE_STORAGE__S3__SECRET_ACCESS_KEY: 'b',
    })
    assert.equal(parsed.storage.type, 's3')
    assert.equal(parsed.catalog.type === 'sql' && parsed.catalog.warehouse, 's3://analytics-lake/warehouse')
  })
})
