// What one coordinator test owns on the stack, created for it alone and removed after it: a table,
// a topic with records in it, a control topic and group prefix, fake participants and a coordinator.
// Nothing is shared with another test, so each test runs alone or in any order.
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { DatasetCoordinator } from '../../coordinator/index.ts'
import { ControlChannel, type PartitionStatus } from '../../protocol/index.ts'
import { type Catalog, openCatalog, type TableIdentifier } from '../../shared/catalog/index.ts'
import { RoundFirst } from '../../shared/index.ts'
import { KafkaAdmin, type KafkaConnection, KafkaProducer } from '../../shared/kafka/index.ts'
import { RoutedStorage } from '../../shared/storage/index.ts'
import { createMetrics, type FloeMetrics } from '../../shared/telemetry/index.ts'
import { endpoints, stackConfigYaml, uniqueName, type VerifyResult, verifyTable } from '../harness.ts'
import { emptyStatus, FakeParticipants, idOf, recordingLogger, schema, spec, writtenStatus } from './support.ts'

/** Records the fixture's topic holds in each of its 3 partitions (what `floe status` measures lag against). */
export const RECORDS_PER_PARTITION = 22

export interface StartedCoordinator {
  coordinator: DatasetCoordinator
  metrics: FloeMetrics
  logger: ReturnType<typeof recordingLogger>
}

export interface CoordinatorFixture {
  readonly dataset: string
  readonly group: string
  readonly table: TableIdentifier
  readonly tableName: string
  readonly topic: string
  readonly catalog: Catalog
  readonly storage: RoutedStorage
  /** Partitions 0 and 1 answer as participant-a, partition 2 as participant-b. */
  readonly participants: FakeParticipants
  /** `coordinator-a`, started with the fixture; `coordinator()` starts more on the same control topic. */
  readonly a: StartedCoordinator
  /** A floe.yaml naming this fixture's broker, group prefix, control topic, dataset and table. */
  readonly configFile: string
  /** A directory of the test's own, removed after it. */
  readonly dir: string
  /** Where every coordinator of the fixture holds its commit and ACK, as a worker's does. */
  readonly roundFirst: RoundFirst
  /** Every id a committed round landed, in order: the table must hold exactly these. */
  readonly landed: readonly string[]
  coordinator(workerId: string): Promise<StartedCoordinator>
  written(partition: number, start: number, end: number, origin?: 'table' | 'offset-reset'): Promise<PartitionStatus>
  empty(partition: number, at: number): PartitionStatus
  /** Notes that the table now holds `[start, end)` of a partition. */
  land(partition: number, start: number, end: number): void
  /** Commits `[0, end)` of each partition as its first range: the test starts from a table with history. */
  seed(ends: Record<number, number>): Promise<void>
  /** pyiceberg's report on the table, with the landed ids checked. */
  verify(): Promise<VerifyResult>
}

const connection = (): KafkaConnection => ({ brokers: endpoints().kafka.brokers, clientId: 'floe-it-coordinator' })

