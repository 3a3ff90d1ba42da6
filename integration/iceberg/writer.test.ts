// Floe's Iceberg writer, proven by an independent reader: tables written through the REST catalog
// (local warehouse) and through the SQL catalog (Azurite), then read whole by pyiceberg.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { type Catalog, openCatalog, type TableIdentifier } from '../../shared/catalog/index.ts'
import { FloeError } from '../../shared/errors.ts'
import { appendFiles } from '../../shared/iceberg/commit/index.ts'
import type { Schema, StructValue } from '../../shared/iceberg/index.ts'
import { RoutedStorage } from '../../shared/storage/index.ts'
import { endpoints, uniqueName, verifyTable } from '../harness.ts'
import { appendRows, writeDataFiles } from './table-writer.ts'

const run = promisify(execFile)

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'string' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'user_id', required: false, type: 'long' },
    { id: 4, name: 'kind', required: false, type: 'string' },
    { id: 5, name: 'amount', required: false, type: 'double' },
    { id: 6, name: 'price', required: false, type: 'decimal(10, 2)' },
    { id: 7, name: 'day', required: false, type: 'date' },
    { id: 8, name: 'flag', required: false, type: 'boolean' },
    {
      id: 9,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 20, element: 'string', 'element-required': false },
    },
    {
      id: 10,
      name: 'attrs',
      required: false,
      type: { type: 'map', 'key-id': 21, key: 'string', 'value-id': 22, value: 'long', 'value-required': false },
    },
    {
      id: 11,
      name: 'user',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 23, name: 'name', required: false, type: 'string' },
          { id: 24, name: 'age', required: false, type: 'int' },
        ],
      },
    },
    { id: 12, name: 'uid', required: false, type: 'uuid' },
    { id: 13, name: 'small', required: false, type: 'int' },
    { id: 14, name: 'score', required: false, type: 'float' },
    { id: 15, name: 'at', required: false, type: 'timestamp' },
    { id: 16, name: 'payload', required: false, type: 'binary' },
  ],
}

const spec = {
  fields: [
    { 'source-id': 2, name: 'ts_day', transform: 'day' },
    { 'source-id': 4, name: 'kind', transform: 'identity' },
  ],
}

const dayMicros = 86_400_000_000n
const start = 1_764_460_800_000_000n // 2025-11-30T00:00:00Z in microseconds

function uuidBytes(i: number): Uint8Array {
  return Uint8Array.from(
    Buffer.from(randomUUID().replaceAll('-', '').slice(0, 24) + i.toString(16).padStart(8, '0'), 'hex'),
  )
}

function rows(from: number, count: number): StructValue[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k
    return {
      id: `event-${i}`,
      ts: start + BigInt(i % 3) * dayMicros + BigInt(i) * 1000n,
      user_id: BigInt(i) * 3_000_000_000n,
      kind: ['click', 'view', 'buy'][i % 3] ?? null,
      amount: i % 10 === 0 ? null : i * 1.5,
      price: BigInt(i * 101),
      day: 20_000 + (i % 7),
      flag: i % 2 === 0,
      tags: i % 4 === 0 ? null : [`t${i % 5}`, `u${i % 3}`],
      attrs: new Map([[`k${i % 2}`, BigInt(i)]]),
      user: { name: `user ${i}`, age: 20 + (i % 50) },
      uid: uuidBytes(i),
      small: i,
      score: i / 4,
      at: start + BigInt(i),
      payload: Uint8Array.from([i % 256, 0, 255]),
    }
  })
}

async function idsFile(dir: string, ids: string[]): Promise<string> {
  const file = join(dir, `${randomUUID()}.ids`)
  await writeFile(file, `${ids.join('\n')}\n`)
  return file
}

