import assert from 'node:assert/strict'
import { readdir, rm, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { describe, test } from 'node:test'
import type { SharedRotation } from './rotation-manifest.ts'
import { SharedLog } from './shared-log.ts'
import { parseSharedFileName, rotationManifestName } from './shared-names.ts'
import { recoverSharedLog } from './shared-recovery.ts'
import {
  daysAndCountries,
  eventSchema,
  events,
  SettableClock,
  temporaryDirectory,
  unpartitioned,
} from './test-support.ts'

const topic = 'orders'

/** A WAL with two rotations over partitions 1 and 2 (1: [0,10) [10,20), 2: [50,60) [60,70)) and uncut rows. */
async function walWithTwoRotations(dir: string): Promise<SharedRotation[]> {
  const log = new SharedLog({ dir, topic, schema: eventSchema, spec: daysAndCountries, clock: new SettableClock() })
  log.read(1, 0n)
  log.read(2, 50n)
  const rotations: SharedRotation[] = []
  for (const round of [0, 1]) {
    await log.append(1, events(round * 20, 10), BigInt(round * 10 + 10))
    await log.append(2, events(round * 20 + 10, 10), BigInt(round * 10 + 60))
    rotations.push((await log.cut('commit')) as SharedRotation)
  }
  await log.append(1, events(40, 5), 25n) // open when the worker is killed
  return rotations
}

const offsets = (entries: Record<number, number>) =>
  new Map(Object.entries(entries).map(([partition, offset]) => [Number(partition), BigInt(offset)]))

async function kindsIn(dir: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const name of await readdir(dir)) {
    const kind = parseSharedFileName(name)?.kind ?? name
    counts[kind] = (counts[kind] ?? 0) + 1
  }
  return counts
}

const reasons = (recovered: Awaited<ReturnType<typeof recoverSharedLog>>) =>
  [...new Set(recovered.deleted.map((deletion) => deletion.reason))].sort()

