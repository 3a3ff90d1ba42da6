// Moving a dataset to a new table, as docs/operations.md tells it: stop the workers (they drain,
// and the group's offsets follow the table's), check with `floe status` that the table's offsets
// are the group's, point the dataset at a new table, `floe validate`, start again. The new table
// holds exactly what arrived after the move, once; the old one keeps what it had.
import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { datasetGroup } from '../../cli/servers.ts'
import { loadConfig } from '../../shared/config/index.ts'
import { KafkaAdmin } from '../../shared/kafka/index.ts'
import { Fleet, WorkerProcess } from '../e2e/fleet.ts'
import { endpoints } from '../harness.ts'
import { assertCounts, floeCommand, stop } from './support.ts'

test('a dataset moved to a new table continues there where the old table stopped, nothing twice', async (t) => {
  const fleet = await Fleet.create(t, { partitions: 2 })
  const group = datasetGroup(loadConfig(fleet.config), 'events')
  const before = await fleet.produce(200)
  const first = await fleet.start('w1')
  await assertCounts(fleet, new Map(before.map((id) => [id, 1])), 180_000)
  await stop(first, group)

  // Step 2: the table's offsets are the group's.
  const status = await floeCommand(['status', '--config', fleet.config, '--json'])
  assert.equal(status.code, 0, status.stderr)
  const partitions = (
    JSON.parse(status.stdout) as { datasets: { partitions: { partition: number; tableOffset: number }[] }[] }
  ).datasets[0]?.partitions
  const tableOffsets = new Map((partitions ?? []).map((p) => [p.partition, BigInt(p.tableOffset)]))
  assert.equal(
    [...tableOffsets.values()].reduce((a, b) => a + b, 0n),
    200n,
  )
  const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'it-move-table' })
  try {
    assert.deepEqual(await admin.committedOffsets(group, fleet.topic), tableOffsets)
  } finally {
    await admin.close()
  }

  // Step 3: the dataset names a new table; validate says the first run creates it.
  const newTable = `${fleet.table}_v2`
  const moved = join(fleet.dir, 'floe-moved.yaml')
  await writeFile(
    moved,
    (await readFile(fleet.config, 'utf8')).replace(`table: ${fleet.table}\n`, `table: ${newTable}\n`),
  )
  const validate = await floeCommand(['validate', '--config', moved])
  assert.equal(validate.code, 0, validate.stdout + validate.stderr)
  assert.match(validate.stdout, new RegExp(`dataset events: table ${newTable}: will be created on first run`))

  // Step 4: start again on the new table.
  const after = await fleet.produce(150)
  const worker = new WorkerProcess('w1', moved, join(fleet.dir, 'w1.moved.log'), {}, fleet.walDir('w1'))
  fleet.workers.push(worker)
  await assertCounts(fleet, new Map(after.map((id) => [id, 1])), 180_000, newTable)
  await assertCounts(fleet, new Map(before.map((id) => [id, 1])), 30_000, fleet.table)
  await stop(worker, group)
})
