import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'
import { configSchema } from './schema.ts'

const examples = join(import.meta.dirname, '..', '..', 'docs', 'examples')

// The files the examples name (passwords, keys) do not exist here, so each is checked against the
// schema rather than loaded; the tests beside each feature load their own example whole.
for (const name of readdirSync(examples).filter((file) => file.endsWith('.yaml'))) {
  test(`docs/examples/${name} is a valid configuration`, () => {
    const parsed = configSchema.safeParse(parse(readFileSync(join(examples, name), 'utf8')))
    assert.ok(parsed.success, JSON.stringify(parsed.success ? undefined : parsed.error.issues))
  })
}

test('the production example has Kafka on SASL_SSL, an OAuth 2 REST catalog and S3 storage in one file', () => {
  const parsed = configSchema.parse(parse(readFileSync(join(examples, 'floe.production.yaml'), 'utf8')))
  assert.equal(parsed.kafka.sasl?.mechanism, 'scram-sha-512')
  assert.ok(parsed.kafka.ssl)
  assert.equal(parsed.catalog.type, 'rest')
  assert.ok(parsed.catalog.type === 'rest' && parsed.catalog.credentialFile)
  assert.equal(parsed.storage.type, 's3')
})