describe('recovering a shared WAL', () => {
  test('a kill while appending: open segments go, the rotations chaining from the table stay, each partition reads on after them', async (t) => {
    const dir = await temporaryDirectory(t)
    const written = await walWithTwoRotations(dir)
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets: offsets({ 1: 0, 2: 50 }), assigned: [1, 2] })
    assert.deepEqual(
      recovered.rotations.map((rotation) => rotation.id),
      written.map((rotation) => rotation.id),
    )
    assert.deepEqual(
      recovered.next,
      new Map([
        [1, 20n],
        [2, 70n],
      ]),
    )
    assert.deepEqual(reasons(recovered), ['active'])
    assert.equal(recovered.nextSequence, 3n)
    assert.equal(recovered.rotations[0]?.segments.length, 4)
    assert.equal((await kindsIn(dir))['active'], undefined)
  })

  test('a kill during a cut before the manifest rename: the files no manifest names are deleted, the partitions re-read after the previous rotation', async (t) => {
    const dir = await temporaryDirectory(t)
    const [, second] = await walWithTwoRotations(dir)
    assert.ok(second)
    await rm(second.manifestPath)
    await writeFile(join(dir, `${basename(second.manifestPath)}.tmp`), '{"half')
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets: offsets({ 1: 0, 2: 50 }), assigned: [1, 2] })
    assert.equal(recovered.rotations.length, 1)
    assert.deepEqual(
      recovered.next,
      new Map([
        [1, 10n],
        [2, 60n],
      ]),
    )
    assert.deepEqual(reasons(recovered), ['active', 'temporary', 'unclaimed'])
    assert.deepEqual(await kindsIn(dir), { rotation: 1, segment: 4, sidecar: 4 })
  })

  test('after the commit, before the ACK: rotations wholly behind the table are deleted', async (t) => {
    const dir = await temporaryDirectory(t)
    await walWithTwoRotations(dir)
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets: offsets({ 1: 10, 2: 60 }), assigned: [1, 2] })
    assert.equal(recovered.rotations.length, 1)
    assert.deepEqual(
      recovered.next,
      new Map([
        [1, 20n],
        [2, 70n],
      ]),
    )
    assert.ok(recovered.deleted.some((deletion) => deletion.reason === 'behind-table'))
    assert.deepEqual(await kindsIn(dir), { rotation: 1, segment: 4, sidecar: 4 })
  })

  test('restart with one stale range: the rotation is dropped whole (so is the next, stale too), and the other partition re-reads from its table offset', async (t) => {
    const dir = await temporaryDirectory(t)
    await walWithTwoRotations(dir)
    // partition 1 moved away, was committed to 15 elsewhere, and came back
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets: offsets({ 1: 15, 2: 50 }), assigned: [1, 2] })
    assert.equal(recovered.rotations.length, 0)
    assert.deepEqual(
      recovered.next,
      new Map([
        [1, 15n],
        [2, 50n],
      ]),
    )
    assert.deepEqual(reasons(recovered), ['active', 'stale-range'])
    assert.deepEqual(await kindsIn(dir), {})
  })

  test('a partition assigned elsewhere now: every rotation holding it is dropped and the kept partition re-reads', async (t) => {
    const dir = await temporaryDirectory(t)
    await walWithTwoRotations(dir)
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets: offsets({ 1: 0, 2: 50 }), assigned: [2] })
    assert.equal(recovered.rotations.length, 0)
    assert.deepEqual(recovered.next, new Map([[2, 50n]]))
    assert.deepEqual(reasons(recovered), ['active', 'not-assigned'])
  })

  test('a manifest naming a missing sidecar is dropped with every file it names, and stops the rotations after it', async (t) => {
    const dir = await temporaryDirectory(t)
    const [first] = await walWithTwoRotations(dir)
    assert.ok(first?.segments[0])
    await rm(first.segments[0].jsonPath)
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets: offsets({ 1: 0, 2: 50 }), assigned: [1, 2] })
    assert.equal(recovered.rotations.length, 0)
    assert.deepEqual(
      recovered.next,
      new Map([
        [1, 0n],
        [2, 50n],
      ]),
    )
    assert.deepEqual(reasons(recovered), ['active', 'after-dropped', 'incomplete-rotation'])
    assert.deepEqual(await kindsIn(dir), {})
  })

  test('a manifest that does not read back is deleted, and so are the files it named', async (t) => {
    const dir = await temporaryDirectory(t)
    const [, second] = await walWithTwoRotations(dir)
    assert.ok(second)
    await writeFile(second.manifestPath, 'not json')
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets: offsets({ 1: 0, 2: 50 }), assigned: [1, 2] })
    assert.equal(recovered.rotations.length, 1)
    assert.deepEqual(reasons(recovered), ['active', 'unclaimed', 'unreadable-manifest'])
    assert.equal(recovered.nextSequence, 3n, 'the sequence of a deleted manifest is not reused')
  })

  test('a rotation written under another partition spec is dropped', async (t) => {
    const dir = await temporaryDirectory(t)
    await walWithTwoRotations(dir)
    const recovered = await recoverSharedLog(dir, {
      topic,
      tableOffsets: offsets({ 1: 0, 2: 50 }),
      assigned: [1, 2],
      specId: unpartitioned['spec-id'],
    })
    assert.equal(recovered.rotations.length, 0)
    assert.deepEqual(reasons(recovered), ['active', 'spec-changed'])
  })

  test('a partition the table never saw proves nothing: rotations holding it are dropped', async (t) => {
    const dir = await temporaryDirectory(t)
    await walWithTwoRotations(dir)
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets: offsets({ 2: 50 }), assigned: [1, 2] })
    assert.equal(recovered.rotations.length, 0)
    assert.deepEqual(
      recovered.next,
      new Map([
        [1, undefined],
        [2, 50n],
      ]),
    )
  })

  test('a deletion cut short after the manifest leaves files no manifest names, which recovery deletes', async (t) => {
    const dir = await temporaryDirectory(t)
    const [first] = await walWithTwoRotations(dir)
    assert.ok(first)
    await rm(first.manifestPath)
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets: offsets({ 1: 10, 2: 60 }), assigned: [1, 2] })
    assert.equal(recovered.rotations.length, 1)
    assert.deepEqual(
      recovered.next,
      new Map([
        [1, 20n],
        [2, 70n],
      ]),
    )
    assert.deepEqual(await kindsIn(dir), { rotation: 1, segment: 4, sidecar: 4 })
  })

  test('a folder that does not exist holds nothing to recover, and names of other layouts are left alone', async (t) => {
    const root = await temporaryDirectory(t)
    const none = await recoverSharedLog(join(root, 'missing'), {
      topic,
      tableOffsets: offsets({ 1: 3 }),
      assigned: [1],
    })
    assert.deepEqual(none.next, new Map([[1, 3n]]))
    await writeFile(join(root, 'notes.txt'), 'x')
    await writeFile(join(root, rotationManifestName(1n, 'not-a-uuid')), '{}')
    const other = await recoverSharedLog(root, { topic, tableOffsets: offsets({}), assigned: [] })
    assert.deepEqual(other.unknown.sort(), ['notes.txt', 'rotation_1_not-a-uuid.json'])
  })
})