/** Creates a fixture for test `t` and registers its removal on `t`. */
export async function coordinatorFixture(t: TestContext): Promise<CoordinatorFixture> {
  const coordinators: DatasetCoordinator[] = []
  const channels: ControlChannel[] = []
  /** Undone last first, once the coordinators have stopped and the channels closed. */
  const cleanups: Array<() => Promise<unknown>> = []
  t.after(async () => {
    await Promise.all(coordinators.map((c) => c.stop('test over')))
    await Promise.all(channels.map((c) => c.close()))
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
  })

  const namespace = uniqueName('it_coord')
  const table: TableIdentifier = { namespace: [namespace], name: 'events' }
  const tableName = `${namespace}.events`
  const topic = uniqueName('it-coord-events')
  const controlTopic = uniqueName('it-coord-control')
  const groupPrefix = uniqueName('it-coord')
  const dataset = 'events'
  const group = `${groupPrefix}-${dataset}`
  const storage = new RoutedStorage({})
  const landed: string[] = []
  const roundFirst = new RoundFirst()

  const dir = await mkdtemp(join(tmpdir(), 'floe-it-coordinator-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const catalog = await openCatalog({ type: 'rest', uri: endpoints().rest.uri })
  cleanups.push(() => catalog.close())
  const admin = new KafkaAdmin(connection())
  cleanups.push(() => admin.close())
  cleanups.push(() => admin.deleteTopic(controlTopic))

  async function createTable(): Promise<void> {
    await catalog.createNamespace([namespace])
    await catalog.createTable(table, schema, spec)
    cleanups.push(() => catalog.dropTable(table, { purge: true }))
  }

  async function createTopic(): Promise<void> {
    await admin.ensureTopic(topic, 3)
    cleanups.push(() => admin.deleteTopic(topic))
    const producer = new KafkaProducer(connection())
    try {
      await producer.send(
        [0, 1, 2].flatMap((partition) =>
          Array.from({ length: RECORDS_PER_PARTITION }, (_, i) => ({
            topic,
            partition,
            value: Buffer.from(JSON.stringify({ id: idOf(partition, i) })),
          })),
        ),
      )
    } finally {
      await producer.close()
    }
  }

  function channel(workerId: string): ControlChannel {
    const created = new ControlChannel({
      connection: connection(),
      topic: controlTopic,
      groupPrefix,
      workerId,
      logger: recordingLogger(),
    })
    channels.push(created)
    return created
  }

  async function coordinator(workerId: string): Promise<StartedCoordinator> {
    const control = channel(workerId)
    const metrics = createMetrics({ defaultMetrics: false })
    const logger = recordingLogger()
    const created = new DatasetCoordinator({
      dataset: { name: dataset, topics: () => [topic] },
      group,
      workerId,
      // Rounds end when a test asks (requestRound), never on the interval: no test waits on a clock.
      commitIntervalMs: 600_000,
      commitTimeoutMs: 2_000,
      failureBackoffMs: 200,
      catalog,
      storage,
      table,
      admin,
      send: (message) => control.send(message),
      logger,
      metrics,
      roundFirst,
    })
    control.register(created)
    coordinators.push(created)
    await control.start()
    await created.start()
    return { coordinator: created, metrics, logger }
  }

  const participantChannel = channel('participants')
  const participants = new FakeParticipants(participantChannel, dataset, group, (p) =>
    p < 2 ? 'participant-a' : 'participant-b',
  )
  participantChannel.register(participants)
  // Independent of each other, so at once: setting up is most of a short test's time. The
  // participants' channel creates the control topic; the coordinator's starts after it, since two
  // channels creating one topic at the same moment can see the broker refuse the second.
  await Promise.all([createTable(), createTopic(), participantChannel.start()])
  // Last: its first START must find the table, the topic and the participants listening.
  const a = await coordinator('coordinator-a')

  const configFile = join(dir, 'floe.yaml')
  await writeFile(
    configFile,
    `${stackConfigYaml('it-coord', { groupPrefix, controlTopic })}ingestion:
  wal:
    dir: ${join(dir, 'wal')}
datasets:
  - name: ${dataset}
    topic: ${topic}
    table: ${tableName}
    customMapping: {id: id, kind: kind, position: position}
    schema: {id: string, kind: string, position: long}
    badRecords: skip
`,
  )

  const target = { catalog, storage, table, topic }
  const land = (partition: number, start: number, end: number) => {
    for (let offset = start; offset < end; offset++) landed.push(idOf(partition, offset))
  }
  return {
    dataset,
    group,
    table,
    tableName,
    topic,
    catalog,
    storage,
    participants,
    a,
    configFile,
    dir,
    landed,
    roundFirst,
    coordinator,
    written: (partition, start, end, origin) => writtenStatus(target, partition, start, end, origin),
    empty: (partition, at) => emptyStatus(topic, partition, at),
    land,
    async seed(ends) {
      const partitions = Object.entries(ends).map(([p, end]) => [Number(p), end] as const)
      participants.answers = await Promise.all(
        partitions.map(([p, end]) => writtenStatus(target, p, 0, end, 'offset-reset')),
      )
      const round = await a.coordinator.requestRound('seed')
      assert.equal(round.kind, 'committed', 'the seed round')
      await participants.ack(round.commitId ?? '')
      for (const [p, end] of partitions) land(p, 0, end)
    },
    async verify() {
      const ids = join(dir, `${landed.length}.ids`)
      await writeFile(ids, `${landed.join('\n')}\n`)
      return verifyTable(tableName, { idsFile: ids })
    },
  }
}
