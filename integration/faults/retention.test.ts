// Kafka retention under a live worker, on the real stack (docs/design.md invariants 3 and 10): records
// deleted on one partition past the worker's position are handled for that partition alone, the
// partition resumes at the log start, the records are counted and logged as skipped once, the
// table's progress and lost-records summary say where it resumed, and what the worker had already
// written to its WAL before the log start passed it is committed, not thrown away.
import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  decodeRotationManifest,
  jumpFileName,
  parseSharedFileName,
  parseWalFileName,
  sharedLogDirectory,
} from '../../participant/wal/index.ts'
import { GroupReader, KafkaAdmin, KafkaProducer } from '../../shared/kafka/index.ts'
import { assertEveryIdOnce, Fleet, type WorkerProcess } from '../e2e/fleet.ts'
import { endpoints, uniqueName } from '../harness.ts'

const connection = (clientId: string) => ({ brokers: endpoints().kafka.brokers, clientId })

/**
 * The ranges of a partition's finished WAL files, in either layout: the per-partition layout
 * names them in its file names, the shared one in its rotation manifests (empty ranges left out).
 */
async function readyRangesOf(walDir: string, topic: string, partition: number) {
  const ranges: Array<{ start: bigint; end: bigint; after?: bigint }> = []
  for (const name of await readdir(join(walDir, 'events', `${topic}-${partition}`)).catch(() => [] as string[])) {
    const file = parseWalFileName(name)
    if (file?.kind === 'ready-parquet' && file.start !== undefined && file.end !== undefined) {
      ranges.push({ start: file.start, end: file.end })
    }
  }
  const shared = sharedLogDirectory(walDir, 'events')
  for (const name of await readdir(shared).catch(() => [] as string[])) {
    if (parseSharedFileName(name)?.kind !== 'rotation') continue
    const manifest = decodeRotationManifest(await readFile(join(shared, name), 'utf8'))
    for (const range of manifest.ranges) {
      if (range.topic === topic && range.partition === partition && range.end > range.start) ranges.push(range)
    }
  }
  return ranges
}

/**
 * A machine that committed 100 records on each of 2 partitions and was drained, started again
 * committing only on a long interval and rotating by size: what it reads next becomes ready WAL
 * files that no round takes (until the test kills it). One member, whatever FLOE_TEST_THREADS says:
 * the tests read that member's WAL folders.
 */
async function restartedWithoutRounds(t: TestContext, walLayout: 'shared' | 'partition' = 'shared') {
  const interval = 2
  const fleet = await Fleet.create(t, { partitions: 2, commitIntervalSeconds: interval, threads: 1, walLayout })
  const admin = new KafkaAdmin(connection('it-retention-restart-admin'))
  t.after(() => admin.close())
  // Each start of the machine logs to a file of its own (Fleet.start).
  const starts = (w: { lines(): Record<string, unknown>[] }) =>
    w.lines().filter((l) => l.msg === 'worker started').length
  const first = await fleet.start('machine')
  await fleet.waitFor(() => starts(first) === 1, 60_000, 'the worker to start')
  for (const partition of [0, 1]) await fleet.produce(100, { batch: 100, partition: partition })
  assert.equal((await fleet.waitUntilAllSeen(120_000)).ids?.missing, 0)
  first.kill('SIGTERM')
  assert.equal(await first.exited, 0)
  const second = await fleet.start('machine', {
    FLOE_INGESTION__COMMIT_INTERVAL_SECONDS: '600',
    FLOE_INGESTION__WAL__MAX_FILE_SIZE_BYTES: '4096',
  })
  await fleet.waitFor(() => starts(second) === 1, 60_000, 'the restarted worker to start')
  return { fleet, admin, second, interval }
}

/** The `floe.lost-records.*` summaries of the table's snapshots, parsed. */
function lostRecordSummaries(settled: Awaited<ReturnType<Fleet['waitSettled']>>): unknown[] {
  return settled.snapshots
    .flatMap((s) => Object.entries(s.summary).filter(([k]) => k.startsWith('floe.lost-records.')))
    .map(([, v]) => JSON.parse(v))
}

/** Kills the worker once a ready file of partition 1 starts at `start`; the partition's ready ranges then. */
async function killedOnceRotated(fleet: Fleet, worker: WorkerProcess, start: bigint) {
  const ranges = () => readyRangesOf(fleet.walDir('machine'), fleet.topic, 1)
  const deadline = Date.now() + 60_000
  while (!(await ranges()).some((r) => r.start === start)) {
    assert.ok(Date.now() < deadline, `no ready file starting at ${start} was rotated`)
    await sleep(100)
  }
  worker.kill('SIGKILL')
  await worker.exited
  return ranges()
}

