// `floe validate` against the real stack: it reaches each server the file names and says, one
// line per check, what is wrong — a missing server is reported as such, not as a stack trace.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { openCatalog } from '../../shared/catalog/index.ts'
import type { Schema } from '../../shared/iceberg/index.ts'
import { KafkaAdmin } from '../../shared/kafka/index.ts'
import { azuriteLocation } from '../catalog/probe.ts'
import { endpoints, uniqueName } from '../harness.ts'

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
  const fileFor = (datasets: string, kafkaExtra = '') => `kafka:
  brokers: [${endpoints().kafka.bootstrap}]
${kafkaExtra}catalog:
  type: rest
  uri: ${endpoints().rest.uri}
ingestion:
  wal:
    dir: ${join(dir, 'wal')}
datasets:
${datasets}`
  const dataset = (table: string, extra = '') => `  - name: events
    topic: ${topic}
    table: ${table}
    customMapping: {event_id: id}
    schema: {event_id: string}
    badRecords: skip
${extra}`
  async function writeConfig(name: string, text: string): Promise<string> {
    const path = join(dir, name)
    await writeFile(path, text)
    return path
  }
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-validate-'))
    config = await writeConfig('floe.yaml', fileFor(dataset(`${uniqueName('it_ns')}.events`)))
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

  test('compares an existing table with the configured schema, as floe run does at start', async () => {
    const namespace = uniqueName('it_ns_schema')
    const catalog = await openCatalog({ type: 'rest', uri: endpoints().rest.uri })
    await catalog.createNamespace([namespace])
    const schema = (type: 'string' | 'long'): Schema => ({
      type: 'struct',
      'schema-id': 0,
      fields: [{ id: 1, name: 'event_id', required: false, type }],
    })
    await catalog.createTable({ namespace: [namespace], name: 'same' }, schema('string'), { fields: [] })
    await catalog.createTable({ namespace: [namespace], name: 'other' }, schema('long'), { fields: [] })
    await catalog.close()

    const same = await validate(await writeConfig('same.yaml', fileFor(dataset(`${namespace}.same`))))
    assert.equal(same.code, 0, same.out)
    assert.match(same.out, /ok {3}dataset events: table .*\.same: exists, its schema has every configured column/)

    const other = await validate(await writeConfig('other.yaml', fileFor(dataset(`${namespace}.other`))))
    assert.equal(other.code, 1, other.out)
    assert.match(
      other.out,
      /FAIL dataset events: table .*\.other: datasets\.events: column event_id is "long" in table .*, "string" in the configuration/,
    )

    // schemaEvolution: addColumns: what the first worker will add, without adding it
    const grown = `  - name: events
    topic: ${topic}
    table: ${namespace}.same
    customMapping: {event_id: id, note: note}
    schema: {event_id: string, note: string}
    badRecords: skip
    schemaEvolution: addColumns
`
    const evolving = await validate(await writeConfig('grown.yaml', fileFor(grown)))
    assert.equal(evolving.code, 0, evolving.out)
    assert.match(
      evolving.out,
      /ok {3}dataset events: table .*\.same: exists; the first worker adds column note \(schemaEvolution: addColumns\)/,
    )
    const unchanged = await openCatalog({ type: 'rest', uri: endpoints().rest.uri })
    const table = await unchanged.loadTable({ namespace: [namespace], name: 'same' })
    await unchanged.close()
    assert.equal(table.metadata.schemas.length, 1, 'validate changed nothing')
  })

  test("reaches a dataset's own storage, and names it when it does not answer", async () => {
    const { azurite } = endpoints()
    const ownStorage = `    storage:
      type: azure
      azure: {container: ${azurite.container}}
    tableProperties:
      write.data.path: ${azuriteLocation(`${uniqueName('it-validate')}/data`)}
`
    // The dataset's own connection string, from the environment as a secret must come.
    const secret = (connectionString: string) => ({
      FLOE_DATASETS__EVENTS__STORAGE__AZURE__CONNECTION_STRING: connectionString,
    })
    const table = `${uniqueName('it_ns')}.events`
    const file = await writeConfig('azure.yaml', fileFor(dataset(table, ownStorage)))
    const good = await validate(file, secret(azurite.connectionString))
    assert.equal(good.code, 0, good.out)
    assert.match(good.out, /ok {3}dataset events: storage azure \(its own\) abfs:\/\/.*: reachable/)

    const dead = azurite.connectionString.replace(azurite.blobEndpoint, 'http://127.0.0.1:3/devstoreaccount1')
    const bad = await validate(file, secret(dead))
    assert.equal(bad.code, 1, bad.out)
    assert.match(bad.out, /FAIL dataset events: storage azure \(its own\) abfs:\/\/\S+: (connection refused|no answer)/)
    assert.doesNotMatch(bad.out, /\n\s+at /)
  })

  test('connects to Kafka as floe run does: SASL the broker does not offer is a failure', async () => {
    const sasl = await writeConfig(
      'sasl.yaml',
      fileFor(dataset(`${uniqueName('it_ns')}.events`), '  sasl: {mechanism: scram-sha-512, username: floe}\n'),
    )
    // The password from the environment: one written in the file is refused before anything is reached.
    const { code, out } = await validate(sasl, { FLOE_KAFKA__SASL__PASSWORD: 'secret' })
    assert.equal(code, 1, out)
    assert.match(out, /FAIL kafka /)
    assert.doesNotMatch(out, /secret/)
  })

  test('a routed dataset: validate says where the route sends records and where progress is kept', async () => {
    const ledger = `${uniqueName('it_ns')}.ledger`
    const routed = await writeConfig(
      'routed.yaml',
      fileFor(dataset(ledger, "    route: {field: region, table: 'ns.events_{value}', fallback: ns.other}\n")),
    )
    const { out } = await validate(routed)
    assert.match(
      out,
      new RegExp(
        `ok {3}dataset events: route: by region into ns\\.events_\\{value\\}, else ns\\.other; progress in ${ledger.replace('.', '\\.')}; at most 100 tables open per worker`,
      ),
    )
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
