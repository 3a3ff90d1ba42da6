// Kafka over TLS and SASL on the real broker (`stack up --kafka-security sasl_ssl`): PLAIN,
// SCRAM-SHA-256/512 and OAUTHBEARER over TLS with a client certificate, through Floe's own client
// seam; a wrong password and a CA that did not sign the broker's certificate named as such by
// `floe validate`, and a wrong password stopping `floe run` at once instead of retrying forever.
// The exactly-once fleet run over SASL_SSL is in ./exactly-once.test.ts.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { KafkaAdmin, type KafkaConnection, KafkaProducer, type KafkaSasl } from '../../shared/kafka/index.ts'
import { endpoints, uniqueName, withoutSaslSsl } from '../harness.ts'
import type { Endpoints } from '../stack/index.ts'

const run = promisify(execFile)
const floe = join(import.meta.dirname, '..', '..', 'bin', 'floe')

type Secure = NonNullable<Endpoints['kafka']['secure']>
const secure = (): Secure => endpoints().kafka.secure as Secure

function connection(sasl: KafkaSasl, ca = secure().caFile): KafkaConnection {
  const read = (file: string) => readFileSync(file, 'utf8')
  return {
    brokers: secure().brokers,
    clientId: 'floe-it-security',
    ssl: { ca: read(ca), cert: read(secure().certFile), key: read(secure().keyFile) },
    sasl,
  }
}

/** Creates a topic, writes to it and reads its end offset back, all over `connection`. */
async function roundTrip(over: KafkaConnection): Promise<void> {
  const admin = new KafkaAdmin(over)
  const producer = new KafkaProducer(over)
  try {
    const topic = uniqueName('it-secure')
    assert.deepEqual(await admin.ensureTopic(topic, 1), { created: true, partitions: 1 })
    await producer.send([{ topic, key: Buffer.from('k'), value: Buffer.from('{"id":1}') }])
    assert.deepEqual(await admin.endOffsets(topic, [0]), new Map([[0, 1n]]))
    await admin.deleteTopic(topic)
  } finally {
    await producer.close()
    await admin.close()
  }
}

/** A configuration whose Kafka section reaches the SASL_SSL listener with SCRAM-SHA-512, trusting `ca`. */
function secureConfig(ca: string, wal: string): string {
  return `kafka:
  brokers: [${secure().bootstrap}]
  controlTopic: ${uniqueName('it-secure-control')}
  ssl:
    caFile: ${ca}
    certFile: ${secure().certFile}
    keyFile: ${secure().keyFile}
  sasl:
    mechanism: scram-sha-512
    username: ${secure().users.scram.username}
catalog:
  type: rest
  uri: ${endpoints().rest.uri}
ingestion:
  wal:
    dir: ${wal}
datasets:
  - name: events
    topic: ${uniqueName('it-secure-events')}
    table: ${uniqueName('it_ns')}.events
    customMapping: {id: id}
    schema: {id: string}
    badRecords: skip
`
}

async function floeCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(floe, args, {
      env: { ...process.env, FLOE_METRICS__PORT: '0', ...env },
      timeout: timeoutMs,
    })
    return { code: 0, out: stdout + stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, out: e.stdout + e.stderr }
  }
}

describe('Kafka over TLS and SASL', { skip: withoutSaslSsl() }, () => {
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-it-kafka-security-'))
  })
  after(() => rm(dir, { recursive: true, force: true }))

  for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
    test(`${mechanism} over TLS with a client certificate creates, writes and reads`, async () => {
      const user = mechanism === 'plain' ? secure().users.plain : secure().users.scram
      await roundTrip(connection({ mechanism, ...user }))
    })
  }

  test('OAUTHBEARER takes its token from a client-credentials token endpoint, once for every client', async (t) => {
    // The broker checks tokens with Kafka's unsecured-JWT validator: an unsigned JWT is enough here.
    const asked: string[] = []
    const server = createServer((request, response) => {
      asked.push(request.headers.authorization ?? '')
      const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
      const now = Math.floor(Date.now() / 1000)
      const token = `${b64({ alg: 'none' })}.${b64({ sub: 'floe', iat: now, exp: now + 3600 })}.`
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ access_token: token, token_type: 'bearer', expires_in: 3600 }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    t.after(() => server.close())
    const tokenEndpointUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`
    await roundTrip(connection({ mechanism: 'oauthbearer', tokenEndpointUrl, clientId: 'floe', clientSecret: 'shh' }))
    assert.deepEqual(asked, [`Basic ${Buffer.from('floe:shh').toString('base64')}`])
  })

  test('a wrong password: validate says authentication failed, run stops with it instead of retrying', async () => {
    const config = join(dir, 'wrong-password.yaml')
    await writeFile(config, secureConfig(secure().caFile, join(dir, 'wal-wrong-password')))
    const env = { FLOE_KAFKA__SASL__PASSWORD: 'not-the-password' }
    const validated = await floeCommand(['validate', '--config', config], env)
    assert.equal(validated.code, 1, validated.out)
    assert.match(validated.out, /^FAIL kafka 127\.0\.0\.1:\d+: authentication failed: /m)
    assert.doesNotMatch(validated.out, /not-the-password|\n\s+at /)

    const started = Date.now()
    const ran = await floeCommand(['run', '--config', config], env)
    assert.equal(ran.code, 1, ran.out)
    assert.match(ran.out, /^floe run: kafka 127\.0\.0\.1:\d+: authentication failed: /m)
    assert.match(ran.out, /"code":"KAFKA_AUTHENTICATION_FAILED"/)
    assert.ok(Date.now() - started < 60_000, `stopped after ${Date.now() - started} ms`)
    assert.doesNotMatch(ran.out, /not-the-password/)
  })

  test("a CA that did not sign the broker's certificate: validate says the TLS handshake failed", async () => {
    const config = join(dir, 'wrong-ca.yaml')
    await writeFile(config, secureConfig(secure().otherCaFile, join(dir, 'wal-wrong-ca')))
    const env = { FLOE_KAFKA__SASL__PASSWORD: secure().users.scram.password }
    const validated = await floeCommand(['validate', '--config', config], env)
    assert.equal(validated.code, 1, validated.out)
    assert.match(validated.out, /^FAIL kafka 127\.0\.0\.1:\d+: TLS handshake failed: /m)

    const right = join(dir, 'right-ca.yaml')
    await writeFile(right, secureConfig(secure().caFile, join(dir, 'wal-right-ca')))
    const good = await floeCommand(['validate', '--config', right], env)
    assert.match(good.out, /^ok {3}kafka 127\.0\.0\.1:\d+: reachable, TLS, SASL scram-sha-512 authenticated$/m)
  })
})
