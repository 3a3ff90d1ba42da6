// The participant on the real stack: Kafka, the Iceberg REST catalog, Azurite. Participants consume
// a 3-partition topic into WAL files, answer rounds that the test drives over the real control
// topic, upload to Azurite, and the committed table is read back by pyiceberg. Also: a restart on
// the same WAL reuses the ready files that start at the table's offset, and a WAL volume past its
// watermark pauses consuming until a round's ACK frees it, with nothing lost.
import assert from 'node:assert/strict'
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Backpressure, systemClock, systemTimers, walDiskUsage } from '../../participant/index.ts'
import { ControlChannel } from '../../protocol/index.ts'
import { type Catalog, openCatalog } from '../../shared/catalog/index.ts'
import { KafkaAdmin, KafkaProducer } from '../../shared/kafka/index.ts'
import { RoutedStorage } from '../../shared/storage/index.ts'
import { createLogger } from '../../shared/telemetry/index.ts'
import { azuriteLocation } from '../catalog/probe.ts'
import { endpoints, uniqueName, verifyTable } from '../harness.ts'
import {
  badEvent,
  connection,
  createDatasetTable,
  datasetConfig,
  goodEvent,
  idsFile,
  type ParticipantHarness,
  participantFor,
  produce,
  readTopic,
  TestCoordinator,
  waitFor,
  walFiles,
} from './support.ts'

const PARTITIONS = 3
const generous = { diskHighWatermarkPct: 80, maxPendingUploadBytes: 1 << 30, maxOpenSegmentMemoryBytes: 1 << 30 }

