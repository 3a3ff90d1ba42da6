import assert from 'node:assert/strict'
import { readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { describe, test } from 'node:test'
import { isFloeError } from '../../shared/index.ts'
import { parseWalFileName, readyFileName } from './names.ts'
import type { PartitionLog, PartitionLogOptions } from './partition-log.ts'
import { recoverPartition } from './recovery.ts'
import {
  events,
  needsPyarrow,
  partitionLogIn,
  readWithPyarrow,
  SettableClock,
  temporaryDirectory,
  unpartitioned,
} from './test-support.ts'
import type { ReadySegment } from './types.ts'

const topic = 'clicks_eu.v1'
const partition = 5

function logIn(dir: string, options: Partial<PartitionLogOptions> = {}): PartitionLog {
  return partitionLogIn(dir, { topic, partition }, { clock: new SettableClock(), ...options })
}

async function filesIn(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort()
}

const kinds = async (dir: string) => (await filesIn(dir)).map((name) => parseWalFileName(name)?.kind)

describe('PartitionLog', () => {
  test('rows of several Iceberg partitions go to one active file each, opened on their first row', async (t) => {
    const dir = join(await temporaryDirectory(t), 'events', `${topic}-${partition}`)
    const log = logIn(dir)
    assert.equal(log.openSegmentCount, 0)
    await log.append(events(0, 3, 1, 1), 103n) // one partition: the batch goes in whole
    assert.deepEqual(await kinds(dir), ['active'])
    await log.append(events(3, 37), 140n) // 2 days x 2 countries
    assert.equal(log.openSegmentCount, 4)
    assert.deepEqual(await kinds(dir), ['active', 'active', 'active', 'active'])
    assert.equal(log.end, 140n)
    assert.equal(log.start, 100n)
    await log.close()
  })

  test('a rotation makes every segment ready under one range and the next range starts at its end', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir)
    await log.append(events(0, 20), 120n)
    await log.append(events(20, 20), 140n)
    const rotation = await log.rotate('commit')
    assert.ok(rotation)
    assert.equal(rotation.start, 100n)
    assert.equal(rotation.end, 140n)
    assert.equal(rotation.reason, 'commit')
    assert.equal(rotation.segments.length, 4)
    assert.equal(log.start, 140n)
    assert.equal(log.openSegmentCount, 0)
    const names = await filesIn(dir)
    assert.equal(names.length, 8)
    for (const name of names) {
      const parsed = parseWalFileName(name)
      assert.ok(parsed?.kind === 'ready-parquet' || parsed?.kind === 'ready-json', name)
      assert.equal(parsed.start, 100n)
      assert.equal(parsed.end, 140n)
      assert.equal(parsed.topic, topic)
      assert.equal(parsed.partition, partition)
    }
    let records = 0n
    for (const segment of rotation.segments) {
      assert.equal(basename(segment.localPath), `ready_${topic}_${partition}_100-140_${segment.uuid}.parquet`)
      assert.equal(basename(segment.jsonPath), `ready_${topic}_${partition}_100-140_${segment.uuid}.json`)
      assert.equal((await stat(segment.localPath)).size, segment.sizeBytes)
      assert.equal(segment.dataFile.fileSizeInBytes, BigInt(segment.sizeBytes))
      assert.equal(segment.dataFile.specId, 1)
      assert.deepEqual(segment.dataFile.partition, segment.partitionValues)
      assert.match(segment.partitionPath, /^ts_day=\d{4}-\d{2}-\d{2}\/country=C[01]$/)
      assert.equal(segment.dataFile.recordCount, 10n)
      assert.ok(segment.dataFile.lowerBounds?.has(1))
      records += segment.dataFile.recordCount
    }
    assert.equal(records, 40n)
    assert.equal(await log.rotate('commit'), undefined, 'nothing happened since the last rotation')
    await log.close()
  })

  test('each ready segment reads back in pyarrow with its rows, field ids and partition', needsPyarrow, async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir, { rowGroupRows: 4, bloomFilterColumns: [1] })
    await log.append(events(0, 30), 130n)
    await log.append(events(30, 10), 140n)
    const rotation = await log.rotate('shutdown')
    assert.ok(rotation)
    const read = await readWithPyarrow(
      'country',
      rotation.segments.map((segment) => segment.localPath),
    )
    for (const [index, segment] of rotation.segments.entries()) {
      const file = read[index]
      assert.ok(file)
      assert.equal(BigInt(file.numRows), segment.dataFile.recordCount)
      assert.equal(file.numRowGroups, 3, '10 rows in row groups of 4')
      assert.deepEqual(file.fieldIds, { event_id: 1, ts: 2, country: 3, user_id: 4, amount: 5, token: 6 })
      assert.deepEqual(new Set(file.values), new Set([segment.partitionValues['country']]))
      assert.deepEqual(file.floeMetadata, {
        'floe.kafka.topic': topic,
        'floe.kafka.partition': String(partition),
        'floe.kafka.start-offset': '100',
        'floe.kafka.end-offset': '140',
      })
      assert.equal(segment.bloomFilters.length, 3, 'one bloom filter per row group of field 1')
    }
    await log.close()
  })

  test('the sidecar of each segment reads back as the segment', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir, { bloomFilterColumns: [4] })
    await log.append(events(0, 40), 140n)
    const rotation = await log.rotate('commit')
    assert.ok(rotation)
    const recovered = await recoverPartition(dir, 100n)
    const byUuid = (a: ReadySegment, b: ReadySegment) => (a.uuid < b.uuid ? -1 : 1)
    assert.deepEqual([...recovered.segments].sort(byUuid), [...rotation.segments].sort(byUuid))
    await log.close()
  })

  test('offsets that advance without rows make a rotation without segments', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir)
    await log.append([], 150n) // every record of the batch was dead-lettered
    assert.deepEqual(await log.rotate('commit'), { start: 100n, end: 150n, reason: 'commit', segments: [] })
    assert.equal(log.start, 150n)
    assert.deepEqual(await filesIn(dir).catch(() => []), [])
    assert.equal(await log.rotate('commit'), undefined)
    await log.close()
  })

  test('offsets must advance', async (t) => {
    const log = logIn(await temporaryDirectory(t))
    await log.append(events(0, 1), 101n)
    for (const [rows, next] of [
      [[], 100n],
      [events(1, 1), 101n],
    ] as const) {
      await assert.rejects(log.append(rows, next), (error) => isFloeError(error, 'INVARIANT_BROKEN'))
    }
    await log.close()
  })

  describe('rotation triggers', () => {
    test('nothing is due before a row arrives or right after a rotation', async (t) => {
      const clock = new SettableClock()
      const log = logIn(await temporaryDirectory(t), { clock, limits: { maxFileAgeMs: 10 } })
      clock.time += 100
      assert.equal(log.rotationDue(), undefined)
      await log.append(events(0, 4), 104n)
      clock.time += 100
      assert.equal(log.rotationDue(), 'age')
      await log.rotate('age')
      assert.equal(log.rotationDue(), undefined)
      await log.close()
    })

    test('a segment whose written and buffered bytes reach the size limit is due for size', async (t) => {
      const log = logIn(await temporaryDirectory(t), { limits: { maxFileSizeBytes: 4096 }, rowGroupRows: 8 })
      let offset = 100
      while (log.rotationDue() === undefined) {
        await log.append(events(offset, 8, 1, 1), BigInt(offset + 8))
        offset += 8
        assert.ok(offset < 10_000, 'the size trigger never fired')
      }
      assert.equal(log.rotationDue(), 'size')
      const rotation = await log.rotate('size')
      assert.ok(rotation?.segments[0])
      assert.ok(rotation.segments[0].sizeBytes >= 4096 / 4, 'a file near the limit (estimates are uncompressed)')
      await log.close()
    })

    test('the oldest open segment decides the age', async (t) => {
      const clock = new SettableClock()
      const log = logIn(await temporaryDirectory(t), { clock, limits: { maxFileAgeMs: 1000 } })
      await log.append(events(0, 1, 1, 1), 101n)
      clock.time += 600
      await log.append(events(1, 1, 2, 1), 102n) // a second, younger segment
      assert.equal(log.openSegmentCount, 2)
      clock.time += 399
      assert.equal(log.rotationDue(), undefined)
      assert.equal(log.rotationDue(clock.time + 1), 'age')
      clock.time += 1
      assert.equal(log.rotationDue(), 'age')
      await log.close()
    })

    test('more open segments than the limit are due for segments', async (t) => {
      const log = logIn(await temporaryDirectory(t), { limits: { maxOpenSegments: 3 } })
      await log.append(events(0, 3, 3, 1), 103n)
      assert.equal(log.rotationDue(), undefined, 'three is the limit, not over it')
      await log.append(events(3, 4, 4, 1), 107n)
      assert.equal(log.openSegmentCount, 4)
      assert.equal(log.rotationDue(), 'segments')
      await log.close()
    })
  })

  test('memory accounting rises with appends and falls with a rotation; ready bytes with an upload', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir)
    assert.equal(log.bufferedBytes, 0)
    await log.append(events(0, 20), 120n)
    const after20 = log.bufferedBytes
    assert.ok(after20 > 0)
    await log.append(events(20, 20), 140n)
    assert.ok(log.bufferedBytes > after20)
    assert.equal(log.readyBytes, 0)
    const rotation = await log.rotate('memory')
    assert.ok(rotation)
    assert.equal(log.bufferedBytes, 0)
    const total = rotation.segments.reduce((sum, segment) => sum + segment.sizeBytes, 0)
    assert.equal(log.readyBytes, total)
    const [first] = rotation.segments
    assert.ok(first)
    await log.markUploaded(first, 'file:///warehouse/t/data/x.parquet')
    assert.equal(log.readyBytes, total - first.sizeBytes)
    await log.close()
  })

  test('flushRowGroups writes buffered rows out without a rotation', async (t) => {
    const log = logIn(await temporaryDirectory(t))
    await log.append(events(0, 40), 140n)
    assert.ok(log.bufferedBytes > 0)
    await log.flushRowGroups()
    assert.equal(log.bufferedBytes, 0)
    assert.equal(log.openSegmentCount, 4)
    const rotation = await log.rotate('commit')
    assert.equal(
      rotation?.segments.reduce((sum, s) => sum + s.dataFile.recordCount, 0n),
      40n,
    )
    await log.close()
  })

  test('markUploaded records the location in the sidecar, replacing it whole', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir)
    await log.append(events(0, 10), 110n)
    const rotation = await log.rotate('commit')
    const segment = rotation?.segments[0]
    assert.ok(segment)
    const updated = await log.markUploaded(segment, 'abfss://lake/t/data/a.parquet')
    assert.equal(updated?.uploadedLocation, 'abfss://lake/t/data/a.parquet')
    assert.deepEqual({ ...updated, uploadedLocation: undefined }, { ...segment, uploadedLocation: undefined })
    assert.match(await readFile(segment.jsonPath, 'utf8'), /"uploadedLocation":"abfss:\/\/lake\/t\/data\/a.parquet"/)
    assert.ok((await filesIn(dir)).every((name) => !name.endsWith('.tmp')))
    const recovered = (await recoverPartition(dir, 100n)).segments.find((ready) => ready.uuid === segment.uuid)
    assert.equal(recovered?.uploadedLocation, 'abfss://lake/t/data/a.parquet')
    assert.equal(await log.markUploaded({ uuid: '00000000-0000-4000-8000-000000000000' }, 'x'), undefined)
    await log.close()
  })

  test('deleteUpTo deletes the ready files whose range ends at or before the offset', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir)
    await log.append(events(0, 10), 110n)
    await log.rotate('size')
    await log.append(events(10, 10), 120n)
    await log.rotate('commit')
    assert.deepEqual(await log.deleteUpTo(109n), [])
    const deleted = await log.deleteUpTo(110n)
    assert.equal(deleted.length, 4)
    assert.ok(deleted.every((segment) => segment.end === 110n))
    assert.ok((await filesIn(dir)).every((name) => name.includes('_110-120_')))
    assert.ok(log.readySegments.every((segment) => segment.start === 110n))
    await log.close()
  })

  test('deleteSegments deletes exactly the named segments', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir)
    await log.append(events(0, 10), 110n)
    const rotation = await log.rotate('commit')
    const [a, b] = rotation?.segments ?? []
    assert.ok(a && b)
    await log.deleteSegments([a.uuid, b.uuid])
    assert.equal((await filesIn(dir)).length, 4)
    assert.ok((await filesIn(dir)).every((name) => !name.includes(a.uuid) && !name.includes(b.uuid)))
    assert.equal(log.readySegments.length, 2)
    await log.close()
  })

  test('dropUncommitted discards open and ready files and restarts the range at the given offset', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir)
    await log.append(events(0, 10), 110n)
    await log.rotate('commit')
    await log.append(events(10, 10), 120n)
    // a stale rotation of an earlier run the log was not told about, and a file that is not the WAL's
    const stale = readyFileName(topic, partition, 50n, 60n, '0f8fad5b-d9cb-469f-a165-70867728950e', 'parquet')
    await writeFile(join(dir, stale), '')
    await writeFile(join(dir, 'operator-notes.txt'), '')
    await log.dropUncommitted(105n)
    assert.deepEqual(await filesIn(dir), ['operator-notes.txt'])
    assert.equal(log.start, 105n)
    assert.equal(log.end, 105n)
    assert.equal(log.readyBytes, 0)
    assert.equal(log.openSegmentCount, 0)
    await log.append(events(5, 10), 115n)
    assert.equal((await log.rotate('commit'))?.start, 105n)
    await log.close()
  })

  test('a failed write fails the log until dropUncommitted', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir)
    await log.append(events(0, 4), 104n)
    const bad = { ...events(4, 1)[0], event_id: null }
    await assert.rejects(log.append([...events(5, 3), bad], 108n), (error) => isFloeError(error, 'RECORD_MALFORMED'))
    assert.equal(log.state, 'failed')
    assert.equal(log.end, 104n, 'the batch did not advance the range')
    await assert.rejects(log.append(events(8, 1), 109n), (error) => isFloeError(error, 'RECORD_MALFORMED'))
    await assert.rejects(log.rotate('commit'), (error) => isFloeError(error, 'RECORD_MALFORMED'))
    assert.equal(log.rotationDue(), undefined)
    await log.dropUncommitted(100n)
    assert.equal(log.state, 'open')
    await log.append(events(0, 8), 108n)
    assert.equal((await log.rotate('commit'))?.end, 108n)
    await log.close()
  })

  test('operations run in call order without being awaited one by one', async (t) => {
    const log = logIn(await temporaryDirectory(t))
    const appended = [log.append(events(0, 10), 110n), log.append(events(10, 10), 120n)]
    const first = log.rotate('size')
    const third = log.append(events(20, 5), 125n)
    const second = log.rotate('commit')
    await Promise.all([...appended, third])
    assert.deepEqual(
      [(await first)?.start, (await first)?.end, (await second)?.start, (await second)?.end],
      [100n, 120n, 120n, 125n],
    )
    await log.close()
  })

  test('an unpartitioned table has one segment with an empty partition path', async (t) => {
    const log = logIn(await temporaryDirectory(t), { spec: unpartitioned })
    await log.append(events(0, 40), 140n)
    assert.equal(log.openSegmentCount, 1)
    const rotation = await log.rotate('commit')
    assert.equal(rotation?.segments.length, 1)
    assert.equal(rotation?.segments[0]?.partitionPath, '')
    assert.deepEqual(rotation?.segments[0]?.partitionValues, {})
    assert.equal(rotation?.segments[0]?.dataFile.specId, 0)
    await log.close()
  })

  test('close discards open segments, keeps ready files and refuses further work', async (t) => {
    const dir = await temporaryDirectory(t)
    const log = logIn(dir)
    await log.append(events(0, 10), 110n)
    await log.rotate('commit')
    await log.append(events(10, 10), 120n)
    await log.close()
    assert.equal(log.state, 'closed')
    assert.deepEqual([...new Set(await kinds(dir))].sort(), ['ready-json', 'ready-parquet'])
    await assert.rejects(log.append([], 130n), (error) => isFloeError(error, 'INVARIANT_BROKEN'))
    await assert.rejects(log.deleteUpTo(200n), (error) => isFloeError(error, 'INVARIANT_BROKEN'))
  })

  test('a bad configuration is refused when the log is made', () => {
    for (const options of [
      { partition: -1 },
      { topic: '' },
      { startOffset: -1n },
      { limits: { maxOpenSegments: 0 } },
      { spec: { 'spec-id': 2, fields: [{ 'source-id': 99, 'field-id': 1000, name: 'x', transform: 'identity' }] } },
    ]) {
      assert.throws(
        () => logIn('/nonexistent', options),
        (error) => isFloeError(error, 'CONFIG_INVALID'),
      )
    }
  })
})
