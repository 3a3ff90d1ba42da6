import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { parse } from 'yaml'
import { isFloeError } from '../errors.ts'
import { parseConfig, redact } from './load.ts'
import { configSchema } from './schema.ts'
import { restAndOneDataset } from './test-support.ts'

const rest = restAndOneDataset

function config(kafka: string, env: NodeJS.ProcessEnv = {}) {
  return parseConfig(`kafka:\n  brokers: [127.0.0.1:9093]\n${kafka}${rest}`, 'floe.yaml', env)
}

function refusal(kafka: string, env: NodeJS.ProcessEnv = {}): string {
  try {
    config(kafka, env)
  } catch (error) {
    assert.ok(isFloeError(error, 'CONFIG_INVALID'), String(error))
    return error.message
  }
  assert.fail('the configuration was accepted')
}

const dir = mkdtempSync(join(tmpdir(), 'floe-kafka-security-'))
const file = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}
const caPem = '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n'
const certPem = '-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n'
const keyPem = '-----BEGIN PRIVATE KEY-----\nSECRETKEY\n-----END PRIVATE KEY-----\n'

describe('the Kafka security settings', () => {
  test('read the CA, client certificate and key from the files named, with hostname verification on', () => {
    const ca = file('ca.pem', caPem)
    const cert = file('client.pem', certPem)
    const key = file('client.key', keyPem)
    const kafka = config(`  ssl:\n    caFile: ${ca}\n    certFile: ${cert}\n    keyFile: ${key}\n`).kafka
    assert.deepEqual(kafka.ssl, { ca: caPem, cert: certPem, key: keyPem, verifyHostname: true })
  })

  test('take PEM from the environment, also beside `ssl: true` in the file', () => {
    const kafka = config('  ssl: true\n', {
      FLOE_KAFKA__SSL__CA_PEM: caPem,
      FLOE_KAFKA__SSL__CERT_PEM: certPem,
      FLOE_KAFKA__SSL__KEY_PEM: keyPem,
      FLOE_KAFKA__SSL__VERIFY_HOSTNAME: 'false',
    }).kafka
    assert.deepEqual(kafka.ssl, { ca: caPem, cert: certPem, key: keyPem, verifyHostname: false })
  })

  test('keep `ssl: true` and no TLS at all as they were', () => {
    assert.equal(config('  ssl: true\n').kafka.ssl, true)
    assert.equal(config('').kafka.ssl, false)
  })

  test('read a SASL password from its file, without the line end', () => {
    const passwordFile = file('password', 'pa55word\n')
    const kafka = config(`  sasl:\n    mechanism: plain\n    username: floe\n    passwordFile: ${passwordFile}\n`).kafka
    assert.deepEqual(kafka.sasl, { mechanism: 'plain', username: 'floe', password: 'pa55word' })
  })

  test('read an OAUTHBEARER client secret from the environment or its file', () => {
    const oauth =
      '  sasl:\n    mechanism: oauthbearer\n    tokenEndpointUrl: https://idp.example/token\n    clientId: floe\n'
    const fromEnv = config(oauth, { FLOE_KAFKA__SASL__CLIENT_SECRET: 'sh' }).kafka.sasl
    assert.deepEqual(fromEnv, {
      mechanism: 'oauthbearer',
      tokenEndpointUrl: 'https://idp.example/token',
      clientId: 'floe',
      clientSecret: 'sh',
    })
    const secretFile = file('client-secret', 'from-file')
    const fromFile = config(`${oauth}    clientSecretFile: ${secretFile}\n    scope: kafka\n`).kafka.sasl
    assert.equal(fromFile?.mechanism === 'oauthbearer' && fromFile.clientSecret, 'from-file')
    assert.equal(fromFile?.mechanism === 'oauthbearer' && fromFile.scope, 'kafka')
  })

  const refusals: [string, string, NodeJS.ProcessEnv, RegExp][] = [
    [
      'a SASL password written in the file',
      '  sasl: {mechanism: scram-sha-512, username: floe, password: hunter2}\n',
      {},
      /kafka\.sasl\.password: a secret is not written in the configuration file: set FLOE_KAFKA__SASL__PASSWORD or sasl\.passwordFile/,
    ],
    [
      'a client secret written in the file',
      '  sasl: {mechanism: oauthbearer, tokenEndpointUrl: "https://idp/t", clientId: c, clientSecret: s}\n',
      {},
      /kafka\.sasl\.clientSecret: a secret is not written/,
    ],
    [
      'a key PEM written in the file',
      '  ssl: {keyPem: "k", certPem: "c"}\n',
      {},
      /kafka\.ssl\.keyPem: a secret is not written/,
    ],
    [
      'SASL without its password',
      '  sasl: {mechanism: plain, username: floe}\n',
      {},
      /kafka\.sasl\.password: set one of passwordFile or FLOE_KAFKA__SASL__PASSWORD/,
    ],
    [
      'a password both from a file and the environment',
      '  sasl: {mechanism: plain, username: floe, passwordFile: /x}\n',
      { FLOE_KAFKA__SASL__PASSWORD: 'p' },
      /set one of passwordFile/,
    ],
    [
      'an unknown mechanism',
      '  sasl: {mechanism: gssapi, username: floe}\n',
      { FLOE_KAFKA__SASL__PASSWORD: 'p' },
      /kafka\.sasl\.mechanism/,
    ],
    [
      'a certificate without its key',
      '  ssl: {certFile: /c.pem}\n',
      {},
      /kafka\.ssl\.keyFile: a client certificate needs its key/,
    ],
    [
      'a missing CA file',
      '  ssl: {caFile: /no/such/ca.pem}\n',
      {},
      /kafka\.ssl\.caFile: \/no\/such\/ca\.pem: no such file/,
    ],
    [
      'a missing password file',
      '  sasl: {mechanism: plain, username: floe, passwordFile: /no/such/password}\n',
      {},
      /kafka\.sasl\.passwordFile: \/no\/such\/password: no such file/,
    ],
  ]
  for (const [what, kafka, env, expected] of refusals) {
    test(`refuse ${what}, naming the key`, () => {
      const message = refusal(kafka, env)
      assert.match(message, expected)
      assert.doesNotMatch(message, /hunter2/)
    })
  }

  test('never print a password, a client secret or a private key, and shorten certificates', () => {
    const key = file('printed.key', keyPem)
    const printed = JSON.stringify(
      redact(
        config(
          `  ssl:\n    keyFile: ${key}\n    certPem: "${certPem.replaceAll('\n', '\\n')}"\n  sasl: {mechanism: plain, username: floe}\n`,
          {
            FLOE_KAFKA__SASL__PASSWORD: 'hunter2',
          },
        ),
      ),
    )
    assert.doesNotMatch(printed, /hunter2|SECRETKEY|CLIENT/)
    assert.match(printed, /"cert":"\(CERTIFICATE PEM\)"/)
  })

  test('the documented SASL_SSL example is a valid configuration', () => {
    const example = join(import.meta.dirname, '..', '..', 'docs', 'examples', 'floe.kafka-sasl-ssl.yaml')
    const parsed = configSchema.safeParse(parse(readFileSync(example, 'utf8')))
    assert.ok(parsed.success, JSON.stringify(parsed.error?.issues))
  })
})
