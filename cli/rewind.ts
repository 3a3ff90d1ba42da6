// `floe rewind`: moves a dataset's progress marker back, so that its workers read a range of the
// topic again (after a bad deploy dropped or mangled records downstream, say). One Iceberg commit:
// a snapshot that adds no data file and carries the new marker in its summary and in the table
// property, as a round's commit does (docs/design.md invariants 1 and 8). The data stays. The
// dataset's consumer group gets the same offsets, so lag (and an autoscaler reading it) sees the
// work. Refused while the group has members: a running worker would keep its own position and
// its next round would not be contiguous with the rewound marker.
import { randomUUID } from 'node:crypto'
import { type Catalog, openCatalog } from '../shared/catalog/index.ts'
import { catalogLabel, type DatasetConfig, type FloeConfig } from '../shared/config/index.ts'
import { appendFiles } from '../shared/iceberg/commit/index.ts'
import type { TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { FloeError, isFloeError } from '../shared/index.ts'
import { KafkaAdmin } from '../shared/kafka/index.ts'
import { encodeProgress, findProgress, offsetsKey, type Progress } from '../shared/progress/index.ts'
import { type RewindArguments, rewindUsage } from './rewind-args.ts'
import {
  catalogConfigOf,
  configFor,
  datasetGroup,
  kafkaConnectionOf,
  type Output,
  reach,
  reasonOf,
  storageOf,
} from './servers.ts'
import { tableIdentifier } from './tables.ts'

/** Summary keys of a rewind snapshot: its id (found again after an unknown outcome) and what moved. */
export const rewindSummaryKeys = { rewindId: 'floe.rewind-id', rewound: 'floe.rewound' } as const

export interface PartitionMove {
  partition: number
  /** The table's offset before the rewind. */
  from: bigint
  to: bigint
}

export interface TopicBounds {
  partitionCount: number
  logStart: ReadonlyMap<number, bigint>
  logEnd: ReadonlyMap<number, bigint>
}

/** Requested offsets per partition, as `--to-offset` gave them or ListOffsets resolved a time. */
export type RequestedOffsets = ReadonlyMap<number, bigint>

const refuse = (message: string) => new FloeError('CONFIG_INVALID', message)

/**
 * The moves of a rewind and the marker after it. Pure. Refuses (CONFIG_INVALID, one line) a
 * partition the topic lacks or the table never committed, an offset ahead of the table's (that
 * would skip records: a rewind only moves back) or before the log start (those records are gone).
 * With `clamp` (a time), an offset ahead of the table's is left where the table stands instead.
 */
export function planRewind(
  topic: string,
  current: Progress,
  requested: RequestedOffsets,
  bounds: TopicBounds,
  clamp = false,
): { moves: PartitionMove[]; progress: Progress } {
  const offsets = new Map(current.get(topic) ?? [])
  const moves: PartitionMove[] = []
  for (const [partition, wanted] of [...requested].sort(([a], [b]) => a - b)) {
    if (partition >= bounds.partitionCount) {
      throw refuse(`topic ${topic} has no partition ${partition} (it has ${bounds.partitionCount})`)
    }
    const from = offsets.get(partition)
    if (from === undefined) {
      throw refuse(`partition ${partition} of ${topic}: the table holds no offset for it yet, nothing to rewind`)
    }
    if (wanted > from && !clamp) {
      throw refuse(
        `partition ${partition} of ${topic}: offset ${wanted} is ahead of the table's ${from}; a rewind only moves back (forward would skip records)`,
      )
    }
    let to = wanted
    if (to > from) to = from
    const logStart = bounds.logStart.get(partition) ?? 0n
    if (to < logStart) {
      throw refuse(
        `partition ${partition} of ${topic}: offset ${to} is before the log start ${logStart} (deleted by retention); the earliest possible is ${logStart}`,
      )
    }
    moves.push({ partition, from, to })
    offsets.set(partition, to)
  }
  const progress = new Map(current)
  progress.set(topic, offsets)
  return { moves, progress }
}

/** `--to-timestamp`: each partition the table holds goes to the first record at or after the time, or its end. */
export function offsetsAtTime(
  tablePartitions: Iterable<number>,
  atTime: ReadonlyMap<number, bigint | undefined>,
  logEnd: ReadonlyMap<number, bigint>,
): Map<number, bigint> {
  const requested = new Map<number, bigint>()
  for (const partition of tablePartitions) {
    const offset = atTime.get(partition) ?? logEnd.get(partition)
    if (offset !== undefined) requested.set(partition, offset)
  }
  return requested
}

export function formatMoves(topic: string, moves: readonly PartitionMove[]): string[] {
  return moves.map(
    ({ partition, from, to }) =>
      `  ${topic} partition ${partition}: ${from} -> ${to}${to === from ? ' (unchanged)' : ` (${from - to} record(s) read again)`}`,
  )
}

export interface RewindIo {
  stdout?: Output
  stderr?: Output
  timeoutMs?: number
}

export async function runRewind(args: RewindArguments | { error: string }, io: RewindIo = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout
  const stderr = io.stderr ?? process.stderr
  if ('error' in args) {
    stderr.write(`floe rewind: ${args.error}\n${rewindUsage}\n`)
    return 2
  }
  const config = configFor('rewind', args.configPath, stderr)
  if (!config) return 2
  const dataset = config.datasets.find((d) => d.name === args.dataset)
  if (!dataset) {
    const names = config.datasets.map((d) => d.name).join(', ')
    stderr.write(`floe rewind: no dataset '${args.dataset}' in ${config.source} (it has: ${names})\n`)
    return 2
  }
  try {
    return await rewind(config, dataset, args, { stdout, stderr, timeoutMs: io.timeoutMs ?? 10_000 })
  } catch (error) {
    stderr.write(`floe rewind: ${isFloeError(error) ? error.message : reasonOf(error)}\n`)
    return 1
  }
}

async function rewind(
  config: FloeConfig,
  dataset: DatasetConfig,
  args: RewindArguments,
  io: Required<RewindIo>,
): Promise<number> {
  const { stdout, stderr, timeoutMs } = io
  const kafka = `kafka ${config.kafka.brokers.join(',')}`
  const catalogName = `catalog ${catalogLabel(config.catalog)}`
  const group = datasetGroup(config, dataset.name)
  const topic = rewoundTopic(dataset, args.target)
  const admin = new KafkaAdmin(kafkaConnectionOf(config, 'rewind', timeoutMs))
  let catalog: Catalog | undefined
  try {
    const members = await reach(kafka, 'KAFKA_UNAVAILABLE', timeoutMs, () => admin.groupMembers(group))
    const running =
      members.length > 0
        ? `dataset ${dataset.name} has ${members.length} worker(s) running (consumer group ${group} has active members: ${[...new Set(members.map((m) => m.clientId))].join(', ')}); stop them first`
        : undefined
    if (running && !args.dryRun) {
      stderr.write(`floe rewind: refused: ${running}\n`)
      return 1
    }
    const storage = storageOf(config, dataset)
    catalog = await reach(catalogName, 'CATALOG_UNAVAILABLE', timeoutMs, () =>
      openCatalog(catalogConfigOf(config, storage)),
    )
    const opened = catalog
    const identifier = tableIdentifier(dataset)
    const metadata = await reach(catalogName, 'CATALOG_UNAVAILABLE', timeoutMs, async () => {
      try {
        return (await opened.loadTable(identifier)).metadata
      } catch (error) {
        if (isFloeError(error, 'CATALOG_NOT_FOUND'))
          throw refuse(`table ${dataset.table} does not exist: nothing to rewind`)
        throw error
      }
    })
    const current = findProgress(metadata, group).progress
    const partitionCount = await reach(kafka, 'KAFKA_UNAVAILABLE', timeoutMs, () => admin.partitionCount(topic))
    if (partitionCount === undefined) throw refuse(`topic ${topic} does not exist`)
    // A partition past the topic's count would be refused by the plan; a time asks only for the others.
    const tablePartitions = [...(current.get(topic)?.keys() ?? [])].filter((p) => p < partitionCount)
    const all = Array.from({ length: partitionCount }, (_, p) => p)
    const [logStart, logEnd] = await reach(kafka, 'KAFKA_UNAVAILABLE', timeoutMs, () =>
      Promise.all([admin.startOffsets(topic, all), admin.endOffsets(topic, all)]),
    )
    const target = args.target
    const requested =
      target.kind === 'offsets'
        ? new Map(target.partitions.map((p) => [p.partition, p.offset]))
        : offsetsAtTime(
            tablePartitions,
            tablePartitions.length === 0
              ? new Map()
              : await reach(kafka, 'KAFKA_UNAVAILABLE', timeoutMs, () =>
                  admin.offsetsForTimestamp(topic, tablePartitions, target.ms),
                ),
            logEnd,
          )
    const plan = planRewind(
      topic,
      current,
      requested,
      { partitionCount, logStart, logEnd },
      target.kind === 'timestamp',
    )
    const marker = encodeProgress(plan.progress)
    const what = target.kind === 'offsets' ? 'to the given offsets' : `to ${target.iso}`
    const changed = plan.moves.filter((m) => m.to !== m.from)
    if (args.dryRun) {
      stdout.write(
        [
          `dry run: would rewind dataset ${dataset.name} (table ${dataset.table}, group ${group}) ${what}:`,
          ...formatMoves(topic, plan.moves),
          changed.length > 0 ? `  would write ${offsetsKey(group)} = ${marker}` : '  nothing would change',
          ...(running ? [`  a real rewind is refused now: ${running}`] : []),
          '',
        ].join('\n'),
      )
      return 0
    }
    if (changed.length === 0) {
      stdout.write(`dataset ${dataset.name}: nothing to rewind ${what}: every partition is there already\n`)
      return 0
    }
    const snapshotId = await commitMarker(config, dataset, opened, group, current, plan)
    // The group's offsets follow, for lag metrics and autoscaling only (invariant 6).
    const groupNote = await admin
      .setCommittedOffsets(group, topic, new Map(changed.map((m) => [m.partition, m.to])))
      .then(
        () => `consumer group ${group} moved too`,
        (error: unknown) => `consumer group ${group} not moved (lag metrics only): ${reasonOf(error)}`,
      )
    stdout.write(
      [
        `rewound dataset ${dataset.name} (table ${dataset.table}) ${what} in snapshot ${snapshotId}:`,
        ...formatMoves(topic, plan.moves),
        `  ${groupNote}`,
        '',
      ].join('\n'),
    )
    return 0
  } finally {
    await admin.close().catch(() => {})
    await catalog?.close().catch(() => {})
  }
}

/**
 * The topic a rewind moves: one per rewind. `--to-offset` names it; a time names none, so it is
 * the dataset's topic, and a dataset of several topics is rewound one topic at a time by offsets.
 */
function rewoundTopic(dataset: DatasetConfig, target: RewindArguments['target']): string {
  if (target.kind === 'offsets') {
    const named = [...new Set(target.partitions.map((p) => p.topic))]
    const [topic] = named
    if (topic === undefined || named.length > 1)
      throw refuse(`--to-offset names ${named.join(' and ')}: rewind one topic at a time`)
    if (!dataset.topics.includes(topic)) {
      throw refuse(`topic ${topic} is not a topic of dataset ${dataset.name} (${dataset.topics.join(', ')})`)
    }
    return topic
  }
  const [only] = dataset.topics
  if (only === undefined || dataset.topics.length > 1) {
    throw refuse(
      `dataset ${dataset.name} reads several topics (${dataset.topics.join(', ')}): rewind one at a time with --to-offset TOPIC:PARTITION=OFFSET`,
    )
  }
  return only
}

/** The one commit: no data file, the marker in the summary and the property; refused if the marker moved meanwhile. */
async function commitMarker(
  config: FloeConfig,
  dataset: DatasetConfig,
  catalog: Catalog,
  group: string,
  planned: Progress,
  plan: { moves: PartitionMove[]; progress: Progress },
): Promise<bigint> {
  const marker = encodeProgress(plan.progress)
  const rewound = JSON.stringify(
    Object.fromEntries(plan.moves.map((m) => [String(m.partition), { from: String(m.from), to: String(m.to) }])),
  )
  const result = await appendFiles({
    catalog,
    storage: storageOf(config, dataset),
    table: tableIdentifier(dataset),
    commitId: randomUUID(),
    commitIdKey: rewindSummaryKeys.rewindId,
    content: (metadata: TableMetadata) => {
      // A round that landed since the plan was made would be undone without anyone deciding so.
      if (encodeProgress(findProgress(metadata, group).progress) !== encodeProgress(planned)) {
        throw new FloeError(
          'COMMIT_REJECTED',
          `the table's progress changed while rewinding (a worker committed): run again`,
        )
      }
      return {
        files: [],
        summary: { [offsetsKey(group)]: marker, [rewindSummaryKeys.rewound]: rewound },
        properties: { [offsetsKey(group)]: marker },
      }
    },
  })
  return result.snapshot['snapshot-id']
}
