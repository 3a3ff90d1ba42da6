// A mapping column added to the configuration during a rolling change, on the real stack: a worker
// still running the old configuration goes on, two workers started with the new one
// (schemaEvolution: addColumns) add the column to the table together, and every event lands
// exactly once, the new column filled where a new worker wrote the row and null before it.
import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { describe, test } from 'node:test'
import { verifyTable } from '../harness.ts'
import { assertEveryIdOnce, Fleet } from './fleet.ts'

const minute = 60_000

/** The fleet's configuration with a `note` column mapped from the event's `note`. */
function withNote(config: string): string {
  const added = config
    .replace('      amount: amount\n', '      amount: amount\n      note: note\n')
    .replace('      amount: double\n', '      amount: double\n      note: string\n')
    .replace('    partitionSpec: [day(ts)]\n', '    partitionSpec: [day(ts)]\n    schemaEvolution: addColumns\n')
  assert.notEqual(added, config)
  return added
}

interface NoteRow {
  id: string
  note: string | null
}

describe('schema evolution: addColumns', () => {
  test('workers with a new column add it to the table while an old one runs on; every event once', async (t) => {
    const fleet = await Fleet.create(t, { commitIntervalSeconds: 2 })
    await fleet.start()
    const event = (id: string, i: number) => ({
      id,
      ts: new Date(Date.UTC(2026, 10, 28 + (i % 3))).toISOString(),
      user: { id: i },
      kind: 'click',
      amount: i / 10,
      note: `note-${i}`,
    })
    await fleet.produce(300, { event })
    await fleet.nextCommit(minute)

    // the old worker has read its configuration; the next ones read the new one
    await writeFile(fleet.config, withNote(await readFile(fleet.config, 'utf8')))
    const [added, second] = await Promise.all([fleet.start(), fleet.start()])
    await fleet.waitFor(
      () =>
        [added, second].some((w) =>
          w?.logged('the table evolved to the configured schema (schemaEvolution: addColumns)'),
        ),
      minute,
      'the schema change',
    )
    // the new workers hold partitions before the next events: rows they write have the column
    await fleet.waitFor(
      () => [added, second].every((w) => w?.logged('partition synced')),
      2 * minute,
      'partitions on the new workers',
    )
    await fleet.produce(300, { event })
    assertEveryIdOnce(fleet, await fleet.waitSettled(3 * minute))

    const evolved = [added, second].filter((w) =>
      w?.logged('the table evolved to the configured schema (schemaEvolution: addColumns)'),
    )
    assert.equal(evolved.length, 1, 'one of the two new workers changed the schema')
    const table = await verifyTable(fleet.table, { rows: 1000 })
    assert.match(table.schema, /note: optional string/)
    const rows = (table.sample ?? []) as unknown as NoteRow[]
    const filled = rows.filter((row) => row.note !== null)
    // a note is the event's own, never another's
    for (const row of filled) assert.equal(row.note, `note-${fleet.ids.indexOf(row.id)}`)
    assert.ok(filled.length > 0, 'rows written by the new workers have the note')
    t.diagnostic(`${rows.length} rows, ${filled.length} with a note; schema ${table.schema.replace(/\n/g, ' ')}`)
  })
})
