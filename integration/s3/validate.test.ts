// `floe validate` with storage on the stack's S3 server: it reaches the bucket, and names a wrong
// bucket, refused credentials and an unreachable endpoint in one line each, never printing the key.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { KafkaAdmin } from '../../shared/kafka/index.ts'
import { endpoints, uniqueName } from '../harness.ts'
import { s3Endpoints, withoutS3 } from './support.ts'

const run = promisify(execFile)
const floe = join(import.meta.dirname, '..', '..', 'bin', 'floe')

describe('floe validate on S3', { skip: withoutS3() }, () => {
  let dir: string
  const topic = uniqueName('it-validate-s3')
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-validate-s3-'))
    const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'it' })
    await admin.ensureTopic(topic, 1)
    await admin.close()
  })
  after(() => rm(dir, { recursive: true, force: true }))

  /** Runs validate on a SQL catalog whose warehouse is in `bucket` on `endpoint`; the key from the environment. */
  async function validate(
    name: string,
    s3: { bucket?: string; endpoint?: string; secretAccessKey?: string } = {},
  ): Promise<{ code: number; out: string }> {
    const stack = s3Endpoints()
    const bucket = s3.bucket ?? stack.bucket
    const config = join(dir, `${name}.yaml`)
    await writeFile(
      config,
      `kafka:
  brokers: [${endpoints().kafka.bootstrap}]
catalog:
  type: sql
  path: ${join(dir, `${name}.db`)}
  warehouse: s3://${bucket}/${uniqueName('validate')}
storage:
  type: s3
  s3: {bucket: ${bucket}, region: ${stack.region}, endpoint: '${s3.endpoint ?? stack.endpoint}', forcePathStyle: true}
ingestion:
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
    const env = {
      ...process.env,
      FLOE_STORAGE__S3__ACCESS_KEY_ID: stack.accessKeyId,
      FLOE_STORAGE__S3__SECRET_ACCESS_KEY: s3.secretAccessKey ?? stack.secretAccessKey,
    }
    try {
      const { stdout, stderr } = await run(floe, ['validate', '--config', config], { env })
      return { code: 0, out: stdout + stderr }
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string }
      return { code: e.code, out: e.stdout + e.stderr }
    }
  }

  function assertOneLine(out: string, line: RegExp): void {
    const failing = out.split('\n').filter((l) => l.startsWith('FAIL'))
    assert.equal(failing.length, 1, out)
    assert.match(failing[0]!, line)
    assert.doesNotMatch(out, /\n\s+at /, 'no stack trace')
    assert.ok(!out.includes(s3Endpoints().secretAccessKey), 'the secret key is never printed')
  }

  test('reaches the bucket where the tables will go', async () => {
    const { code, out } = await validate('good')
    assert.equal(code, 0, out)
    assert.match(out, /ok {3}dataset events: storage s3 s3:\/\/warehouse\/\S+: reachable/)
  })

  test('names a bucket that does not exist', async () => {
    const { code, out } = await validate('bucket', { bucket: 'no-such-lake' })
    assert.equal(code, 1, out)
    assertOneLine(
      out,
      /^FAIL dataset events: storage s3 s3:\/\/no-such-lake\/\S+: .*bucket no-such-lake does not exist$/,
    )
  })

  test('names refused credentials', async () => {
    const { code, out } = await validate('credentials', { secretAccessKey: 'not-the-secret-key' })
    assert.equal(code, 1, out)
    assertOneLine(out, /^FAIL dataset events: storage s3 \S+: .*S3 refused the credentials \(SignatureDoesNotMatch\)$/)
    assert.ok(!out.includes('not-the-secret-key'))
  })

  test('names an endpoint that does not answer', async () => {
    const { code, out } = await validate('endpoint', { endpoint: 'http://127.0.0.1:4' })
    assert.equal(code, 1, out)
    assertOneLine(out, /^FAIL dataset events: storage s3 \S+: .*connection refused$/)
  })
})