describe('the participant on Kafka, the REST catalog and Azurite', () => {
  let catalog: Catalog
  let admin: KafkaAdmin
  let dlqProducer: KafkaProducer
  let channel: ControlChannel
  let scratch: string
  const storage = new RoutedStorage({ azure: { connectionString: endpoints().azurite.connectionString } })
  const stops: (() => Promise<void>)[] = []

  before(async () => {
    catalog = await openCatalog({ type: 'rest', uri: endpoints().rest.uri })
    admin = new KafkaAdmin(connection('floe-it-participant-admin'))
    dlqProducer = new KafkaProducer(connection('floe-it-participant-dlq'))
    scratch = await mkdtemp(join(tmpdir(), 'floe-it-participant-'))
    channel = new ControlChannel({
      connection: connection('floe-it-participant-control'),
      topic: uniqueName('it_participant_control'),
      groupPrefix: 'floe-it',
      workerId: uniqueName('w'),
      logger: createLogger({ level: 'warn' }),
    })
    await channel.start()
  })

  after(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {})
    await channel.close()
    await dlqProducer.close()
    await admin.close()
    await catalog.close()
    await rm(scratch, { recursive: true, force: true })
  })

  /** A fresh topic, DLQ topic, dataset, table on Azurite, and the stand-in coordinator. */
  async function fixture(prefix: string) {
    const topic = uniqueName(prefix)
    const names = { name: topic, topic, table: `${topic}.events`, dlqTopic: `${topic}_dlq` }
    await admin.ensureTopic(topic, PARTITIONS)
    await admin.ensureTopic(names.dlqTopic, 1)
    const dataset = datasetConfig(names)
    const group = `floe-it-${topic}`
    const dataLocation = azuriteLocation(`${topic}/events/data`)
    const created = await createDatasetTable(catalog, dataset, group, dataLocation)
    const coordinator = new TestCoordinator({
      channel,
      catalog,
      storage,
      identifier: created.identifier,
      dataset,
      group,
      partitions: PARTITIONS,
    })
    const walDir = await mkdtemp(join(scratch, 'wal-'))
    return { topic, names, dataset, group, dataLocation, ...created, coordinator, walDir }
  }

  function backpressure(
    walDir: string,
    volumeSizeBytes = 2 ** 40,
    diskCheckIntervalMs = 100,
    limits: Partial<typeof generous> = {},
  ): Backpressure {
    const monitor = new Backpressure({
      limits: { ...generous, ...limits },
      measureDisk: walDiskUsage(walDir, { volumeSizeBytes }),
      clock: systemClock,
      timers: systemTimers,
      diskCheckIntervalMs,
    })
    monitor.start()
    stops.push(async () => monitor.stop())
    return monitor
  }

  type Fixture = Awaited<ReturnType<typeof fixture>>

  async function startParticipant(
    f: Fixture,
    workerId: string,
    monitor: Backpressure,
    wal: { maxFileSizeBytes?: number } = {},
    walDir = f.walDir,
  ): Promise<ParticipantHarness> {
    const harness = participantFor({
      dataset: f.dataset,
      group: f.group,
      workerId,
      autoOffsetReset: 'earliest',
      maxRecordBytes: 1 << 20,
      table: f.table,
      admin,
      producer: dlqProducer,
      backpressure: monitor,
      send: (message) => channel.send(message),
      storage,
      walDir,
      wal,
    })
    const unregister = channel.register(harness.participant)
    await harness.participant.start()
    stops.push(async () => {
      unregister()
      await harness.participant.stop({ leave: true })
    })
    return harness
  }

  async function stopParticipant(harness: ParticipantHarness): Promise<void> {
    await harness.participant.stop({ leave: true })
  }

  async function checkTable(f: Fixture, goodIds: string[]) {
    const report = await verifyTable(`${f.names.table}`, { idsFile: await idsFile(scratch, goodIds) })
    assert.equal(report.error, undefined)
    assert.equal(report.rows, goodIds.length)
    assert.deepEqual(
      report.ids && { expected: report.ids.expected, found: report.ids.found, missing: report.ids.missing },
      { expected: goodIds.length, found: goodIds.length, missing: 0 },
    )
    assert.equal(report.ids?.duplicated, 0)
    assert.equal(report.ids?.unexpected, 0)
  }

  test('two participants consume three partitions into uploaded files, report each round in one status per worker, and the table holds exactly the good records', async () => {
    const f = await fixture('it_part')
    const monitor = backpressure(f.walDir)
    const a = await startParticipant(f, 'worker-a', monitor)
    const otherWal = await mkdtemp(join(scratch, 'wal-b-'))
    const b = await startParticipant(f, 'worker-b', monitor, {}, otherWal)
    await waitFor('the partitions to split between the two workers', () => {
      const [x, y] = [a.participant.assigned, b.participant.assigned]
      return x.length > 0 && y.length > 0 && x.length + y.length === PARTITIONS && !x.some((p) => y.includes(p))
    })

    const total = 3000
    const events = Array.from({ length: total }, (_, index) =>
      index % 100 === 7 ? { index, ...badEvent(index) } : { index, value: goodEvent(index), reason: undefined },
    )
    await produce(f.topic, events, PARTITIONS)
    const received = async () => (await a.received()) + (await b.received())
    await waitFor(`${total} records consumed`, async () => (await received()) === total)
    const ends = await admin.endOffsets(f.topic, [0, 1, 2])

    const first = await f.coordinator.round()
    assert.equal(first.messages.length, 2, 'one WRITE-STATUS per worker')
    assert.deepEqual(first.messages.map((m) => m.sender.workerId).sort(), ['worker-a', 'worker-b'])
    for (const message of first.messages) {
      const mine = message.sender.workerId === 'worker-a' ? a.participant.assigned : b.participant.assigned
      assert.deepEqual(message.body.partitions.map((p) => p.partition).sort(), mine)
    }
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const status = first.statuses.get(partition)
      assert.equal(status?.kind, 'data')
      assert.equal(status?.rangeStart, 0n, `partition ${partition} starts at the log start`)
      assert.equal(status?.rangeEnd, ends.get(partition), `partition ${partition} ends at the end offset`)
      assert.equal(status?.origin, 'offset-reset')
      assert.equal(typeof status?.oldestTimestampMs, 'number', 'the oldest record time travels for the latency metric')
    }
    const bad = events.filter((e) => e.reason !== undefined)
    const good = events.filter((e) => e.reason === undefined).map((e) => `e-${e.index}`)
    assert.equal(
      first.files.reduce((sum, file) => sum + Number(file.recordCount), 0),
      good.length,
    )
    for (const file of first.files) {
      assert.ok(file.filePath.startsWith(`${f.dataLocation}/kind=`), file.filePath)
      assert.equal(await storage.exists(file.filePath), true, `${file.filePath} is in storage`)
    }
    for (const status of first.statuses.values()) {
      for (const entry of status.files) {
        assert.equal(entry.bloomFilterLocation, `${entry.filePath}.bloom`)
        assert.equal(await storage.exists(`${entry.filePath}.bloom`), true, 'the bloom-filter sidecar is in storage')
      }
    }

    const dead = await readTopic(f.names.dlqTopic, bad.length)
    const header = (record: (typeof dead)[number], name: string) =>
      [...record.headers].find(([key]) => key.toString() === name)?.[1].toString()
    assert.deepEqual(
      dead
        .map(
          (r) =>
            `${header(r, 'floe.source.partition')}/${header(r, 'floe.source.offset')} ${header(r, 'floe.dlq.reason')}`,
        )
        .sort(),
      bad
        .map((e) => {
          const partition = e.index % PARTITIONS
          const offset = events.filter((x) => x.index % PARTITIONS === partition && x.index < e.index).length
          return `${partition}/${offset} ${e.reason}`
        })
        .sort(),
    )
    await checkTable(f, good)

    // the ACK named every file: each worker's WAL is empty again
    await waitFor('the WALs to be emptied by the ACK', async () => {
      const left = [...(await walFiles(f.walDir, f.dataset.name)), ...(await walFiles(otherWal, f.dataset.name))]
      return left.length === 0
    })

    // a second round chains from the table's offsets
    const more = Array.from({ length: 600 }, (_, k) => ({ index: total + k, value: goodEvent(total + k) }))
    await produce(f.topic, more, PARTITIONS)
    await waitFor('the second batch consumed', async () => (await received()) === total + more.length)
    const second = await f.coordinator.round()
    const endsAfter = await admin.endOffsets(f.topic, [0, 1, 2])
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const status = second.statuses.get(partition)
      assert.equal(status?.rangeStart, ends.get(partition))
      assert.equal(status?.rangeEnd, endsAfter.get(partition))
      assert.equal(status?.origin, 'table')
    }
    await checkTable(f, [...good, ...more.map((e) => `e-${e.index}`)])
    await stopParticipant(a)
    await stopParticipant(b)
  })

  test('a WAL volume past its watermark pauses consuming until a round frees it, then resumes, and every record lands once', async (t) => {
    const f = await fixture('it_watermark')
    // ready files of this dataset take ~5 bytes a record (zstd Parquet): 32 KiB is passed after a
    // few thousand records, measured every 25 ms so the consumer does not run far past it
    const volumeSizeBytes = 32 * 1024
    const monitor = backpressure(f.walDir, volumeSizeBytes, 25)
    let pauses = 0
    let resumes = 0
    monitor.on('pause', () => pauses++)
    monitor.on('resume', () => resumes++)
    const a = await startParticipant(f, 'worker-a', monitor, { maxFileSizeBytes: 16 * 1024 })
    const total = 20_000
    const events = Array.from({ length: total }, (_, index) => ({ index, value: goodEvent(index, 200) }))
    await produce(f.topic, events, PARTITIONS)

    await waitFor('the WAL volume to pass its watermark', () => monitor.paused)
    const atPause = await a.received()
    t.diagnostic(`paused after ${atPause} records at ${monitor.diskUsedPct.toFixed(1)}% of ${volumeSizeBytes} bytes`)
    assert.ok(atPause < total, 'consuming stopped before the end of the topic')
    assert.deepEqual(monitor.reasons, ['disk'])

    // While paused, nothing is consumed: the round commits what the WAL holds, and only the ACK
    // (which deletes the committed files) lets the volume drop below the resume mark.
    const first = await f.coordinator.round({ ack: false })
    const afterFlush = await a.received()
    assert.equal(monitor.paused, true)
    const tableNow = await f.table.offsets(f.topic)
    assert.deepEqual(
      [...first.statuses.values()].map((s) => s.rangeEnd).reduce((x, y) => x + y, 0n),
      [...tableNow.values()].reduce((x, y) => x + y, 0n),
    )
    assert.equal(await a.received(), afterFlush, 'nothing consumed while paused')
    await first.acknowledge()
    await waitFor('consuming to resume after the ACK', () => resumes > 0)

    let rounds = 1
    const committed = async () => [...(await f.table.offsets(f.topic)).values()].reduce((x, y) => x + y, 0n)
    while ((await committed()) < BigInt(total)) {
      await waitFor('a pause or the end of the topic', async () => monitor.paused || (await a.received()) === total)
      await f.coordinator.round()
      rounds++
      assert.ok(rounds < 100, 'the rounds make progress')
    }
    t.diagnostic(`${rounds} rounds, ${pauses} pauses, ${resumes} resumes`)
    assert.ok(pauses >= 1 && resumes >= 1)
    assert.ok(a.phases.report().shares.paused > 0, 'the perf line shows the pause')
    await checkTable(
      f,
      events.map((e) => `e-${e.index}`),
    )
    await stopParticipant(a)
  })

  test('open segments past their memory cap pause consuming until their rows are written out as row groups', async () => {
    const f = await fixture('it_memory')
    const monitor = backpressure(f.walDir, 2 ** 40, 100, { maxOpenSegmentMemoryBytes: 512 * 1024 })
    let pauses = 0
    monitor.on('pause', (reasons) => {
      if (reasons.includes('memory')) pauses++
    })
    const a = await startParticipant(f, 'worker-a', monitor)
    const events = Array.from({ length: 12_000 }, (_, index) => ({ index, value: goodEvent(index) }))
    await produce(f.topic, events, PARTITIONS)
    await waitFor('every record consumed without a round', async () => (await a.received()) === events.length)
    assert.ok(pauses >= 1, 'the memory cap paused consuming')
    await waitFor('the memory pause to lift without a round', () => !monitor.paused)
    assert.ok(monitor.openSegmentMemoryBytes < 512 * 1024)
    await f.coordinator.round()
    await checkTable(
      f,
      events.map((e) => `e-${e.index}`),
    )
    await stopParticipant(a)
  })

  test('after a lost ACK the next START puts the participant back in line, and nothing is committed twice', async () => {
    const f = await fixture('it_lost_ack')
    const monitor = backpressure(f.walDir)
    const a = await startParticipant(f, 'worker-a', monitor)
    const firstBatch = Array.from({ length: 600 }, (_, index) => ({ index, value: goodEvent(index) }))
    await produce(f.topic, firstBatch, PARTITIONS)
    await waitFor('the first batch consumed', async () => (await a.received()) === 600)
    const first = await f.coordinator.round({ ack: false })
    const committed = await f.table.offsets(f.topic)
    for (const [partition, status] of first.statuses) assert.equal(committed.get(partition), status.rangeEnd)

    const secondBatch = Array.from({ length: 600 }, (_, k) => ({ index: 600 + k, value: goodEvent(600 + k) }))
    await produce(f.topic, secondBatch, PARTITIONS)
    await waitFor('the second batch consumed', async () => (await a.received()) === 1200)
    const second = await f.coordinator.round()
    const ends = await admin.endOffsets(f.topic, [0, 1, 2])
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const status = second.statuses.get(partition)
      assert.equal(status?.rangeStart, committed.get(partition), 'the range starts at the table, not at the old chain')
      assert.equal(status?.rangeEnd, ends.get(partition))
    }
    await checkTable(
      f,
      [...firstBatch, ...secondBatch].map((e) => `e-${e.index}`),
    )
    await waitFor('the WAL to be emptied', async () => (await walFiles(f.walDir, f.dataset.name)).length === 0)
    await stopParticipant(a)
  })

  test('partitions that move to a worker joining mid-stream are read again from the table once, and the old owner drops their files', async () => {
    const f = await fixture('it_rebalance')
    const monitor = backpressure(f.walDir)
    const a = await startParticipant(f, 'worker-a', monitor)
    await waitFor('the first worker to hold every partition', () => a.participant.assigned.length === PARTITIONS)
    const firstBatch = Array.from({ length: 900 }, (_, index) => ({ index, value: goodEvent(index) }))
    await produce(f.topic, firstBatch, PARTITIONS)
    await waitFor('the first batch consumed', async () => (await a.received()) === 900)
    await f.coordinator.round()
    const committed = await f.table.offsets(f.topic)

    const secondBatch = Array.from({ length: 900 }, (_, k) => ({ index: 900 + k, value: goodEvent(900 + k) }))
    await produce(f.topic, secondBatch, PARTITIONS)
    await waitFor('the second batch consumed', async () => (await a.received()) === 1800)
    const otherWal = await mkdtemp(join(scratch, 'wal-b-'))
    const b = await startParticipant(f, 'worker-b', monitor, {}, otherWal)
    await waitFor(
      'the partitions to split',
      () => a.participant.assigned.length > 0 && b.participant.assigned.length > 0,
    )
    const moved = b.participant.assigned
    await waitFor(
      'the moved partitions read again from the table',
      async () => (await b.received()) === 300 * moved.length,
    )

    const second = await f.coordinator.round()
    const ends = await admin.endOffsets(f.topic, [0, 1, 2])
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const status = second.statuses.get(partition)
      assert.equal(status?.rangeStart, committed.get(partition))
      assert.equal(status?.rangeEnd, ends.get(partition))
    }
    for (const message of second.messages) {
      const owner = message.sender.workerId === 'worker-a' ? a : b
      assert.deepEqual(
        message.body.partitions.map((p) => p.partition),
        owner.participant.assigned,
      )
    }
    await checkTable(
      f,
      [...firstBatch, ...secondBatch].map((e) => `e-${e.index}`),
    )

    // the revoked partitions' files the old owner rotated go at the next START, the table being past them
    const leftovers = async () =>
      (await walFiles(f.walDir, f.dataset.name)).filter((name) =>
        moved.some((p) => name.startsWith(`${f.topic}-${p}/`)),
      )
    assert.ok((await leftovers()).length > 0, 'the old owner rotated the revoked partitions on letting go')
    await f.coordinator.round()
    await waitFor("the old owner to drop the moved partitions' files", async () => (await leftovers()).length === 0)
    await stopParticipant(b)
    await stopParticipant(a)
  })

  test('a participant started on the WAL of a stopped one reuses the ready files at the table offset and deletes the rest', async () => {
    const f = await fixture('it_restart')
    const monitor = backpressure(f.walDir)
    const a = await startParticipant(f, 'worker-a', monitor)
    const firstBatch = Array.from({ length: 900 }, (_, index) => ({ index, value: goodEvent(index) }))
    await produce(f.topic, firstBatch, PARTITIONS)
    await waitFor('the first batch consumed', async () => (await a.received()) === 900)
    await f.coordinator.round()
    const tableOffsets = await f.table.offsets(f.topic)

    const secondBatch = Array.from({ length: 900 }, (_, k) => ({ index: 900 + k, value: goodEvent(900 + k) }))
    await produce(f.topic, secondBatch, PARTITIONS)
    await waitFor('the second batch consumed', async () => (await a.received()) === 1800)
    await stopParticipant(a)

    const left = await walFiles(f.walDir, f.dataset.name)
    const ready = left.filter((name) => /\/ready_.*\.parquet$/.test(name))
    assert.ok(ready.length >= PARTITIONS, `shutdown left ready files: ${left.join(', ')}`)
    for (const name of ready) {
      const partition = Number(/_(\d+)_(\d+)-\d+_/.exec(name)?.[1])
      const start = BigInt(/_(\d+)-\d+_/.exec(name)?.[1] ?? -1)
      assert.equal(start, tableOffsets.get(partition), `${name} starts at the table offset`)
    }
    const reusedUuids = ready.map((name) => /_([0-9a-f-]{36})\.parquet$/.exec(name)?.[1]).sort()

    // what a crash would leave: an open segment without a footer, and a ready file behind the table
    const [folder, sample] = (ready[0] ?? '').split('/') as [string, string]
    const uuid = '00000000-0000-4000-8000-000000000001'
    const partition0 = /-(\d+)$/.exec(folder)?.[1]
    const planted = [
      `active_${f.topic}_${partition0}_${uuid}.parquet`,
      `ready_${f.topic}_${partition0}_0-1_${uuid.replace(/1$/, '2')}.parquet`,
      `ready_${f.topic}_${partition0}_0-1_${uuid.replace(/1$/, '2')}.json`,
    ]
    for (const name of planted) {
      await copyFile(join(f.walDir, f.dataset.name, folder, sample), join(f.walDir, f.dataset.name, folder, name))
    }

    const b = await startParticipant(f, 'worker-b', monitor)
    await waitFor('recovery to delete what the crash left', async () => {
      const now = await walFiles(f.walDir, f.dataset.name)
      return planted.every((name) => !now.includes(`${folder}/${name}`))
    })
    const kept = await walFiles(f.walDir, f.dataset.name)
    for (const name of ready) assert.ok(kept.includes(name), `${name} was kept for reuse`)
    const second = await f.coordinator.round()
    const ends = await admin.endOffsets(f.topic, [0, 1, 2])
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const status = second.statuses.get(partition)
      assert.equal(status?.rangeStart, tableOffsets.get(partition))
      assert.equal(status?.rangeEnd, ends.get(partition))
    }
    assert.deepEqual(
      second.files.map((file) => /([0-9a-f-]{36})\.parquet$/.exec(file.filePath)?.[1]).sort(),
      reusedUuids,
      'the files reported are the ones the first worker left',
    )
    assert.equal(await b.received(), 0, 'nothing was read again')
    await checkTable(
      f,
      [...firstBatch, ...secondBatch].map((e) => `e-${e.index}`),
    )
    await stopParticipant(b)
  })
})
