// `floe rewind`: moves a dataset's progress marker back, so that its workers read a range of the
// topic again (after a bad deploy dropped or mangled records downstream, say). One Iceberg commit:
// a snapshot that adds no data file and carries the new marker in its summary and in the table
// property, as a round's commit does (docs/design.md invariants 1 and 8). The data stays. The
// dataset's consumer group gets the same offsets, so lag (and an autoscaler reading it) sees the
// work. Refused while the group has members: a running worker would keep its own position and
// its next round would not be contiguous with the rewound marker. A dataset of several topics is
// rewound in the same one commit, every topic it names (offsets) or holds (a time) at once.
import { randomUUID } from 'node:crypto'
import { type Catalog, openCatalog } from '../shared/catalog/index.ts'
import { catalogLabel, type DatasetConfig, type FloeConfig, topicsMatching } from '../shared/config/index.ts'
import { appendFiles } from '../shared/iceberg/commit/index.ts'
import type { TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { FloeError, isFloeError } from '../shared/index.ts'
import { KafkaAdmin } from '../shared/kafka/index.ts'
import { encodeProgress, findProgress, offsetsKey, type Progress } from '../shared/progress/index.ts'
import { type PartitionTarget, type RewindArguments, rewindUsage } from './rewind-args.ts'
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
import { excludedTopics } from './topic-patterns.ts'

/** Summary keys of a rewind snapshot: its id (found again after an unknown outcome) and what moved. */
export const rewindSummaryKeys = { rewindId: 'floe.rewind-id', rewound: 'floe.rewound' } as const

export interface PartitionMove {
  topic: string
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
    moves.push({ topic, partition, from, to })
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

export function formatMoves(moves: readonly PartitionMove[]): string[] {
  return moves.map(
    ({ topic, partition, from, to }) =>
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
  if (dataset.route) {
    // Each routed table skips, on replay, what its own marker says it holds: moving the ledger's
    // marker back would make the workers read the range again and drop every record of it.
    stderr.write(
      `floe rewind: dataset ${dataset.name} routes its records into many tables (route): each table skips what its own marker holds, so a rewind of its ledger would read the range again and land none of it; rewinding a routed dataset is not supported\n`,
    )
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
  const target = args.target
  const excluded = excludedTopics(config)
  // named topics are checked before any server is reached; a time's topics are the table's
  const named = target.kind === 'offsets' ? namedTopics(dataset, target.partitions, excluded) : undefined
  const admin = new KafkaAdmin(kafkaConnectionOf(config, 'rewind', timeoutMs))
  let catalog: Catalog | undefined
  try {
    const members = await reach(kafka, 'KAFKA_UNAVAILABLE', timeoutMs, () => admin.groupMembers(group))
    const running =
      members.length > 0
        ? // A member is not a worker: one worker process runs a member per ingestion.threads.
          `dataset ${dataset.name} is being read: consumer group ${group} has ${members.length} active member(s) (${[...new Set(members.map((m) => m.clientId))].join(', ')}); stop the dataset's workers first`
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
    let plan = { moves: [] as PartitionMove[], progress: current }
    const gone: string[] = []
    for (const topic of named ?? heldTopics(dataset, current, excluded)) {
      const partitionCount = await reach(kafka, 'KAFKA_UNAVAILABLE', timeoutMs, () => admin.partitionCount(topic))
      if (partitionCount === undefined && named === undefined) {
        // a pattern's topic deleted since: nothing of it can be read again, the others are rewound
        gone.push(`  ${topic}: deleted, left as it is`)
        continue
      }
      if (partitionCount === undefined) throw refuse(`topic ${topic} does not exist`)
      // A partition past the topic's count would be refused by the plan; a time asks only for the others.
      const tablePartitions = [...(current.get(topic)?.keys() ?? [])].filter((p) => p < partitionCount)
      const all = Array.from({ length: partitionCount }, (_, p) => p)
      const [logStart, logEnd] = await reach(kafka, 'KAFKA_UNAVAILABLE', timeoutMs, () =>
        Promise.all([admin.startOffsets(topic, all), admin.endOffsets(topic, all)]),
      )
      const requested =
        target.kind === 'offsets'
          ? new Map(target.partitions.filter((p) => p.topic === topic).map((p) => [p.partition, p.offset]))
          : offsetsAtTime(
              tablePartitions,
              tablePartitions.length === 0
                ? new Map()
                : await reach(kafka, 'KAFKA_UNAVAILABLE', timeoutMs, () =>
                    admin.offsetsForTimestamp(topic, tablePartitions, target.ms),
                  ),
              logEnd,
            )
      const topicPlan = planRewind(
        topic,
        plan.progress,
        requested,
        { partitionCount, logStart, logEnd },
        target.kind === 'timestamp',
      )
      plan = { moves: [...plan.moves, ...topicPlan.moves], progress: topicPlan.progress }
    }
    const marker = encodeProgress(plan.progress)
    const what = target.kind === 'offsets' ? 'to the given offsets' : `to ${target.iso}`
    const changed = plan.moves.filter((m) => m.to !== m.from)
    if (args.dryRun) {
      stdout.write(
        [
          `dry run: would rewind dataset ${dataset.name} (table ${dataset.table}, group ${group}) ${what}:`,
          ...formatMoves(plan.moves),
          ...gone,
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
    const groupNotes: string[] = []
    for (const topic of new Set(changed.map((m) => m.topic))) {
      const offsets = new Map(changed.filter((m) => m.topic === topic).map((m) => [m.partition, m.to]))
      groupNotes.push(
        await admin.setCommittedOffsets(group, topic, offsets).then(
          () => '',
          (error: unknown) => `${topic}: ${reasonOf(error)}`,
        ),
      )
    }
    const failed = groupNotes.filter(Boolean)
    const groupNote =
      failed.length === 0
        ? `consumer group ${group} moved too`
        : `consumer group ${group} not moved (lag metrics only): ${failed.join('; ')}`
    stdout.write(
      [
        `rewound dataset ${dataset.name} (table ${dataset.table}) ${what} in snapshot ${snapshotId}:`,
        ...formatMoves(plan.moves),
        ...gone,
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

/** Whether the dataset reads the topic: one of its list, or one its pattern matches. */
function readsTopic(dataset: DatasetConfig, topic: string, excluded: ReadonlySet<string>): boolean {
  if (!dataset.topicPattern) return dataset.topics.includes(topic)
  return topicsMatching(dataset, [topic], excluded).length > 0
}

function topicsOf(dataset: DatasetConfig): string {
  return dataset.topicPattern ? `topicPattern ${dataset.topicPattern.source}` : dataset.topics.join(', ')
}

/** `--to-offset`'s topics, in name order, each one the dataset reads. */
export function namedTopics(
  dataset: DatasetConfig,
  partitions: readonly PartitionTarget[],
  excluded: ReadonlySet<string>,
): string[] {
  const named = [...new Set(partitions.map((p) => p.topic))].sort()
  for (const topic of named) {
    if (!readsTopic(dataset, topic, excluded)) {
      throw refuse(`topic ${topic} is not a topic of dataset ${dataset.name} (${topicsOf(dataset)})`)
    }
  }
  return named
}

/**
 * A time's topics: each the dataset reads (its list; with a pattern, the topics of the table's
 * marker that it matches, of which a rewind leaves one deleted since as it is), in name order. A
 * pattern's dataset whose table holds no offset of a matching topic has nothing to rewind.
 */
export function heldTopics(dataset: DatasetConfig, current: Progress, excluded: ReadonlySet<string>): string[] {
  if (!dataset.topicPattern) return [...dataset.topics]
  const held = [...current.keys()].filter((topic) => readsTopic(dataset, topic, excluded)).sort()
  if (held.length === 0) {
    throw refuse(`the table holds no offset of a topic ${topicsOf(dataset)} matches: nothing to rewind`)
  }
  return held
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
  // topic -> partition -> {from, to}: the marker's own shape
  const rewound: Record<string, Record<string, { from: string; to: string }>> = {}
  for (const { topic, partition, from, to } of plan.moves) {
    rewound[topic] = { ...rewound[topic], [String(partition)]: { from: String(from), to: String(to) } }
  }
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
        summary: { [offsetsKey(group)]: marker, [rewindSummaryKeys.rewound]: JSON.stringify(rewound) },
        properties: { [offsetsKey(group)]: marker },
      }
    },
  })
  return result.snapshot['snapshot-id']
}
