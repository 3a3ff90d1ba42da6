import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { isFloeError } from '../../shared/index.ts'
import { decodeRotationManifest } from './rotation-manifest.ts'
import { partitionKey } from './rotation-walk.ts'
import { SharedLog, type SharedLogOptions } from './shared-log.ts'
import { parseSharedFileName } from './shared-names.ts'
import { recoverSharedLog } from './shared-recovery.ts'
import {
  daysAndCountries,
  eventSchema,
  events,
  needsPyarrow,
  readWithPyarrow,
  SettableClock,
  temporaryDirectory,
} from './test-support.ts'

const topic = 'clicks_eu.v1'

function sharedLogIn(dir: string, options: Partial<SharedLogOptions> = {}): SharedLog {
  return new SharedLog({
    dir,
    topic,
    schema: eventSchema,
    spec: daysAndCountries,
    clock: new SettableClock(),
    ...options,
  })
}

async function kinds(dir: string): Promise<string[]> {
  return (await readdir(dir)).map((name) => parseSharedFileName(name)?.kind ?? name).sort()
}

const from = (entries: Record<number, number>) =>
  new Map(
    Object.entries(entries).map(([partition, offset]) => [partitionKey(topic, Number(partition)), BigInt(offset)]),
  )

describe('SharedLog', () => {
  test('two Kafka partitions share one open segment per Iceberg partition, and a cut makes one rotation claiming both ranges', async (t) => {
    const dir = join(await temporaryDirectory(t), 'events', 'shared')
    const log = sharedLogIn(dir)
    log.read(1, 100n)
    log.read(2, 500n)
    await log.append(1, events(0, 20), 120n) // 2 days x 2 countries
    await log.append(2, events(20, 20), 520n) // the same four Iceberg partitions
    assert.equal(log.openSegmentCount, 4)
    const rotation = await log.cut('commit')
    assert.ok(rotation)
    assert.equal(rotation.segments.length, 4, 'one file per Iceberg partition, not per Kafka partition')
    assert.deepEqual(
      rotation.ranges.map((range) => [range.partition, range.start, range.end]),
      [
        [1, 100n, 120n],
        [2, 500n, 520n],
      ],
    )
    assert.equal(rotation.sequence, 1n)
    assert.deepEqual(await kinds(dir), [
      'rotation',
      'segment',
      'segment',
      'segment',
      'segment',
      'sidecar',
      'sidecar',
      'sidecar',
      'sidecar',
    ])
    const manifest = decodeRotationManifest(await readFile(rotation.manifestPath, 'utf8'))
    assert.equal(manifest.id, rotation.id)
    assert.deepEqual(manifest.files.sort(), rotation.segments.map((segment) => segment.uuid).sort())
    assert.deepEqual(manifest.ranges, rotation.ranges)
    assert.equal(
      rotation.segments.reduce((rows, segment) => rows + segment.dataFile.recordCount, 0n),
      40n,
    )
    assert.deepEqual(
      log.positions,
      new Map([
        [1, 120n],
        [2, 520n],
      ]),
    )
    await log.close()
  })

  test('a range read from the end of a log-start jump records where its chain ended, in the manifest too, and recovery keeps it across the jump', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = sharedLogIn(dir)
    log.read(1, 100n)
    log.read(2, 500n, undefined, 300n)
    await log.append(1, events(0, 4), 104n)
    const first = await log.cut('commit')
    assert.deepEqual(
      first?.ranges.map((range) => [range.partition, range.start, range.end]),
      [[1, 100n, 104n]],
    )
    // partition 2 read nothing yet: its next range still records the jump
    await log.append(2, events(4, 4), 504n)
    const second = await log.cut('commit')
    assert.deepEqual(second?.ranges, [{ topic, partition: 2, start: 500n, end: 504n, after: 300n }])
    assert.deepEqual(
      decodeRotationManifest(await readFile(second?.manifestPath as string, 'utf8')).ranges,
      second?.ranges,
    )
    // only the first range past the jump records it
    await log.append(2, events(8, 4), 508n)
    assert.deepEqual((await log.cut('commit'))?.ranges, [{ topic, partition: 2, start: 504n, end: 508n }])
    await log.close()
    // the table at 300: the chain runs to 300 and on from 500, so recovery keeps every rotation
    const recovered = await recoverSharedLog(dir, {
      topic,
      tableOffsets: new Map([
        [1, 100n],
        [2, 300n],
      ]),
      assigned: [1, 2],
    })
    assert.equal(recovered.rotations.length, 3)
    assert.deepEqual(recovered.deleted, [])
  })

  test('a walk that leaves a chain where its jump starts positions it at the end of the jump, recording it', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = sharedLogIn(dir)
    log.read(1, 100n)
    await log.append(1, events(0, 4), 104n)
    await log.cut('commit')
    const jumps = new Map([[partitionKey(topic, 1), { from: 104n, to: 500n }]])
    // a rejected rotation past the jump: the chain ends at 104 again
    log.read(1, 500n, undefined, 104n)
    await log.append(1, events(4, 4), 504n)
    const rejected = await log.cut('commit')
    const walked = await log.walk({
      from: from({ 1: 100 }),
      assigned: [1],
      jumps,
      rejected: new Set([rejected?.id as string]),
      reason: 'resync',
    })
    assert.deepEqual(walked.next, new Map([[1, 500n]]))
    await log.append(1, events(8, 4), 504n)
    assert.deepEqual((await log.cut('commit'))?.ranges, [{ topic, partition: 1, start: 500n, end: 504n, after: 104n }])
    await log.close()
  })

  test('a manifest whose range continues from at or past its own start does not read back', () => {
    const manifest = (after: number) =>
      JSON.stringify({
        format: 'floe-wal-rotation',
        version: 1,
        id: 'r',
        sequence: 1,
        files: [],
        ranges: [{ topic, partition: 1, start: 500, end: 510, after }],
      })
    assert.equal(decodeRotationManifest(manifest(300)).ranges[0]?.after, 300n)
    assert.throws(
      () => decodeRotationManifest(manifest(500)),
      (error) => isFloeError(error),
    )
  })

  test('a jump that does not end past its start is refused', (t) => {
    const log = sharedLogIn(join(tmpdir(), 'never-written'))
    t.after(() => log.close())
    assert.throws(() => log.read(1, 500n, undefined, 500n), /log-start jump/)
  })

  test('every file of a rotation carries the rotation and all its ranges in its footer', needsPyarrow, async (t) => {
    const dir = await temporaryDirectory(t)
    const log = sharedLogIn(dir)
    log.read(1, 0n)
    log.read(2, 7n)
    await log.append(1, events(0, 10), 10n)
    await log.append(2, events(10, 10), 17n)
    const rotation = await log.cut('commit')
    assert.ok(rotation)
    const read = await readWithPyarrow(
      'event_id',
      rotation.segments.map((segment) => segment.localPath),
    )
    const ids = read.flatMap((file) => file.values).sort((a, b) => Number(a) - Number(b))
    assert.deepEqual(
      ids,
      Array.from({ length: 20 }, (_, i) => String(i)),
    )
    for (const file of read) {
      assert.equal(file.floeMetadata['floe.rotation'], rotation.id)
      assert.deepEqual(JSON.parse(file.floeMetadata['floe.ranges'] as string), [
        { topic, partition: 1, start: '0', end: '10' },
        { topic, partition: 2, start: '7', end: '17' },
      ])
    }
    await log.close()
  })

  test('a partition that advanced without rows is claimed, one that did not move is not, and nothing moved cuts nothing', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = sharedLogIn(dir)
    log.read(1, 0n)
    log.read(2, 0n)
    log.read(3, 0n)
    await log.append(1, events(0, 5), 5n)
    await log.append(2, [], 9n) // every record dead-lettered
    const rotation = await log.cut('commit')
    assert.deepEqual(
      rotation?.ranges.map((range) => range.partition),
      [1, 2],
    )
    assert.equal(await log.cut('commit'), undefined)
    await log.append(2, [], 12n)
    const onlySkipped = await log.cut('age')
    assert.equal(onlySkipped?.segments.length, 0, 'a rotation may hold no file')
    assert.equal(onlySkipped?.sequence, 2n)
    await log.close()
  })

  test('a partition with uncut rows cannot be positioned again or let go of before a cut', async (t) => {
    const log = sharedLogIn(await temporaryDirectory(t))
    log.read(1, 0n)
    await log.append(1, events(0, 3), 3n)
    assert.throws(
      () => log.read(1, 0n),
      (error: unknown) => isFloeError(error) && error.code === 'INVARIANT_BROKEN',
    )
    assert.throws(
      () => log.forget(1),
      (error: unknown) => isFloeError(error) && error.code === 'INVARIANT_BROKEN',
    )
    await log.cut('resync')
    log.read(1, 50n)
    assert.deepEqual(log.positions, new Map([[1, 50n]]))
    log.forget(1)
    await assert.rejects(log.append(1, events(3, 1), 51n), (error: unknown) => isFloeError(error))
    await log.close()
  })

  test('one open segment reaching the size limit makes a size cut due for all of them', async (t) => {
    const log = sharedLogIn(await temporaryDirectory(t), { limits: { maxFileSizeBytes: 2_000 } })
    log.read(1, 0n)
    assert.equal(log.rotationDue(), undefined)
    await log.append(1, events(0, 400, 1, 1), 400n)
    assert.equal(log.rotationDue(), 'size')
    await log.close()
  })

  test('a revocation cuts first, drops the rotation holding the lost partition and rewinds the kept one to its first dropped range', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = sharedLogIn(dir)
    log.read(1, 100n)
    log.read(2, 500n)
    await log.append(2, events(0, 4), 504n)
    const older = await log.cut('commit') // k alone: kept
    await log.append(1, events(4, 4), 104n)
    await log.append(2, events(8, 4), 508n) // uncut rows of both in shared open segments
    const walked = await log.walk({ from: from({ 1: 100, 2: 500 }), assigned: [2], reason: 'revoke' })
    assert.ok(walked.cut, 'the walk cut before letting go of partition 1')
    assert.deepEqual(
      walked.kept.map((rotation) => rotation.id),
      [older?.id],
    )
    assert.deepEqual(
      walked.dropped.map(({ rotation, reason }) => [rotation.id, reason]),
      [[walked.cut.id, 'not-assigned']],
    )
    assert.deepEqual(walked.rewound, [2])
    assert.deepEqual(walked.next, new Map([[2, 504n]]))
    assert.deepEqual(log.positions, new Map([[2, 504n]]))
    assert.deepEqual(
      log.rotations.map((rotation) => rotation.id),
      [older?.id],
    )
    const onDisk = await readdir(dir)
    assert.ok(!onDisk.some((name) => name.includes(walked.cut?.id as string)), 'the dropped manifest is gone')
    assert.equal(onDisk.filter((name) => parseSharedFileName(name)?.kind === 'segment').length, older?.segments.length)
    await log.close()
  })

  test('an ACK deletes the rotations behind the table and leaves uncut rows alone', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = sharedLogIn(dir)
    log.read(1, 0n)
    log.read(2, 0n)
    await log.append(1, events(0, 4), 4n)
    await log.append(2, events(4, 4), 4n)
    await log.cut('commit')
    await log.append(1, events(8, 4), 8n) // read on after the END-COMMIT cut
    const walked = await log.walk({ from: from({ 1: 4, 2: 4 }), assigned: [1, 2], reason: 'commit' })
    assert.equal(walked.cut, undefined)
    assert.deepEqual(
      walked.dropped.map(({ reason }) => reason),
      ['behind-table'],
    )
    assert.deepEqual(walked.rewound, [])
    assert.equal(log.rotations.length, 0)
    assert.ok(log.hasUncut(1))
    assert.deepEqual(await kinds(dir), ['active', 'active', 'active', 'active'])
    await log.close()
  })

  test('an ACK offset inside a rotation (committed elsewhere) cuts, drops it whole and rewinds both partitions', async (t) => {
    const log = sharedLogIn(await temporaryDirectory(t))
    log.read(1, 0n)
    log.read(2, 0n)
    await log.append(1, events(0, 10), 10n)
    await log.append(2, events(10, 10), 10n)
    await log.cut('commit')
    await log.append(2, events(20, 2), 12n)
    const walked = await log.walk({ from: from({ 1: 5, 2: 0 }), assigned: [1, 2], reason: 'resync' })
    assert.ok(walked.cut)
    assert.deepEqual(
      walked.dropped.map(({ reason }) => reason),
      ['stale-range', 'after-dropped'],
    )
    assert.deepEqual(walked.rewound, [1, 2])
    assert.deepEqual(
      log.positions,
      new Map([
        [1, 5n],
        [2, 0n],
      ]),
    )
    await log.close()
  })

  test('a partition the table moved past while it held no uncut rows is repositioned with the table', async (t) => {
    const log = sharedLogIn(await temporaryDirectory(t))
    log.read(1, 10n)
    log.read(2, 0n)
    await log.append(2, events(0, 3), 3n)
    const walked = await log.walk({ from: from({ 1: 25, 2: 0 }), assigned: [1, 2], reason: 'resync' })
    assert.equal(walked.cut, undefined)
    assert.deepEqual(walked.rewound, [1])
    assert.deepEqual(
      log.positions,
      new Map([
        [1, 25n],
        [2, 3n],
      ]),
    )
    await log.close()
  })

  test('uncut rows of a partition committed elsewhere past their start are cut and dropped', async (t) => {
    const log = sharedLogIn(await temporaryDirectory(t))
    log.read(1, 10n)
    await log.append(1, events(0, 5), 15n)
    const walked = await log.walk({ from: from({ 1: 12 }), assigned: [1], reason: 'resync' })
    assert.ok(walked.cut)
    assert.deepEqual(
      walked.dropped.map(({ reason }) => reason),
      ['stale-range'],
    )
    assert.deepEqual(log.positions, new Map([[1, 12n]]))
    await log.close()
  })

  test('a rejected rotation is dropped whole and its partitions read again from the table', async (t) => {
    const log = sharedLogIn(await temporaryDirectory(t))
    log.read(1, 0n)
    await log.append(1, events(0, 5), 5n)
    const rotation = await log.cut('commit')
    const walked = await log.walk({
      from: from({ 1: 0 }),
      assigned: [1],
      rejected: new Set([rotation?.id as string]),
      reason: 'resync',
    })
    assert.deepEqual(
      walked.dropped.map(({ reason }) => reason),
      ['rejected'],
    )
    assert.deepEqual(log.positions, new Map([[1, 0n]]))
    assert.equal(log.rotations.length, 0)
    await log.close()
  })

  test('accepted rotations are deleted by id, manifest and files', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = sharedLogIn(dir)
    log.read(1, 0n)
    await log.append(1, events(0, 4), 4n)
    const first = await log.cut('commit')
    await log.append(1, events(4, 4), 8n)
    await log.cut('commit')
    const deleted = await log.deleteRotations([first?.id as string])
    assert.deepEqual(
      deleted.map((rotation) => rotation.id),
      [first?.id],
    )
    assert.equal(log.rotations.length, 1)
    assert.equal((await kinds(dir)).filter((kind) => kind === 'rotation').length, 1)
    await log.close()
  })

  test('discarding after a failure drops the open segments and moves every partition back to its last cut', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = sharedLogIn(dir)
    log.read(1, 0n)
    log.read(2, 30n)
    await log.append(1, events(0, 4), 4n)
    await log.cut('commit')
    await log.append(1, events(4, 4), 8n)
    await log.append(2, events(8, 4), 34n)
    const positions = await log.discardOpen()
    assert.deepEqual(
      positions,
      new Map([
        [1, 4n],
        [2, 30n],
      ]),
    )
    assert.ok(!(await kinds(dir)).includes('active'))
    assert.equal(log.rotations.length, 1)
    await log.close()
  })

  test('an uploaded location survives a restart in the sidecar', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = sharedLogIn(dir)
    log.read(1, 0n)
    await log.append(1, events(0, 4, 1, 1), 4n)
    const rotation = await log.cut('commit')
    const segment = rotation?.segments[0]
    assert.ok(segment)
    await log.markUploaded(segment.uuid, 'abfss://data/x.parquet')
    await log.close()
    const recovered = await recoverSharedLog(dir, { topic, tableOffsets: new Map([[1, 0n]]), assigned: [1] })
    assert.equal(recovered.rotations[0]?.segments[0]?.uploadedLocation, 'abfss://data/x.parquet')
    assert.deepEqual(await kinds(dir), ['rotation', 'segment', 'sidecar'])
  })
})
