// Test support for the participant's end-to-end tests: a dataset built by the real configuration
// code, its table created through the catalog, events to produce (good and malformed), a stand-in
// coordinator that drives rounds over the real control topic and commits with Floe's own
// appendFiles, and small waiting helpers. Kept beside the tests that use it.
import { randomUUID } from 'node:crypto'
import { readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  DatasetParticipant,
  type DatasetParticipantOptions,
  type ParticipantTable,
  Uploader,
  UploadQueue,
} from '../../participant/index.ts'
import {
  type ControlChannel,
  type ControlMessage,
  type PartitionStatus,
  toDataFile,
  type WriteStatus,
} from '../../protocol/index.ts'
import type { Catalog, TableIdentifier } from '../../shared/catalog/index.ts'
import { type DatasetConfig, parseConfig } from '../../shared/config/index.ts'
import { appendFiles } from '../../shared/iceberg/commit/index.ts'
import type { DataFile } from '../../shared/iceberg/index.ts'
import { currentSchema, defaultSpec, type TableMetadata } from '../../shared/iceberg/metadata/index.ts'
import { compilePartitioner } from '../../shared/iceberg/partitioning/index.ts'
import { type IncomingRecord, type KafkaConnection, KafkaConsumer, KafkaProducer } from '../../shared/kafka/index.ts'
import { encodeProgress, mergeProgress, offsetsKey, readProgress } from '../../shared/progress/index.ts'
import type { ObjectStorage } from '../../shared/storage/index.ts'
import { createLogger, createMetrics, type FloeMetrics, PhaseClock } from '../../shared/telemetry/index.ts'
import { endpoints } from '../harness.ts'

export const connection = (clientId: string): KafkaConnection => ({ brokers: endpoints().kafka.brokers, clientId })

/** A dataset as floe.yaml would declare it: seven columns, partitioned by `kind`, a bloom filter, a DLQ. */
export function datasetConfig(names: { name: string; topic: string; table: string; dlqTopic: string }): DatasetConfig {
  const file = {
    kafka: { brokers: endpoints().kafka.brokers },
    catalog: { type: 'rest', uri: endpoints().rest.uri },
    ingestion: { wal: { dir: '/unused' } },
    datasets: [
      {
        ...names,
        customMapping: {
          id: 'id',
          ts: 'ts',
          user_id: 'user.id',
          user_name: 'user.name',
          kind: 'kind',
          amount: 'amount',
          tags: 'tags',
        },
        schema: {
          id: 'string not null',
          ts: 'timestamptz',
          user_id: 'long',
          user_name: 'string',
          kind: 'string',
          amount: 'double',
          tags: 'list<string>',
        },
        partitionSpec: ['kind'],
        bloomFilterColumns: ['user_name'],
      },
    ],
  }
  const [dataset] = parseConfig(JSON.stringify(file), 'participant-it', {}).datasets
  if (!dataset) throw new Error('no dataset')
  return dataset
}

const kinds = ['click', 'view', 'buy']

export function goodEvent(i: number, padBytes = 0): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: `e-${i}`,
      ts: new Date(1_764_460_800_000 + i * 1000).toISOString(),
      user: { id: i % 97, name: `user ${i % 97}` },
      kind: kinds[i % 3],
      amount: i / 4,
      tags: ['a', `t${i % 5}`],
      ...(padBytes > 0 ? { note: 'x'.repeat(padBytes) } : {}),
    }),
  )
}

/** Malformed in three ways, with the dead-letter reason each one must get. */
export function badEvent(i: number): { value: Buffer | undefined; reason: string } {
  switch (i % 3) {
    case 0:
      return { value: Buffer.from(`{"id": "b-${i}", "kind": `), reason: 'not-json' }
    case 1:
      return { value: Buffer.from(JSON.stringify({ id: `b-${i}`, user: { id: 'abc' } })), reason: 'conversion-failed' }
    default:
      return { value: undefined, reason: 'empty' }
  }
}

/** Produces records to `topic`, each to partition `index % partitions`. */
export async function produce(
  topic: string,
  events: { index: number; value: Buffer | undefined }[],
  partitions: number,
): Promise<void> {
  const producer = new KafkaProducer(connection('floe-it-participant-producer'))
  try {
    for (let i = 0; i < events.length; i += 2000) {
      await producer.send(
        events.slice(i, i + 2000).map(({ index, value }) => ({
          topic,
          partition: index % partitions,
          key: Buffer.from(`k-${index}`),
          // no value: sent as zero bytes, which the decoder refuses as 'empty' like a tombstone
          value: value ?? Buffer.alloc(0),
        })),
      )
    }
  } finally {
    await producer.close()
  }
}

