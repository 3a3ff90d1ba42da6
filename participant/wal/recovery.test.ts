import assert from 'node:assert/strict'
import { readdir, readFile, rename, truncate, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { describe, test } from 'node:test'
import { recordJump } from './jump-marker.ts'
import { activeFileName, jumpFileName } from './names.ts'
import type { PartitionLog, PartitionLogOptions } from './partition-log.ts'
import { pruneBehindTable, recoverPartition } from './recovery.ts'
import { daysAndCountries, events, partitionLogIn, temporaryDirectory } from './test-support.ts'
import type { Rotation } from './types.ts'

const topic = 'orders'
const partition = 2
const scope = { topic, partition, specId: daysAndCountries['spec-id'] }

function logIn(dir: string, options: Partial<PartitionLogOptions> = {}): PartitionLog {
  return partitionLogIn(dir, { topic, partition }, { rowGroupRows: 5, ...options })
}

/** Two rotations, [100,140) and [140,160), then rows in open segments and a crash (no close). */
async function crashAfterTwoRotations(dir: string): Promise<{ log: PartitionLog; rotations: Rotation[] }> {
  const log = logIn(dir)
  await log.append(events(0, 40), 140n)
  const first = await log.rotate('size')
  await log.append(events(40, 20), 160n)
  const second = await log.rotate('commit')
  await log.append(events(60, 12), 172n) // row groups of 5: some rows already on disk, no footer
  assert.ok(first && second)
  return { log, rotations: [first, second] }
}

const sortedNames = async (dir: string) => (await readdir(dir)).sort()

describe('recoverPartition', () => {
  test('a crash mid-write leaves active files, which recovery deletes; reading resumes at the table offset', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir)
    await log.append(events(0, 40), 140n) // 4 segments, 10 rows each: two row groups written
    const recovered = await recoverPartition(dir, 100n, scope)
    assert.deepEqual(await sortedNames(dir), [])
    assert.equal(recovered.resumeFrom, 100n)
    assert.deepEqual(recovered.segments, [])
    assert.equal(recovered.deleted.length, 4)
    assert.ok(recovered.deleted.every((deletion) => deletion.reason === 'active'))
    await log.abort() // releases the abandoned log's file handles
  })

  test('kept ready files chain from the table offset and the next rotation chains after them', async (t) => {
    const dir = await temporaryDirectory(t)
    const { log: crashed, rotations } = await crashAfterTwoRotations(dir)
    const recovered = await recoverPartition(dir, 100n, scope)
    assert.equal(recovered.resumeFrom, 160n)
    assert.deepEqual(
      recovered.rotations.map(({ start, end, reason, segments }) => [start, end, reason, segments.length]),
      [
        [100n, 140n, 'recovered', 4],
        [140n, 160n, 'recovered', 4],
      ],
    )
    const uuids = (list: readonly Rotation[]) => list.flatMap((rotation) => rotation.segments.map((s) => s.uuid)).sort()
    assert.deepEqual(uuids(recovered.rotations), uuids(rotations))
    assert.ok(recovered.deleted.every((deletion) => deletion.reason === 'active'))
    assert.equal(recovered.deleted.length, 4)
    await crashed.abort()

    const log = logIn(dir, { startOffset: recovered.resumeFrom, recovered: recovered.segments })
    const sizes = recovered.segments.reduce((sum, segment) => sum + segment.sizeBytes, 0)
    assert.equal(log.readyBytes, sizes)
    await log.append(events(60, 10), 170n)
    const next = await log.rotate('commit')
    assert.equal(next?.start, 160n)
    assert.equal(next?.end, 170n)
    assert.equal((await log.deleteUpTo(160n)).length, 8, 'the recovered segments are the log’s to delete')
    assert.ok((await sortedNames(dir)).every((name) => name.includes('_160-170_')))
    await log.close()
  })

  test('rotations the table is past are deleted, the one at its offset kept', async (t) => {
    const dir = await temporaryDirectory(t)
    const { log } = await crashAfterTwoRotations(dir)
    const recovered = await recoverPartition(dir, 140n, scope)
    assert.equal(recovered.resumeFrom, 160n)
    assert.deepEqual(
      recovered.rotations.map((rotation) => [rotation.start, rotation.end]),
      [[140n, 160n]],
    )
    assert.equal(recovered.deleted.filter((deletion) => deletion.reason === 'behind-table').length, 8)
    assert.ok((await sortedNames(dir)).every((name) => name.includes('_140-160_')))
    await log.abort()
  })

  test('a table offset inside a rotation deletes it and everything after', async (t) => {
    const dir = await temporaryDirectory(t)
    const { log } = await crashAfterTwoRotations(dir)
    const recovered = await recoverPartition(dir, 120n, scope)
    assert.equal(recovered.resumeFrom, 120n)
    assert.deepEqual(await sortedNames(dir), [])
    assert.deepEqual([...new Set(recovered.deleted.map((deletion) => deletion.reason))].sort(), [
      'active',
      'gap',
      'straddles-table',
    ])
    await log.abort()
  })

  test('a crash between the renames of a rotation deletes the whole rotation', async (t) => {
    const dir = await temporaryDirectory(t)
    const { log, rotations } = await crashAfterTwoRotations(dir)
    // put the second rotation back where a crash after its first rename would have left it
    const segment = rotations[1]?.segments[0]
    assert.ok(segment)
    await rename(segment.localPath, join(dir, activeFileName(topic, partition, segment.uuid)))
    const recovered = await recoverPartition(dir, 100n, scope)
    assert.equal(recovered.resumeFrom, 140n)
    assert.deepEqual(
      recovered.rotations.map((rotation) => [rotation.start, rotation.end]),
      [[100n, 140n]],
    )
    assert.deepEqual(
      recovered.deleted
        .filter((deletion) => deletion.file.includes('_140-160_'))
        .map((deletion) => deletion.reason)
        .sort(),
      [...Array(6).fill('incomplete-rotation'), 'orphan'],
    )
    await log.abort()
  })

  for (const [damage, how] of [
    ['a sidecar that does not parse', (json: string) => writeFile(json, '{"format":')],
    ['a sidecar of unknown format', (json: string) => writeFile(json, '{}')],
    [
      'a sidecar naming another range than its file',
      async (json: string) => writeFile(json, (await readFile(json, 'utf8')).replace('"start":100', '"start":99')),
    ],
    ['a truncated .parquet', (json: string) => truncate(json.replace(/\.json$/, '.parquet'), 100)],
  ] as const) {
    test(`${damage} ends the chain at its rotation`, async (t) => {
      const dir = await temporaryDirectory(t)
      const { log, rotations } = await crashAfterTwoRotations(dir)
      const segment = rotations[0]?.segments[1]
      assert.ok(segment)
      await how(segment.jsonPath)
      const recovered = await recoverPartition(dir, 100n, scope)
      assert.equal(recovered.resumeFrom, 100n)
      assert.deepEqual(recovered.segments, [])
      assert.deepEqual(await sortedNames(dir), [])
      assert.equal(recovered.deleted.filter((deletion) => deletion.reason === 'unreadable').length, 8)
      assert.equal(recovered.deleted.filter((deletion) => deletion.reason === 'gap').length, 8)
      await log.abort()
    })
  }

  /** [100,140) read, then a log-start jump to 300 recorded and [300,320) read past it; a crash. */
  async function crashPastJump(dir: string) {
    const before = logIn(dir)
    await before.append(events(0, 40), 140n)
    await before.rotate('size')
    await before.abort()
    await recordJump(dir, topic, partition, { from: 140n, to: 300n })
    const past = logIn(dir, { startOffset: 300n })
    await past.append(events(40, 20), 320n)
    const rotation = await past.rotate('size')
    await past.abort()
    assert.ok(rotation)
    return rotation
  }

  test('files read past a recorded log-start jump are kept with the files before it, and the jump with them', async (t) => {
    const dir = await temporaryDirectory(t)
    await crashPastJump(dir)
    const recovered = await recoverPartition(dir, 100n, scope)
    assert.deepEqual(
      recovered.rotations.map(({ start, end }) => [start, end]),
      [
        [100n, 140n],
        [300n, 320n],
      ],
    )
    assert.deepEqual(recovered.jump, { from: 140n, to: 300n })
    assert.equal(recovered.resumeFrom, 320n)
    assert.ok((await sortedNames(dir)).includes(jumpFileName(topic, partition, { from: 140n, to: 300n })))
  })

  test('an unreadable first rotation past the jump ends the chain where the jump starts, and the marker goes', async (t) => {
    const dir = await temporaryDirectory(t)
    const past = await crashPastJump(dir)
    await writeFile(past.segments[0]?.jsonPath as string, '{}')
    const recovered = await recoverPartition(dir, 100n, scope)
    assert.deepEqual(
      recovered.rotations.map(({ start, end }) => [start, end]),
      [[100n, 140n]],
    )
    assert.equal(recovered.jump, undefined)
    assert.equal(recovered.resumeFrom, 140n)
    assert.ok(!(await sortedNames(dir)).some((name) => name.startsWith('jump_')))
  })

  test('told not to cross jumps, recovery drops what lies past one, marker included', async (t) => {
    const dir = await temporaryDirectory(t)
    await crashPastJump(dir)
    const recovered = await recoverPartition(dir, 100n, { ...scope, crossJumps: false })
    assert.deepEqual(
      recovered.rotations.map(({ start, end }) => [start, end]),
      [[100n, 140n]],
    )
    assert.equal(recovered.jump, undefined)
    assert.equal(recovered.resumeFrom, 140n)
    assert.ok((await sortedNames(dir)).every((name) => name.includes('_100-140_')))
  })

  test("a recorded jump replaces the partition's earlier ones; recording it again changes nothing", async (t) => {
    const dir = join(await temporaryDirectory(t), 'not-yet')
    const other = jumpFileName('other', partition, { from: 1n, to: 2n })
    await recordJump(dir, topic, partition, { from: 140n, to: 300n })
    await writeFile(join(dir, other), '')
    await recordJump(dir, topic, partition, { from: 140n, to: 350n })
    await recordJump(dir, topic, partition, { from: 140n, to: 350n })
    assert.deepEqual(await sortedNames(dir), [jumpFileName(topic, partition, { from: 140n, to: 350n }), other].sort())
  })

  test('files written under another partition spec are deleted', async (t) => {
    const dir = await temporaryDirectory(t)
    const { log } = await crashAfterTwoRotations(dir)
    const recovered = await recoverPartition(dir, 100n, { ...scope, specId: 7 })
    assert.equal(recovered.resumeFrom, 100n)
    assert.deepEqual(await sortedNames(dir), [])
    assert.equal(recovered.deleted.filter((deletion) => deletion.reason === 'spec-changed').length, 8)
    await log.abort()
  })

  test('a partition the table has never committed keeps nothing', async (t) => {
    const dir = await temporaryDirectory(t)
    const { log } = await crashAfterTwoRotations(dir)
    const recovered = await recoverPartition(dir, undefined, scope)
    assert.equal(recovered.resumeFrom, undefined)
    assert.deepEqual(await sortedNames(dir), [])
    await log.abort()
  })

  test('names the WAL does not make are left on disk and reported', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir)
    await log.append(events(0, 4), 104n)
    await log.rotate('commit')
    await writeFile(join(dir, 'operator-notes.txt'), 'hello')
    await writeFile(join(dir, activeFileName('other-topic', partition, '0f8fad5b-d9cb-469f-a165-70867728950e')), '')
    const recovered = await recoverPartition(dir, 100n, scope)
    assert.deepEqual(recovered.unknown.sort(), [
      activeFileName('other-topic', partition, '0f8fad5b-d9cb-469f-a165-70867728950e'),
      'operator-notes.txt',
    ])
    assert.ok((await sortedNames(dir)).includes('operator-notes.txt'))
    assert.equal(recovered.resumeFrom, 104n)
    await log.close()
  })

  test('a folder that does not exist recovers nothing and resumes at the table offset', async (t) => {
    const dir = join(await temporaryDirectory(t), 'never-made')
    const recovered = await recoverPartition(dir, 42n)
    assert.deepEqual(recovered, { segments: [], rotations: [], resumeFrom: 42n, deleted: [], unknown: [] })
    assert.equal(basename(dir), 'never-made')
  })
})

describe('pruneBehindTable', () => {
  test('deletes the ready files the table holds wholly or in part, and nothing open or ahead', async (t) => {
    const dir = await temporaryDirectory(t)
    const { log } = await crashAfterTwoRotations(dir) // [100,140), [140,160), open segments after
    const before = await sortedNames(dir)
    const deleted = await pruneBehindTable(dir, 150n, { topic, partition })
    assert.equal(deleted.length, before.filter((name) => name.startsWith('ready_')).length)
    assert.deepEqual(
      await sortedNames(dir),
      before.filter((name) => name.startsWith('active_')),
    )
    assert.deepEqual(await pruneBehindTable(join(dir, 'missing'), 150n, { topic, partition }), [])
    await log.abort()
  })

  test('keeps the files that start at or after the table offset', async (t) => {
    const dir = await temporaryDirectory(t)
    const { log } = await crashAfterTwoRotations(dir)
    const deleted = await pruneBehindTable(dir, 140n, { topic, partition })
    assert.ok(deleted.length > 0 && deleted.every((name) => name.includes('_100-140_')))
    assert.ok((await sortedNames(dir)).some((name) => name.includes('_140-160_')))
    await log.abort()
  })
})
