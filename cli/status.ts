// `floe status`: per dataset, where the table stands against the topic — each partition's table
// offset (the progress marker, docs/design.md invariant 1), the topic's end offset, the lag between
// them — the worker that holds each partition in the dataset's consumer group, and the last Floe
// commit with its age. Human table by default, one JSON document with --json. Reads only; a
// server that cannot be reached is one line naming it, exit 1.
import { unheldIn } from '../coordinator/index.ts'
import { type Catalog, formatTableIdentifier, openCatalog, type TableIdentifier } from '../shared/catalog/index.ts'
import { catalogLabel, type FloeConfig } from '../shared/config/index.ts'
import { ancestorsOfRef, type TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { isFloeError } from '../shared/index.ts'
import { stringifyJson } from '../shared/json/index.ts'
import { type GroupAssignment, KafkaAdmin } from '../shared/kafka/index.ts'
import { findProgress, floeSummaryKeys, offsetsKey, type ProgressSource } from '../shared/progress/index.ts'
import { rewindSummaryKeys } from './rewind.ts'
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
import { matchedTopics } from './topic-patterns.ts'

export type { Output }

export interface PartitionLag {
  partition: number
  /** The next offset the table holds; undefined when the group never committed the partition. */
  tableOffset: bigint | undefined
  endOffset: bigint | undefined
  /** end - table offset; for a partition the table never saw, everything still in the log (end - log start). */
  lag: bigint | undefined
  /** The Kafka client id of the group member that holds the partition (names its worker); none: no member. */
  heldBy: string | undefined
}

/** The dataset's consumer group as its coordinator broker sees it. */
export interface GroupStatus {
  /** Stable, PreparingRebalance, CompletingRebalance, Empty, Dead, ... */
  state: string
  members: number
  /** Partitions of the topic no member holds while the group is Stable: read by no one. */
  unheld: number[]
}

export interface LastCommit {
  snapshotId: bigint
  /** A round's commit, or an operator's `floe rewind` (which moves the marker, adding no file). */
  kind: 'round' | 'rewind'
  /** The round's commit id, or the rewind's. */
  commitId: string
  /** When the snapshot was committed, ms since the epoch. */
  committedAtMs: number
  ageMs: number
}

export interface DatasetStatus {
  dataset: string
  topic: string
  table: string
  group: string
  tableExists: boolean
  /** Partitions of the topic; undefined when the topic does not exist. */
  partitionCount: number | undefined
  progressSource: ProgressSource['kind']
  partitions: PartitionLag[]
  totalLag: bigint
  lastCommit: LastCommit | undefined
  consumers: GroupStatus
}

/** The newest snapshot of main that moved this group's marker: a round's, or a rewind's. */
export function lastFloeCommit(metadata: TableMetadata, group: string, now: number): LastCommit | undefined {
  const key = offsetsKey(group)
  for (const snapshot of ancestorsOfRef(metadata)) {
    if (snapshot.summary[key] === undefined) continue
    const roundId = snapshot.summary[floeSummaryKeys.commitId]
    const rewindId = snapshot.summary[rewindSummaryKeys.rewindId]
    const commitId = roundId ?? rewindId
    if (commitId === undefined) continue
    const committedAtMs = Number(snapshot['timestamp-ms'])
    return {
      snapshotId: snapshot['snapshot-id'],
      kind: roundId === undefined ? 'rewind' : 'round',
      commitId,
      committedAtMs,
      ageMs: Math.max(0, now - committedAtMs),
    }
  }
  return undefined
}

export interface StatusOptions {
  /** How long one server may take to answer. Default 10 s. */
  timeoutMs?: number
  now?: () => number
}

/**
 * Reads every dataset's status. A server that does not answer throws FloeError KAFKA_UNAVAILABLE
 * or CATALOG_UNAVAILABLE naming it.
 */
export async function datasetStatuses(config: FloeConfig, options: StatusOptions = {}): Promise<DatasetStatus[]> {
  const timeoutMs = options.timeoutMs ?? 10_000
  const now = options.now ?? Date.now
  const kafka = `kafka ${config.kafka.brokers.join(',')}`
  const catalogName = `catalog ${catalogLabel(config.catalog)}`
  const admin = new KafkaAdmin(kafkaConnectionOf(config, 'status', timeoutMs))
  let catalog: Catalog | undefined
  try {
    const storage = storageOf(config)
    catalog = await reach(catalogName, 'CATALOG_UNAVAILABLE', timeoutMs, () =>
      openCatalog(catalogConfigOf(config, storage)),
    )
    const opened = catalog
    const statuses: DatasetStatus[] = []
    for (const dataset of config.datasets) {
      const identifier: TableIdentifier = { namespace: dataset.namespace, name: dataset.tableName }
      const group = datasetGroup(config, dataset.name)
      const metadata = await reach(catalogName, 'CATALOG_UNAVAILABLE', timeoutMs, () =>
        loadIfExists(opened, identifier),
      )
      const found = metadata ? findProgress(metadata, group) : undefined
      // one entry per topic: each has its own partitions, holders and offsets
      const topics = await reach(kafka, 'KAFKA_UNAVAILABLE', timeoutMs, () => matchedTopics(config, dataset, admin))
      for (const topic of topics) {
        const partitionCount = await reach(kafka, 'KAFKA_UNAVAILABLE', timeoutMs, () => admin.partitionCount(topic))
        const assignment = await reach(kafka, 'KAFKA_UNAVAILABLE', timeoutMs, () => admin.groupAssignment(group, topic))
        const holders = holdersOf(assignment)
        const offsets = found?.progress.get(topic) ?? new Map<number, bigint>()
        const partitions = [
          ...new Set([...Array.from({ length: partitionCount ?? 0 }, (_, p) => p), ...offsets.keys()]),
        ]
        partitions.sort((a, b) => a - b)
        const inTopic = partitions.filter((p) => p < (partitionCount ?? 0))
        const [ends, starts] = inTopic.length
          ? await reach(kafka, 'KAFKA_UNAVAILABLE', timeoutMs, () =>
              Promise.all([admin.endOffsets(topic, inTopic), admin.startOffsets(topic, inTopic)]),
            )
          : [new Map<number, bigint>(), new Map<number, bigint>()]
        const lags = partitions.map((partition): PartitionLag => {
          const tableOffset = offsets.get(partition)
          const endOffset = ends.get(partition)
          const from = tableOffset ?? starts.get(partition)
          const lag = endOffset === undefined || from === undefined ? undefined : endOffset - from
          const heldBy = holders.get(partition)
          return { partition, tableOffset, endOffset, lag: lag !== undefined && lag < 0n ? 0n : lag, heldBy }
        })
        statuses.push({
          dataset: dataset.name,
          topic,
          table: formatTableIdentifier(identifier),
          group,
          tableExists: metadata !== undefined,
          partitionCount,
          progressSource: found?.source.kind ?? 'none',
          partitions: lags,
          totalLag: lags.reduce((sum, p) => sum + (p.lag ?? 0n), 0n),
          lastCommit: metadata ? lastFloeCommit(metadata, group, now()) : undefined,
          consumers: {
            state: assignment.state,
            members: assignment.members.length,
            unheld: unheldIn(assignment, inTopic),
          },
        })
      }
    }
    return statuses
  } finally {
    await admin.close().catch(() => {})
    await catalog?.close().catch(() => {})
  }
}

/** Partition -> the client id of the member holding it; a worker's reader is named `<client id>-reader`. */
function holdersOf(group: GroupAssignment): Map<number, string> {
  const holders = new Map<number, string>()
  for (const member of group.members) {
    for (const partition of member.partitions) holders.set(partition, member.clientId.replace(/-reader$/, ''))
  }
  return holders
}

async function loadIfExists(catalog: Catalog, identifier: TableIdentifier): Promise<TableMetadata | undefined> {
  try {
    return (await catalog.loadTable(identifier)).metadata
  } catch (error) {
    // A table that does not exist yet is a status ("created on first run"), not a failure.
    if (isFloeError(error, 'CATALOG_NOT_FOUND')) return undefined
    throw error
  }
}

/** A duration as an operator reads it: 850 ms, 12 s, 4 min 3 s, 2 h 5 min, 3 d 4 h. */
export function formatAge(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  const s = Math.floor(ms / 1000)
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`
}

const dash = '-'
const text = (value: bigint | number | undefined) => (value === undefined ? dash : String(value))

function groupLine(group: GroupStatus): string {
  if (group.members === 0) return `${group.state}, no worker is running`
  return `${group.state}, ${group.members} member(s)`
}

/** The human report: one block per dataset, one row per partition. */
export function formatStatus(statuses: readonly DatasetStatus[]): string {
  const blocks = statuses.map((s) => {
    const topic = s.partitionCount === undefined ? 'missing' : `${s.partitionCount} partition(s)`
    const lines = [`dataset ${s.dataset}  topic ${s.topic} (${topic})  table ${s.table}  group ${s.group}`]
    const commit = s.lastCommit
    if (!s.tableExists) lines.push('  table: not created yet (created on first run)')
    else if (commit) {
      lines.push(
        `  last commit: snapshot ${commit.snapshotId} ${commit.kind} ${commit.commitId} at ${new Date(commit.committedAtMs).toISOString()} (${formatAge(commit.ageMs)} ago)`,
      )
    } else
      lines.push(
        `  last commit: none by this group${s.progressSource === 'property' ? ' (offsets from the table property)' : ''}`,
      )
    lines.push(`  consumer group: ${groupLine(s.consumers)}`)
    const unheld = s.consumers.unheld
    if (unheld.length > 0) {
      lines.push(
        `  held by no member: ${unheld.join(', ')} (read by no one; the group is made to rebalance after two session timeouts)`,
      )
    }
    if (s.partitions.length === 0) return lines.join('\n')
    const rows = [['partition', 'table offset', 'end offset', 'lag', 'held by']]
    for (const p of s.partitions) {
      rows.push([String(p.partition), text(p.tableOffset), text(p.endOffset), text(p.lag), p.heldBy ?? dash])
    }
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
    for (const row of rows) {
      lines.push(
        // numbers right-aligned, names left-aligned
        `  ${row.map((cell, column) => (column === 0 || column === 4 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ')}`.trimEnd(),
      )
    }
    lines.push(`  total lag ${s.totalLag}`)
    return lines.join('\n')
  })
  return blocks.join('\n\n')
}