/** Reads `count` records of a topic from the start (a fresh group), failing after `timeoutMs`. */
export async function readTopic(topic: string, count: number, timeoutMs = 30_000): Promise<IncomingRecord[]> {
  const consumer = new KafkaConsumer(connection('floe-it-participant-dlq'), {
    groupId: `floe-it-dlq-${randomUUID()}`,
    topics: [topic],
    startFrom: 'earliest',
  })
  const records: IncomingRecord[] = []
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      (async () => {
        for await (const record of consumer.records()) {
          records.push(record)
          if (records.length >= count) return
        }
      })(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`read ${records.length} of ${count} records of ${topic}`)), timeoutMs)
      }),
    ])
  } finally {
    clearTimeout(timer)
    await consumer.close().catch(() => {})
  }
  return records
}

/** Polls `condition` until it holds; fails with `what` after `timeoutMs`. Not a sleep: it ends as soon as it holds. */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

export interface DatasetTable {
  identifier: TableIdentifier
  metadata: TableMetadata
  table: ParticipantTable
}

/** Creates the dataset's table through the catalog, its data files under `dataLocation`. */
export async function createDatasetTable(
  catalog: Catalog,
  dataset: DatasetConfig,
  group: string,
  dataLocation?: string,
): Promise<DatasetTable> {
  const identifier = { namespace: dataset.namespace, name: dataset.tableName }
  await catalog.createNamespace(identifier.namespace)
  const loaded = await catalog.createTable(identifier, dataset.icebergSchema, dataset.icebergSpec, {
    // pyiceberg reads abfs:// through fsspec/adlfs (its pyarrow Azure filesystem needs a package
    // the stack's venv does not have); the table property chooses its FileIO
    properties: dataLocation
      ? { 'write.data.path': dataLocation, 'py-io-impl': 'pyiceberg.io.fsspec.FsspecFileIO' }
      : {},
  })
  const metadata = loaded.metadata
  return {
    identifier,
    metadata,
    table: {
      schema: currentSchema(metadata),
      spec: defaultSpec(metadata),
      dataLocation: dataLocation ?? `${metadata.location}/data`,
      offsets: async (topic) =>
        readProgress((await catalog.loadTable(identifier)).metadata, group).get(topic) ?? new Map(),
    },
  }
}

/** Lists the WAL files under a dataset's WAL folder, by partition folder. */
export async function walFiles(walDir: string, dataset: string): Promise<string[]> {
  const root = join(walDir, dataset)
  const found: string[] = []
  for (const folder of await readdir(root).catch(() => [] as string[])) {
    for (const name of await readdir(join(root, folder)).catch(() => [] as string[])) found.push(`${folder}/${name}`)
  }
  return found.sort()
}

export async function idsFile(dir: string, ids: readonly string[]): Promise<string> {
  const file = join(dir, `${randomUUID()}.ids`)
  await writeFile(file, `${ids.join('\n')}\n`)
  return file
}

export interface ParticipantHarness {
  participant: DatasetParticipant
  metrics: FloeMetrics
  phases: PhaseClock
  uploads: UploadQueue
  received(): Promise<number>
}

/** A participant with the pieces a worker gives it; `overrides` replace any option. */
export function participantFor(
  options: Omit<DatasetParticipantOptions, 'logger' | 'metrics' | 'phases' | 'uploads' | 'connection' | 'wal'> & {
    storage: ObjectStorage
    walDir: string
    wal?: Partial<DatasetParticipantOptions['wal']>
  },
): ParticipantHarness {
  const metrics = createMetrics({ defaultMetrics: false })
  const phases = new PhaseClock()
  const uploads = new UploadQueue({ uploader: new Uploader({ storage: options.storage }) })
  const { storage: _storage, walDir, wal, ...rest } = options
  const participant = new DatasetParticipant({
    ...rest,
    connection: connection(`floe-it-${options.workerId}`),
    wal: {
      dir: walDir,
      maxFileSizeBytes: 64 * 1024 * 1024,
      maxFileAgeMinutes: 5,
      maxOpenSegmentsPerPartition: 256,
      rowGroupBytes: 4 * 1024 * 1024,
      compression: 'zstd',
      ...wal,
    },
    uploads,
    // FLOE_IT_LOG=info (or debug) shows what the machines do when a test needs explaining
    logger: createLogger({ level: (process.env.FLOE_IT_LOG as 'warn' | undefined) ?? 'warn' }).child({
      worker: options.workerId,
    }),
    metrics,
    phases,
    sessionTimeoutMs: 10_000,
  })
  const received = async () => {
    const metric = await metrics.recordsReceived.get()
    return metric.values.reduce((sum, v) => sum + v.value, 0)
  }
  return { participant, metrics, phases, uploads, received }
}

export interface RoundResult {
  commitId: string
  /** The WRITE-STATUS messages of the round, as they arrived. */
  messages: ControlMessage<WriteStatus>[]
  /** The status that counts per partition (the newest). */
  statuses: Map<number, PartitionStatus>
  files: DataFile[]
  snapshotId: bigint | null
  /** Sends the ACK (already sent unless the round ran with `ack: false`). */
  acknowledge(): Promise<void>
}