describe('retention past a reader on the real broker', { concurrency: false }, () => {
  test('one partition deleted past its position comes back out of range while the other partition of the same fetch is read', async (t) => {
    const admin = new KafkaAdmin(connection('it-retention-admin'))
    t.after(() => admin.close())
    const topic = uniqueName('it_retention_fetch')
    await admin.ensureTopic(topic, 2)
    const producer = new KafkaProducer(connection('it-retention-producer'))
    const records = []
    for (let i = 0; i < 20; i++) records.push({ topic, partition: i % 2, value: Buffer.from(`v${i}`) })
    await producer.send(records)
    await producer.close()
    assert.deepEqual(await admin.deleteRecords(topic, new Map([[1, 6n]])), new Map([[1, 6n]]))

    const reader = new GroupReader(connection('it-retention-reader'), {
      groupId: uniqueName('it-retention-group'),
      topic,
      sessionTimeoutMs: 10_000,
    })
    t.after(() => reader.leave().catch(() => {}))
    await reader.join()
    const fetched = await reader.fetch(
      new Map([
        [0, 0n],
        [1, 2n],
      ]),
    )
    const zero = fetched.find((p) => p.partition === 0)
    const one = fetched.find((p) => p.partition === 1)
    assert.equal(zero?.outOfRange, false)
    assert.equal(zero?.next, 10n)
    assert.equal(
      zero?.batches.reduce((n, b) => n + b.records.length, 0),
      10,
    )
    assert.equal(one?.outOfRange, true)
    assert.equal(one?.error, 'OFFSET_OUT_OF_RANGE')
    assert.equal(one?.next, 2n)
    await admin.deleteTopic(topic)
  })

  // The shared layout is the default; the per-partition one reports its kept files and the jump itself.
  for (const walLayout of ['shared', 'partition'] as const) {
    test(`records deleted past a paused worker on one partition: the others keep committing, the gap is reported, nothing read is thrown away (${walLayout} WAL)`, async (t) => {
      // Rounds of one second: most runs have a round whose cut took the WAL's records still open when
      // the partition comes back out of range after the freeze below, the ordering where the round's
      // status and the resync's jump must agree (with 5 s rounds about one run in twenty-five).
      const interval = 1
      const fleet = await Fleet.create(t, {
        partitions: 3,
        commitIntervalSeconds: interval,
        commitTimeoutSeconds: 10,
        walLayout,
      })
      const admin = new KafkaAdmin(connection('it-retention-admin'))
      t.after(() => admin.close())
      const worker = await fleet.start()
      await fleet.waitFor(() => worker.logged('worker started'), 60_000, 'the worker to start')
      for (const partition of [0, 1, 2]) await fleet.produce(200, { batch: 200, partition: partition })
      const settled = await fleet.waitUntilAllSeen(120_000)
      assert.equal(settled.ids?.missing, 0)

      // Read into the WAL but not committed yet (the next round is up to `interval` s away): these
      // records are gone from Kafka once the worker resumes, and only the WAL still has them.
      const written = async () => (await fleet.metrics(worker)).get('floe_records_written_total{dataset="events"}') ?? 0
      const before = await written()
      const walOnly = await fleet.produce(150, { batch: 150, partition: 1 })
      const deadline = Date.now() + 30_000
      while ((await written()) < before + walOnly.length) {
        assert.ok(Date.now() < deadline, 'the worker did not read the records')
        await sleep(50)
      }
      worker.kill('SIGSTOP')
      t.after(() => worker.kill('SIGCONT'))
      // A fetch the worker had waiting at the broker when it froze is still answered, with the first
      // records that arrive or empty after its wait (500 ms), into the frozen process's socket, and
      // read when it wakes. Past that wait no fetch of the frozen worker can take the doomed records
      // (a member that reads partition 1 alone would otherwise have them before they are deleted).
      await sleep(1500)

      for (const partition of [0, 2]) await fleet.produce(100, { batch: 100, partition: partition })
      const doomed = await fleet.produce(300, { batch: 300, partition: 1 })
      const [logEnd] = [...(await admin.endOffsets(fleet.topic, [1])).values()]
      assert.ok(logEnd !== undefined)
      await admin.deleteRecords(fleet.topic, new Map([[1, logEnd]]))
      fleet.ids.splice(fleet.ids.indexOf(doomed[0] as string), doomed.length)
      for (const partition of [0, 1, 2]) await fleet.produce(100, { batch: 100, partition: partition })
      worker.kill('SIGCONT')

      // A late duplicate or a late arrival of a deleted record must have time to show.
      const settledReport = await fleet.waitSettled(180_000, 3 * interval * 1000)
      assertEveryIdOnce(fleet, settledReport)

      // The table says where partition 1 resumed and what it lost: exactly the deleted records the
      // worker never read (what it had in its WAL is in the table, asserted above).
      const summaries = settledReport.snapshots.map((s) => s.summary)
      const lostKey = Object.keys(
        summaries.find((s) => Object.keys(s).some((k) => k.startsWith('floe.lost-records.'))) ?? {},
      ).find((k) => k.startsWith('floe.lost-records.'))
      assert.ok(lostKey, 'a snapshot records the lost records')
      const lostSummaries = summaries
        .filter((s) => s[lostKey] !== undefined)
        .map((s) => JSON.parse(s[lostKey] as string))
      assert.deepEqual(lostSummaries, [{ [fleet.topic]: { '1': doomed.length } }])
      const group = lostKey.slice('floe.lost-records.'.length)
      const offsets = JSON.parse(summaries.at(-1)?.[`floe.offsets.${group}`] ?? '{}') as Record<
        string,
        Record<string, number>
      >
      const [finalEnd] = [...(await admin.endOffsets(fleet.topic, [1])).values()]
      assert.equal(BigInt(offsets[fleet.topic]?.['1'] ?? -1), finalEnd)

      // Only partition 1 went out of range and resynced; the resync kept the WAL's files (unless a
      // round happened to commit them between the read and the pause: then the jump starts there).
      const resyncs = worker.lines().filter((l) => l.msg === 'partition synced' && l.reason === 'out-of-range')
      assert.deepEqual(
        resyncs.map((l) => l.partition),
        [1],
      )
      const kept = resyncs[0]?.chainStart !== resyncs[0]?.position
      t.diagnostic(
        kept
          ? 'the WAL files read before the pause were kept and committed with the jump'
          : 'committed before the pause',
      )
      // reusedFiles in the per-partition layout, reusedRotations in the shared one
      if (kept) assert.ok(Number(resyncs[0]?.reusedFiles ?? resyncs[0]?.reusedRotations) > 0)

      // The participant counted and logged the skipped range once.
      const skippedLines = worker.lines().filter((l) => typeof l.skippedFrom === 'string')
      assert.equal(skippedLines.length, 1, JSON.stringify(skippedLines))
      assert.equal(BigInt(skippedLines[0]?.skippedTo as string), logEnd)
      assert.equal(BigInt(skippedLines[0]?.skipped as string), BigInt(doomed.length))
      const metrics = await fleet.metrics(worker)
      assert.equal(metrics.get('floe_records_skipped_total{dataset="events",reason="retention"}'), doomed.length)
      assert.equal(metrics.get('floe_records_lost_to_retention_total{dataset="events"}'), doomed.length)
    })
  }
})

