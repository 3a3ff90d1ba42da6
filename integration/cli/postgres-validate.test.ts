// `floe validate` and `floe run` with the SQL catalog on the stack's PostgreSQL: a right password
// passes; a wrong password, a server that does not answer and a database that does not exist are
// each named in one line, without a stack trace and without the password.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { KafkaAdmin } from '../../shared/kafka/index.ts'
import { endpoints, uniqueName, withoutPostgres } from '../harness.ts'

const run = promisify(execFile)
const floe = join(import.meta.dirname, '..', '..', 'bin', 'floe')

async function floeCommand(
  command: 'validate' | 'run',
  config: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(floe, [command, '--config', config], {
      env: { ...process.env, FLOE_METRICS__PORT: '0', ...env },
      timeout: 120_000,
    })
    return { code: 0, out: stdout + stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, out: e.stdout + e.stderr }
  }
}

/** A port nothing listens on: one the kernel just gave and took back. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('floe validate on the PostgreSQL SQL catalog', { skip: withoutPostgres() }, () => {
  let dir: string
  let config: string
  const topic = uniqueName('it-pg-validate')
  const server = () => endpoints().postgres!
  const uriWith = (change: { port?: number; database?: string }) =>
    `postgresql://${server().user}@127.0.0.1:${change.port ?? server().port}/${change.database ?? server().database}`

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-pg-validate-'))
    config = join(dir, 'floe.yaml')
    await writeFile(
      config,
      `kafka:
  brokers: [${endpoints().kafka.bootstrap}]
  groupPrefix: ${uniqueName('floe')}
  controlTopic: ${uniqueName('it-pg-control')}
catalog:
  type: sql
  uri: ${server().uri}
  warehouse: file://${join(dir, 'warehouse')}
  connectTimeoutSeconds: 5
ingestion:
  wal:
    dir: ${join(dir, 'wal')}
datasets:
  - name: events
    topic: ${topic}
    table: ${uniqueName('it_pg')}.events
    customMapping: {event_id: id}
    schema: {event_id: string}
    badRecords: skip
`,
    )
    const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'it' })
    await admin.ensureTopic(topic, 1)
    await admin.close()
  })
  after(() => rm(dir, { recursive: true, force: true }))

  test('passes with the right password from FLOE_CATALOG__PASSWORD', async () => {
    const { code, out } = await floeCommand('validate', config, { FLOE_CATALOG__PASSWORD: server().password })
    assert.equal(code, 0, out)
    assert.match(out, /ok {3}catalog postgresql:\/\/floe@127\.0\.0\.1:\d+\/floe: reachable \(sql postgresql /)
    assert.doesNotMatch(out, new RegExp(server().password))
  })

  test('names a wrong password, an unreachable server and a missing database, one line each', async () => {
    const wrong = 'not-the-password'
    const port = await closedPort()
    for (const [env, expected] of [
      [
        { FLOE_CATALOG__PASSWORD: wrong },
        /^.*FAIL catalog postgresql:\S+: password authentication failed for user "floe"$/m,
      ],
      [
        { FLOE_CATALOG__PASSWORD: server().password, FLOE_CATALOG__URI: uriWith({ port }) },
        new RegExp(`^.*FAIL catalog postgresql://floe@127\\.0\\.0\\.1:${port}/floe: connection refused$`, 'm'),
      ],
      [
        { FLOE_CATALOG__PASSWORD: server().password, FLOE_CATALOG__URI: uriWith({ database: 'no_such_db' }) },
        /^.*FAIL catalog postgresql:\S+\/no_such_db: database "no_such_db" does not exist$/m,
      ],
    ] as const) {
      const { code, out } = await floeCommand('validate', config, env)
      assert.equal(code, 1, out)
      assert.match(out, expected)
      assert.doesNotMatch(out, /\n\s+at /, 'no stack trace')
      assert.doesNotMatch(out, new RegExp(`${wrong}|${server().password}`), 'no password')
    }
  })

  test('floe run stops at once on a wrong password, and says so', async () => {
    const { code, out } = await floeCommand('run', config, { FLOE_CATALOG__PASSWORD: 'not-the-password' })
    assert.equal(code, 1, out)
    assert.match(out, /^floe run: catalog postgresql:\S+: password authentication failed for user "floe"$/m)
  })
})