/**
 * The coordinator's part, played by the test over the real control topic: START with the table's
 * offsets, END, the statuses of every partition, the contiguity check, one appendFiles carrying
 * the progress marker, and the ACK.
 */
export class TestCoordinator {
  readonly #channel: ControlChannel
  readonly #catalog: Catalog
  readonly #storage: ObjectStorage
  readonly #identifier: TableIdentifier
  readonly #dataset: DatasetConfig
  readonly #group: string
  readonly #partitions: number
  readonly #inbox: ControlMessage<WriteStatus>[] = []

  constructor(options: {
    channel: ControlChannel
    catalog: Catalog
    storage: ObjectStorage
    identifier: TableIdentifier
    dataset: DatasetConfig
    group: string
    partitions: number
  }) {
    this.#channel = options.channel
    this.#catalog = options.catalog
    this.#storage = options.storage
    this.#identifier = options.identifier
    this.#dataset = options.dataset
    this.#group = options.group
    this.#partitions = options.partitions
    this.#channel.register({
      receive: (message) => {
        if (message.body.type === 'WriteStatus' && message.dataset === this.#dataset.name) {
          this.#inbox.push(message as ControlMessage<WriteStatus>)
        }
      },
    })
  }

  #message<B extends ControlMessage['body']>(commitId: string, body: B): ControlMessage<B> {
    return {
      dataset: this.#dataset.name,
      group: this.#group,
      commitId,
      sender: { workerId: 'test-coordinator', memberId: '', generation: -1 },
      timeMs: Date.now(),
      body,
    }
  }

  /** One whole round; with `ack: false` it stops after the commit (an ACK lost). */
  async round(options: { ack?: boolean; timeoutMs?: number } = {}): Promise<RoundResult> {
    const commitId = randomUUID()
    const [topic = ''] = this.#dataset.topics
    const { metadata } = await this.#catalog.loadTable(this.#identifier)
    const progress = readProgress(metadata, this.#group)
    const tableOffsets = [...(progress.get(topic) ?? new Map<number, bigint>())].map(([partition, offset]) => ({
      topic,
      partition,
      offset,
    }))
    await this.#channel.send(this.#message(commitId, { type: 'StartCommit', tableOffsets, snapshotId: null }))
    const expectedPartitions = Array.from({ length: this.#partitions }, (_, partition) => ({ topic, partition }))
    await this.#channel.send(this.#message(commitId, { type: 'EndCommit', expectedPartitions }))

    const statuses = new Map<number, PartitionStatus>()
    const ours = () => this.#inbox.filter((m) => m.commitId === commitId)
    await waitFor(
      `WRITE-STATUS of ${this.#partitions} partitions`,
      () => {
        for (const m of ours()) for (const status of m.body.partitions) statuses.set(status.partition, status)
        return statuses.size >= this.#partitions
      },
      options.timeoutMs ?? 60_000,
    )

    const partitionType = compilePartitioner(defaultSpec(metadata), currentSchema(metadata)).partitionType
    const files: DataFile[] = []
    const committed: { topic: string; partition: number; offset: bigint }[] = []
    const committedFiles: { topic: string; partition: number; filePaths: string[] }[] = []
    for (const status of statuses.values()) {
      if (status.kind !== 'data') continue
      const tableOffset = progress.get(topic)?.get(status.partition)
      const inLine =
        tableOffset === undefined
          ? status.origin !== undefined && status.origin !== 'table'
          : status.rangeStart === tableOffset
      if (!inLine) throw new Error(`partition ${status.partition} out of line: ${status.rangeStart} vs ${tableOffset}`)
      const partitionFiles = status.files.map((entry) => toDataFile(entry, partitionType))
      files.push(...partitionFiles)
      committed.push({ topic, partition: status.partition, offset: status.rangeEnd })
      committedFiles.push({ topic, partition: status.partition, filePaths: partitionFiles.map((f) => f.filePath) })
    }
    let snapshotId: bigint | null = null
    if (committed.length > 0) {
      const marker = encodeProgress(mergeProgress(progress, committed))
      const key = offsetsKey(this.#group)
      const result = await appendFiles({
        catalog: this.#catalog,
        storage: this.#storage,
        table: this.#identifier,
        commitId,
        commitIdKey: 'floe.commit-id',
        content: () => ({ files, summary: { [key]: marker }, properties: { [key]: marker } }),
      })
      snapshotId = result.snapshot['snapshot-id']
    }
    const acknowledge = () =>
      this.#channel.send(
        this.#message(commitId, {
          type: 'CommitAcked',
          snapshotId,
          committedOffsets: committed,
          committedFiles,
          rejections: [],
        }),
      )
    if (options.ack ?? true) await acknowledge()
    return { commitId, messages: ours(), statuses, files, snapshotId, acknowledge }
  }
}