/** The JSON report: offsets and ids as JSON integers (exact past 2^53), times as ISO text too. */
export function statusJson(statuses: readonly DatasetStatus[], at: number): string {
  return stringifyJson({
    at: new Date(at).toISOString(),
    datasets: statuses.map((s) => ({
      dataset: s.dataset,
      topic: s.topic,
      table: s.table,
      group: s.group,
      tableExists: s.tableExists,
      partitionCount: s.partitionCount ?? null,
      progressSource: s.progressSource,
      partitions: s.partitions.map((p) => ({
        partition: p.partition,
        tableOffset: p.tableOffset ?? null,
        endOffset: p.endOffset ?? null,
        lag: p.lag ?? null,
        heldBy: p.heldBy ?? null,
      })),
      consumerGroup: { state: s.consumers.state, members: s.consumers.members, unheldPartitions: s.consumers.unheld },
      totalLag: s.totalLag,
      lastCommit: s.lastCommit
        ? {
            snapshotId: s.lastCommit.snapshotId,
            kind: s.lastCommit.kind,
            commitId: s.lastCommit.commitId,
            committedAt: new Date(s.lastCommit.committedAtMs).toISOString(),
            ageSeconds: Math.round(s.lastCommit.ageMs / 1000),
          }
        : null,
    })),
  })
}

export async function runStatus(
  configPath: string | undefined,
  options: { json?: boolean; stdout?: Output; stderr?: Output; timeoutMs?: number } = {},
): Promise<number> {
  const stdout = options.stdout ?? process.stdout
  const stderr = options.stderr ?? process.stderr
  const config = configFor('status', configPath, stderr)
  if (!config) return 2
  try {
    const statuses = await datasetStatuses(
      config,
      options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs },
    )
    stdout.write(`${options.json ? statusJson(statuses, Date.now()) : formatStatus(statuses)}\n`)
    return 0
  } catch (error) {
    stderr.write(`floe status: ${isFloeError(error) ? error.message : reasonOf(error)}\n`)
    return 1
  }
}
