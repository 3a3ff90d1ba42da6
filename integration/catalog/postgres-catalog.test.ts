// Floe's SQL catalog on the stack's PostgreSQL, held against pyiceberg's SqlCatalog on the same
// database: a table Floe makes pyiceberg loads; appends from several processes racing on one
// table all land exactly once through the compare-and-swap (UPDATE ... WHERE metadata_location =
// the one read), none lost; pyiceberg appending between Floe's commits keeps both sides' rows.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { after, before, describe, test } from 'node:test'
import { parseTableIdentifier, SqlCatalog } from '../../shared/catalog/index.ts'
import type { Schema } from '../../shared/iceberg/types.ts'
import { LocalFileStorage } from '../../shared/storage/index.ts'
import { endpoints, uniqueName, type VerifyResult, verifyTable, withoutPostgres } from '../harness.ts'
import { appendRows } from '../iceberg/table-writer.ts'
import { postgresCatalog, pyiceberg } from './probe.ts'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'string' },
    { id: 2, name: 'n', required: false, type: 'long' },
  ],
}

function counts(ids: VerifyResult['ids']): Record<string, number | undefined> {
  return {
    expected: ids?.expected,
    found: ids?.found,
    missing: ids?.missing,
    duplicated: ids?.duplicated,
    unexpected: ids?.unexpected,
  }
}

describe('the SQL catalog on PostgreSQL, shared with pyiceberg', { skip: withoutPostgres() }, () => {
  let dir: string
  let warehouse: string
  let catalog: SqlCatalog
  const storage = new LocalFileStorage()

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-pg-it-'))
    warehouse = `file://${dir}/warehouse`
    const server = endpoints().postgres
    if (!server) throw new Error('no PostgreSQL')
    catalog = await SqlCatalog.open({ name: 'floe', warehouse, storage, postgres: server })
  })
  after(async () => {
    await catalog?.close()
    await rm(dir, { recursive: true, force: true })
  })

  async function newTable(): Promise<string> {
    const namespace = uniqueName('pg')
    await catalog.createNamespace([namespace])
    await catalog.createTable(parseTableIdentifier(`${namespace}.events`), schema, { fields: [] })
    return `${namespace}.events`
  }

  test('makes a table that pyiceberg SqlCatalog on the same database loads with the same schema', async () => {
    const text = await newTable()
    const created = await catalog.loadTable(parseTableIdentifier(text))
    const seen = await pyiceberg('load', { catalog: postgresCatalog('floe'), table: text })
    assert.equal(seen.metadata_location, created.metadataLocation)
    assert.equal(seen.table_uuid, created.metadata['table-uuid'])
    assert.deepEqual(seen.schema.fields, created.metadata.schemas[0]!.fields)
  })

  test('four processes racing appends on one table: every append lands exactly once, none lost', async (t) => {
    const text = await newTable()
    const processes = 4
    const appends = 5
    const rowsEach = 20
    const committers = Array.from({ length: processes }, (_, p) =>
      spawn(
        process.execPath,
        [
          join(import.meta.dirname, 'postgres-appender.ts'),
          text,
          warehouse,
          String(p * appends * rowsEach),
          String(appends),
          String(rowsEach),
        ],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      ),
    )
    try {
      const lines = committers.map((child) => createInterface({ input: child.stdout })[Symbol.asyncIterator]())
      for (const line of lines) assert.equal((await line.next()).value, 'ready')
      for (const child of committers) child.stdin.write('go\n')
      const outcomes: { conflicts: number; commits: string[] }[] = []
      for (const line of lines) outcomes.push(JSON.parse((await line.next()).value as string))
      const conflicts = outcomes.reduce((n, o) => n + o.conflicts, 0)
      assert.ok(conflicts > 0, 'the committers raced: some compare-and-swaps were lost and retried')
      t.diagnostic(`${conflicts} compare-and-swaps lost and retried`)

      const total = processes * appends * rowsEach
      const idsFile = join(dir, `${text}.ids`)
      await writeFile(idsFile, `${Array.from({ length: total }, (_, i) => `id-${i}`).join('\n')}\n`)
      const report = await verifyTable(text, { catalog: 'postgres', idsFile })
      assert.equal(report.error, undefined, report.error)
      assert.deepEqual(counts(report.ids), { expected: total, found: total, missing: 0, duplicated: 0, unexpected: 0 })
      assert.equal(report.rows, total)
      // The history: one snapshot per append, each commit id once, each on top of the one before.
      const commitIds = report.snapshots.map((s) => s.summary['floe.commit-id'])
      assert.deepEqual([...commitIds].sort(), outcomes.flatMap((o) => o.commits).sort())
      const history = (await catalog.loadTable(parseTableIdentifier(text))).metadata.snapshots
      assert.equal(history.length, processes * appends)
      for (const [i, snapshot] of history.entries()) {
        assert.equal(snapshot['parent-snapshot-id'], i === 0 ? undefined : history[i - 1]!['snapshot-id'])
        assert.equal(snapshot['sequence-number'], BigInt(i + 1))
      }
    } finally {
      for (const child of committers) child.kill('SIGKILL')
    }
  })

  test('pyiceberg appends between Floe commits on the same table, and both sides keep their rows', async () => {
    const text = uniqueName('pyside')
    const table = `${text}.made`
    await pyiceberg('create', { catalog: postgresCatalog('floe', { warehouse }), table })
    const identifier = parseTableIdentifier(table)
    await appendRows(
      catalog,
      storage,
      identifier,
      [1n, 2n].map((id) => ({ id, s: `floe-${id}` })),
    )
    await pyiceberg('append', { catalog: postgresCatalog('floe'), table, ids: [3, 4] })
    await appendRows(
      catalog,
      storage,
      identifier,
      [5n].map((id) => ({ id, s: `floe-${id}` })),
    )
    await pyiceberg('append', { catalog: postgresCatalog('floe'), table, ids: [6] })

    const idsFile = join(dir, `${table}.ids`)
    await writeFile(idsFile, '1\n2\n3\n4\n5\n6\n')
    const report = await verifyTable(table, { catalog: 'postgres', idsFile })
    assert.equal(report.error, undefined, report.error)
    assert.deepEqual(counts(report.ids), { expected: 6, found: 6, missing: 0, duplicated: 0, unexpected: 0 })
    assert.equal(report.snapshots.length, 4)
  })
})
