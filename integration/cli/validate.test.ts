// `floe validate` against the real stack: it reaches each server the file names and says, one
// line per check, what is wrong — a missing server is reported as such, not as a stack trace.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { KafkaAdmin } from '../../shared/kafka/index.ts'
import { endpoints, stackConfigYaml, uniqueName } from '../harness.ts'

const run = promisify(execFile)
const floe = join(import.meta.dirname, '..', '..', 'bin', 'floe')

async function validate(config: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(floe, ['validate', '--config', config], { env: { ...process.env, ...env } })
    return { code: 0, out: stdout + stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, out: e.stdout + e.stderr }
  }
}

describe('floe validate', () => {
  let dir: string
  let config: string
  const topic = uniqueName('it-validate')
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-validate-'))
    config = join(dir, 'floe.yaml')
    await writeFile(
      config,
      `${stackConfigYaml('it-validate')}ingestion:
  wal:
    dir: ${join(dir, 'wal')}
datasets:
  - name: events
    topic: ${topic}
    table: ${uniqueName('it_ns')}.events
    customMapping: {event_id: id}
    schema: {event_id: string}
    badRecords: skip
`,
    )
    const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'it' })
    await admin.ensureTopic(topic, 2)
    await admin.close()
  })
  after(() => rm(dir, { recursive: true, force: true }))

  test('passes when every server answers and says what will be created', async () => {
    const { code, out } = await validate(config)
    assert.equal(code, 0, out)
    assert.match(out, /ok {3}kafka .*: reachable/)
    assert.match(out, new RegExp(`ok {3}dataset events: topic ${topic}: 2 partition\\(s\\)`))
    assert.match(out, /table .*: will be created on first run/)
  })

  test('names each server that does not answer, in one line, without a stack trace', async () => {
    const { code, out } = await validate(config, {
      FLOE_KAFKA__BROKERS: '127.0.0.1:1',
      FLOE_CATALOG__URI: 'http://127.0.0.1:2',
    })
    assert.equal(code, 1)
    assert.match(out, /FAIL kafka 127\.0\.0\.1:1: connection refused/)
    assert.match(out, /FAIL catalog http:\/\/127\.0\.0\.1:2: connection refused/)
    assert.doesNotMatch(out, /\n\s+at /)
  })

  test('floe run does not start without Kafka or the catalog, and says which and why', async () => {
    for (const [env, expected] of [
      [{ FLOE_KAFKA__BROKERS: '127.0.0.1:1' }, /^floe run: kafka 127\.0\.0\.1:1: connection refused$/m],
      [{ FLOE_CATALOG__URI: 'http://127.0.0.1:2' }, /^floe run: catalog http:\/\/127\.0\.0\.1:2: connection refused$/m],
    ] as const) {
      const result = await run(floe, ['run', '--config', config], {
        env: { ...process.env, ...env, FLOE_METRICS__PORT: '0' },
      }).then(
        () => ({ code: 0, err: '' }),
        (error: { code: number; stderr: string }) => ({ code: error.code, err: error.stderr }),
      )
      assert.equal(result.code, 1)
      assert.match(result.err, expected)
    }
  })

  test('refuses a bad file before reaching anything, naming the key', async () => {
    const bad = join(dir, 'bad.yaml')
    await writeFile(bad, 'kafka:\n  brokers: []\n')
    const { code, out } = await validate(bad)
    assert.equal(code, 2)
    assert.match(out, /floe validate: .*bad\.yaml: /)
    assert.equal(out.trim().split('\n').length, 1)
  })
})