describe('retention past a restarted worker on the real stack', () => {
  test('ready WAL files kept across a restart are committed before the log-start jump, which starts where they end', async (t) => {
    const { fleet, admin, second, interval } = await restartedWithoutRounds(t)
    const read = await fleet.produce(200, { batch: 200, partition: 1 })
    // Where the kept chain ends: the files from the table's offset (100) on, chained.
    const ranges = await killedOnceRotated(fleet, second, 100n)
    let kept = 100n
    for (;;) {
      const next = ranges.find((r) => r.start === kept)
      if (!next) break
      kept = next.end
    }
    assert.ok(kept > 100n, `ready files ${JSON.stringify(ranges, (_, v) => (typeof v === 'bigint' ? Number(v) : v))}`)

    // Records the machine never read, then retention takes everything up to the end.
    const doomed = await fleet.produce(150, { batch: 150, partition: 1 })
    const [logEnd] = [...(await admin.endOffsets(fleet.topic, [1])).values()]
    assert.equal(logEnd, 450n)
    await admin.deleteRecords(fleet.topic, new Map([[1, 450n]]))
    // Partition 1 held offsets 100.. in production order: what the WAL kept is expected, the rest is gone.
    const gone = new Set([...read.slice(Number(kept - 100n)), ...doomed])
    fleet.ids.splice(0, fleet.ids.length, ...fleet.ids.filter((id) => !gone.has(id)))
    for (const partition of [0, 1]) await fleet.produce(50, { batch: 50, partition: partition })

    // It joins once the killed member's session has expired.
    const third = await fleet.start('machine')
    const settled = await fleet.waitSettled(240_000, 3 * interval * 1000)
    assertEveryIdOnce(fleet, settled)

    const lost = lostRecordSummaries(settled)
    assert.deepEqual(lost, [{ [fleet.topic]: { '1': Number(450n - kept) } }])
    const synced = third
      .lines()
      .filter((l) => l.msg === 'partition synced' && l.partition === 1)
      .at(-1)
    assert.equal(synced?.chainStart, '100')
    assert.equal(synced?.position, '450')
    const skipped = third.lines().filter((l) => typeof l.skippedFrom === 'string')
    assert.deepEqual(
      skipped.map((l) => [l.skippedFrom, l.skippedTo]),
      [[String(kept), '450']],
    )
  })

  // The shared layout records the jump in the first rotation manifest past it, the per-partition
  // one in a marker file named by the jump.
  for (const walLayout of ['shared', 'partition'] as const) {
    test(`files read past a log-start jump keep it across a restart while retention moves on into them: only what Kafka deleted unread is lost (${walLayout} WAL)`, async (t) => {
      // One member: the test reads that member's WAL.
      const { fleet, admin, second, interval } = await restartedWithoutRounds(t, walLayout)
      const read = await fleet.produce(200, { batch: 200, partition: 1 })
      const synced = (position: string) =>
        second.lines().some((l) => l.msg === 'partition synced' && l.partition === 1 && l.position === position)
      // Frozen once it read offsets up to 300, its next fetch finds [300, 400) deleted unread.
      const received = async () => {
        const metrics = await fleet.metrics(second).catch(() => new Map<string, number>())
        return [...metrics].find(([name]) => name.startsWith('floe_records_received_total'))?.[1] ?? 0
      }
      const readDeadline = Date.now() + 60_000
      while ((await received()) < read.length) {
        assert.ok(Date.now() < readDeadline, 'the worker did not read the 200 records')
        await sleep(100)
      }
      second.freeze()
      t.after(() => second.thaw())
      // A fetch waiting at the broker when it froze is answered (empty, after its 500 ms wait) before
      // the records below arrive: the frozen worker cannot have them.
      await sleep(1500)
      const deletedUnread = await fleet.produce(100, { batch: 100, partition: 1 })
      // enough that the files past the jump reach the size limit and rotate
      await fleet.produce(1000, { batch: 500, partition: 1 })
      await admin.deleteRecords(fleet.topic, new Map([[1, 400n]]))
      second.thaw()
      await fleet.waitFor(() => synced('400'), 60_000, 'the out-of-range resync to read on from 400')
      // What it read past the jump becomes ready files, the first of them recording the jump.
      const firstPast = (await killedOnceRotated(fleet, second, 400n)).find((r) => r.start === 400n)
      if (walLayout === 'shared') {
        assert.equal(firstPast?.after, 300n, 'the first range past the jump records where its chain ended')
      } else {
        const folder = join(fleet.walDir('machine'), 'events', `${fleet.topic}-1`)
        assert.ok((await readdir(folder)).includes(jumpFileName(fleet.topic, 1, { from: 300n, to: 400n })))
      }

      // Retention moves on into the files past the jump, while no worker runs.
      const logStart = ((firstPast?.start as bigint) + (firstPast?.end as bigint)) / 2n
      await admin.deleteRecords(fleet.topic, new Map([[1, logStart]]))
      for (const partition of [0, 1]) await fleet.produce(50, { batch: 50, partition: partition })
      // left out of the expected ids only now: an id is named by how many were produced before it
      const gone = new Set(deletedUnread)
      fleet.ids.splice(0, fleet.ids.length, ...fleet.ids.filter((id) => !gone.has(id)))

      const third = await fleet.start('machine')
      const settled = await fleet.waitSettled(240_000, 3 * interval * 1000)
      // Every record it had read is in the table once, those past the jump included.
      assertEveryIdOnce(fleet, settled)
      const lost = lostRecordSummaries(settled)
      assert.deepEqual(lost, [{ [fleet.topic]: { '1': 100 } }])
      const resynced = third
        .lines()
        .filter((l) => l.msg === 'partition synced' && l.partition === 1)
        .at(-1)
      assert.equal(resynced?.chainStart, '100')
      // counted by the worker that read past it; the restart keeps the jump without counting it again
      assert.deepEqual(
        third.lines().filter((l) => typeof l.skippedFrom === 'string'),
        [],
      )
    })
  }
})