describe('the Iceberg writer through the REST catalog on a local warehouse', () => {
  let catalog: Catalog
  let scratch: string
  const storage = new RoutedStorage({})
  before(async () => {
    catalog = await openCatalog({ type: 'rest', uri: endpoints().rest.uri })
    scratch = await mkdtemp(join(tmpdir(), 'floe-it-writer-'))
  })
  after(async () => {
    await catalog.close()
    await rm(scratch, { recursive: true, force: true })
  })

  test('writes every type, partitioned, in two commits that pyiceberg reads whole', async () => {
    const table: TableIdentifier = { namespace: [uniqueName('it_writer')], name: 'events' }
    await catalog.createNamespace(table.namespace)
    await catalog.createTable(table, schema, spec)
    const first = await appendRows(catalog, storage, table, rows(0, 300), { 'floe.offsets.g': '{"t":{"0":300}}' })
    const second = await appendRows(catalog, storage, table, rows(300, 200))
    assert.equal(first.attempts, 1)
    assert.equal(second.snapshot['parent-snapshot-id'], first.snapshot['snapshot-id'])

    const expected = rows(0, 500).map((r) => r.id as string)
    const report = await verifyTable(`${table.namespace[0]}.events`, {
      idsFile: await idsFile(scratch, expected),
      rows: 3,
    })
    assert.equal(report.error, undefined)
    assert.equal(report.rows, 500)
    assert.deepEqual(report.ids && { ...report.ids, missingSample: undefined, duplicatedSample: undefined }, {
      expected: 500,
      found: 500,
      missing: 0,
      duplicated: 0,
      unexpected: 0,
      missingSample: undefined,
      duplicatedSample: undefined,
    })
    // 3 days x 3 kinds, but day and kind move together (i % 3): 3 partitions per commit.
    assert.equal(report.dataFiles, 6)
    assert.equal(report.filesWithBounds, 6)
    const [latest] = report.snapshots.slice(-1)
    assert.equal(latest?.summary['total-records'], '500')
    assert.equal(latest?.summary['added-records'], '200')
    assert.ok(latest?.summary['floe.commit-id'])
    assert.equal(report.snapshots[0]?.summary['floe.offsets.g'], '{"t":{"0":300}}')
  })

  test('returns the values it wrote, and a filter on a partition column prunes files', async () => {
    const table: TableIdentifier = { namespace: [uniqueName('it_values')], name: 'events' }
    await catalog.createNamespace(table.namespace)
    await catalog.createTable(table, schema, spec)
    await appendRows(catalog, storage, table, rows(0, 30))
    const name = `${table.namespace[0]}.events`
    const { stdout } = await run(endpoints().python, [
      join(import.meta.dirname, 'read_rows.py'),
      '--uri',
      endpoints().rest.uri,
      name,
    ])
    const read = JSON.parse(stdout) as Record<string, unknown>[]
    const byId = new Map(read.map((r) => [r.id, r]))
    const row7 = byId.get('event-7')
    assert.deepEqual(row7, {
      id: 'event-7',
      ts: '2025-12-01T00:00:00.007000+00:00',
      user_id: 21_000_000_000,
      kind: 'view',
      amount: 10.5,
      price: '7.07',
      day: new Date(20_000 * 86_400_000).toISOString().slice(0, 10),
      flag: false,
      tags: ['t2', 'u1'],
      attrs: [['k1', 7]],
      user: { name: 'user 7', age: 27 },
      uid: (row7 as { uid: string }).uid,
      small: 7,
      score: 1.75,
      at: '2025-11-30T00:00:00.000007',
      payload: '0700ff',
    })
    assert.equal(byId.get('event-0')?.amount, null)
    assert.equal(byId.get('event-0')?.tags, null)

    const pruned = await verifyTable(name, { filter: "kind = 'buy'" })
    assert.equal(pruned.rows, 10)
    assert.equal(pruned.dataFiles, 3)
    assert.equal(pruned.files, 1, 'the identity partition prunes two of three files')
    const byDay = await verifyTable(name, { filter: "ts >= '2025-12-02T00:00:00+00:00'" })
    assert.equal(byDay.files, 1, 'the day partition prunes two of three files')
    assert.equal(byDay.rows, 10)
  })

  test('keeps rows pyiceberg appends between two Floe commits', async () => {
    const table: TableIdentifier = { namespace: [uniqueName('it_mixed')], name: 'events' }
    await catalog.createNamespace(table.namespace)
    await catalog.createTable(table, schema, spec)
    await appendRows(catalog, storage, table, rows(0, 40))
    const name = `${table.namespace[0]}.events`
    await run(endpoints().python, [
      join(import.meta.dirname, 'pyiceberg_append.py'),
      '--uri',
      endpoints().rest.uri,
      name,
      'py-',
      '25',
    ])
    await appendRows(catalog, storage, table, rows(40, 35))
    const expected = [...rows(0, 75).map((r) => r.id as string), ...Array.from({ length: 25 }, (_, i) => `py-${i}`)]
    const report = await verifyTable(name, { idsFile: await idsFile(scratch, expected) })
    assert.equal(report.rows, 100)
    assert.equal(report.ids?.missing, 0)
    assert.equal(report.ids?.duplicated, 0)
    assert.equal(report.snapshots.length, 3)
    assert.equal(report.snapshots.at(-1)?.summary['total-records'], '100')
  })

  test('merges small manifests once a table holds more than commit.manifest.min-count-to-merge', async () => {
    const table: TableIdentifier = { namespace: [uniqueName('it_merge')], name: 'events' }
    await catalog.createNamespace(table.namespace)
    await catalog.createTable(table, schema, spec, { properties: { 'commit.manifest.min-count-to-merge': '3' } })
    for (let commit = 0; commit < 7; commit++) await appendRows(catalog, storage, table, rows(commit * 10, 10))
    const report = await verifyTable(`${table.namespace[0]}.events`, {
      idsFile: await idsFile(
        scratch,
        rows(0, 70).map((r) => r.id as string),
      ),
    })
    assert.equal(report.rows, 70)
    assert.equal(report.ids?.duplicated, 0)
    assert.equal(report.snapshots.length, 7)
    // Without merging the seventh snapshot would list seven manifests.
    assert.ok(report.manifests < 7, `manifests: ${report.manifests}`)
  })

  test('never commits the same files twice when the commit outcome was unknown', async () => {
    const table: TableIdentifier = { namespace: [uniqueName('it_unknown')], name: 'events' }
    await catalog.createNamespace(table.namespace)
    await catalog.createTable(table, schema, spec)
    const { metadata } = await catalog.loadTable(table)
    const files = await writeDataFiles(storage, metadata, rows(0, 12))
    // The catalog's first commit lands, but the answer is lost as if the connection dropped.
    let calls = 0
    const flaky = new Proxy(catalog, {
      get(target, property) {
        if (property === 'commitTable') {
          return async (...args: Parameters<Catalog['commitTable']>) => {
            calls++
            const committed = await target.commitTable(...args)
            if (calls === 1) throw new FloeError('COMMIT_STATE_UNKNOWN', 'connection reset after the request was sent')
            return committed
          }
        }
        const value = Reflect.get(target, property, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const result = await appendFiles({
      catalog: flaky,
      storage,
      table,
      commitId: randomUUID(),
      commitIdKey: 'floe.commit-id',
      content: () => ({ files }),
      retry: { minWaitMs: 1, maxWaitMs: 5 },
    })
    assert.equal(result.foundAfterUnknownOutcome, true)
    assert.equal(calls, 1)
    const report = await verifyTable(`${table.namespace[0]}.events`)
    assert.equal(report.rows, 12)
    assert.equal(report.snapshots.length, 1)
  })
})

describe('the Iceberg writer through the SQL catalog on Azurite', () => {
  test('writes a table whose data and metadata live in Azure Blob, read whole by pyiceberg', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'floe-it-sql-'))
    const { azurite } = endpoints()
    const storage = new RoutedStorage({ azure: { connectionString: azurite.connectionString } })
    const path = join(scratch, 'catalog.db')
    const warehouse = `abfs://${azurite.container}@${azurite.account}.dfs.core.windows.net/${uniqueName('wh')}`
    const catalog = await openCatalog({ type: 'sql', path, name: 'floe', warehouse, storage })
    try {
      const table: TableIdentifier = { namespace: ['analytics'], name: 'events' }
      await catalog.createNamespace(table.namespace)
      await catalog.createTable(table, schema, spec)
      await appendRows(catalog, storage, table, rows(0, 120))
      await appendRows(catalog, storage, table, rows(120, 80))
      const loaded = await catalog.loadTable(table)
      assert.ok(loaded.metadataLocation.startsWith('abfs://'))
      const report = await verifyTable('analytics.events', {
        catalog: 'sql',
        sqlPath: path,
        idsFile: await idsFile(
          scratch,
          rows(0, 200).map((r) => r.id as string),
        ),
      })
      assert.equal(report.error, undefined)
      assert.equal(report.rows, 200)
      assert.equal(report.ids?.missing, 0)
      assert.equal(report.ids?.duplicated, 0)
      assert.equal(report.filesWithBounds, report.dataFiles)
    } finally {
      await catalog.close()
      await rm(scratch, { recursive: true, force: true })
    }
  })
})
