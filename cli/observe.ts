// `floe observe`: a live, decoded view of the control topic for an operator. It joins the topic
// read-only with a ControlChannel of its own (worker id `observe-<random>`; it sends no control
// message, only the channel's own positioning probes, which every receiver skips), prints one line
// per message, and when an ACK closes a round whose START it saw, one summary line: who answered,
// how long each phase took, the outcome. --json prints one JSON object per line. Runs until
// SIGINT or SIGTERM.
import { randomBytes } from 'node:crypto'
import {
  ControlChannel,
  type ControlLogger,
  type ControlMessage,
  type FilesPointer,
  type PartitionStatus,
  type Rejection,
  type TopicPartition,
  type TopicPartitionOffset,
} from '../protocol/index.ts'
import { isFloeError } from '../shared/index.ts'
import { stringifyJson } from '../shared/json/index.ts'
import { configFor, kafkaConnectionOf, type Output, reach, reasonOf } from './servers.ts'

interface MessageHead {
  kind: 'message'
  time: string
  dataset: string
  group: string
  commitId: string
  sender: string
  memberId: string
  generation: number
}

/** One partition of a WRITE-STATUS: its range and how many files and records it reports. */
export interface ObservedStatus {
  topic: string
  partition: number
  status: PartitionStatus['kind']
  range?: [bigint, bigint]
  origin?: string
  files: number
  records: bigint
  error?: string
  logStartJump?: PartitionStatus['logStartJump']
}

/** What each message type says, flat in the line beside its head. */
export type MessageDetails =
  | { type: 'StartCommit'; snapshotId: bigint | null; tableOffsets: TopicPartitionOffset[] }
  | { type: 'EndCommit'; expectedPartitions: TopicPartition[] }
  | { type: 'WriteStatus'; partitions: ObservedStatus[]; filesPointer?: FilesPointer }
  | {
      type: 'CommitAcked'
      snapshotId: bigint | null
      committed: Array<TopicPartitionOffset & { files: number }>
      rejections: Rejection[]
    }
  | { type: 'CommitRequested'; reason: string; partitions: TopicPartition[] }

/** One message as observe reports it; every offset and id is exact (bigint). */
export type MessageLine = MessageHead & MessageDetails

/** The summary of a round observe saw from its START to its ACK. */
export interface RoundLine {
  kind: 'round'
  time: string
  dataset: string
  group: string
  commitId: string
  coordinator: string
  outcome: 'committed' | 'empty' | 'rejected'
  snapshotId: bigint | null
  expected: number
  answered: Array<{ worker: string; partitions: number[] }>
  missing: number[]
  committed: number
  rejected: number
  phasesMs: { startToEnd: number | null; endToLastStatus: number | null; lastStatusToAck: number | null }
  totalMs: number
}

export type ObservedLine = MessageLine | RoundLine

interface WatchedRound {
  startedAt: number
  coordinator: string
  endedAt: number | undefined
  expected: TopicPartition[]
  /** Partition key -> the worker whose status named it last. */
  answers: Map<string, { worker: string; partition: number }>
  lastStatusAt: number | undefined
}

const keyOf = (dataset: string, group: string, commitId: string) => `${dataset}\u0000${group}\u0000${commitId}`
const partitionKey = (topic: string, partition: number) => `${topic}\u0000${partition}`

/** Rounds observe keeps in memory waiting for their ACK; older ones (failed rounds) are dropped. */
const MAX_OPEN_ROUNDS = 256

/** Follows rounds through their messages. Pure: the lines of each message, in topic order. */
export class RoundWatch {
  readonly #rounds = new Map<string, WatchedRound>()

  observe(message: ControlMessage): ObservedLine[] {
    const lines: ObservedLine[] = [messageLine(message)]
    const key = keyOf(message.dataset, message.group, message.commitId)
    const body = message.body
    if (body.type === 'StartCommit') {
      this.#rounds.set(key, {
        startedAt: message.timeMs,
        coordinator: message.sender.workerId,
        endedAt: undefined,
        expected: [],
        answers: new Map(),
        lastStatusAt: undefined,
      })
      if (this.#rounds.size > MAX_OPEN_ROUNDS) this.#rounds.delete(this.#rounds.keys().next().value as string)
      return lines
    }
    const round = this.#rounds.get(key)
    if (!round) return lines
    if (body.type === 'EndCommit') {
      round.endedAt = message.timeMs
      round.expected = body.expectedPartitions
    } else if (body.type === 'WriteStatus') {
      round.lastStatusAt = Math.max(round.lastStatusAt ?? message.timeMs, message.timeMs)
      for (const { topic, partition } of body.partitions) {
        round.answers.set(partitionKey(topic, partition), { worker: message.sender.workerId, partition })
      }
    } else if (body.type === 'CommitAcked') {
      this.#rounds.delete(key)
      lines.push(roundLine(message as ControlMessage<typeof body>, round))
    }
    return lines
  }
}

function roundLine(
  ack: ControlMessage<Extract<ControlMessage['body'], { type: 'CommitAcked' }>>,
  round: WatchedRound,
): RoundLine {
  const byWorker = new Map<string, number[]>()
  for (const { worker, partition } of round.answers.values())
    byWorker.set(worker, [...(byWorker.get(worker) ?? []), partition])
  const answered = [...byWorker].map(([worker, partitions]) => ({
    worker,
    partitions: partitions.sort((a, b) => a - b),
  }))
  const missing = round.expected
    .filter(({ topic, partition }) => !round.answers.has(partitionKey(topic, partition)))
    .map(({ partition }) => partition)
  const body = ack.body
  const afterEnd = round.lastStatusAt ?? round.endedAt
  return {
    kind: 'round',
    time: new Date(ack.timeMs).toISOString(),
    dataset: ack.dataset,
    group: ack.group,
    commitId: ack.commitId,
    coordinator: round.coordinator,
    outcome: body.snapshotId !== null ? 'committed' : body.rejections.length > 0 ? 'rejected' : 'empty',
    snapshotId: body.snapshotId,
    expected: round.expected.length,
    answered,
    missing,
    committed: body.committedOffsets.length,
    rejected: body.rejections.length,
    phasesMs: {
      startToEnd: round.endedAt === undefined ? null : round.endedAt - round.startedAt,
      endToLastStatus:
        round.endedAt === undefined || round.lastStatusAt === undefined ? null : round.lastStatusAt - round.endedAt,
      lastStatusToAck: afterEnd === undefined ? null : ack.timeMs - afterEnd,
    },
    totalMs: ack.timeMs - round.startedAt,
  }
}

export function messageLine(message: ControlMessage): MessageLine {
  return {
    kind: 'message',
    time: new Date(message.timeMs).toISOString(),
    dataset: message.dataset,
    group: message.group,
    commitId: message.commitId,
    sender: message.sender.workerId,
    memberId: message.sender.memberId,
    generation: message.sender.generation,
    ...detailsOf(message.body),
  }
}

function detailsOf(body: ControlMessage['body']): MessageDetails {
  switch (body.type) {
    case 'StartCommit':
      return { type: body.type, snapshotId: body.snapshotId, tableOffsets: body.tableOffsets }
    case 'EndCommit':
      return { type: body.type, expectedPartitions: body.expectedPartitions }
    case 'WriteStatus':
      return {
        type: body.type,
        partitions: body.partitions.map((p) => ({
          topic: p.topic,
          partition: p.partition,
          status: p.kind,
          ...(p.kind === 'data'
            ? { range: [p.rangeStart, p.rangeEnd] as [bigint, bigint], origin: p.origin ?? 'table' }
            : {}),
          files: p.files.length,
          records: p.files.reduce((sum, f) => sum + f.recordCount, 0n),
          ...(p.error === undefined ? {} : { error: p.error }),
          ...(p.logStartJump ? { logStartJump: p.logStartJump } : {}),
        })),
        ...(body.filesPointer ? { filesPointer: body.filesPointer } : {}),
      }
    case 'CommitAcked':
      return {
        type: body.type,
        snapshotId: body.snapshotId,
        committed: body.committedOffsets.map(({ topic, partition, offset }) => ({
          topic,
          partition,
          offset,
          files: body.committedFiles.find((f) => f.topic === topic && f.partition === partition)?.filePaths.length ?? 0,
        })),
        rejections: body.rejections,
      }
    case 'CommitRequested':
      return { type: body.type, reason: body.reason, partitions: body.partitions }
  }
}

// ---- human lines -----------------------------------------------------------------------------

const short = (commitId: string) => (commitId === '' ? '-' : commitId.slice(0, 8))
const seconds = (ms: number | null) => (ms === null ? '?' : `${(ms / 1000).toFixed(2)} s`)
const plural = (n: number | bigint, word: string) => `${n} ${word}${n === 1 || n === 1n ? '' : 's'}`

/** A line as an operator reads it. */
export function formatLine(line: ObservedLine): string {
  const head = `${line.time} ${line.dataset} ${short(line.commitId)}`
  if (line.kind === 'round') {
    const answered = line.answered.map((a) => `${a.worker}: ${a.partitions.map((p) => `p${p}`).join(' ')}`).join('; ')
    const count = line.answered.reduce((n, a) => n + a.partitions.length, 0)
    const snapshot = line.snapshotId === null ? 'no snapshot' : `snapshot ${line.snapshotId}`
    return (
      `${head} ROUND ${line.outcome} (${snapshot}, ${line.committed} committed, ${line.rejected} rejected): ` +
      `answered ${count}/${line.expected}${answered ? ` (${answered})` : ''}, missing ${line.missing.length ? line.missing.map((p) => `p${p}`).join(' ') : 'none'}; ` +
      `start→end ${seconds(line.phasesMs.startToEnd)}, end→last status ${seconds(line.phasesMs.endToLastStatus)}, ` +
      `last status→ack ${seconds(line.phasesMs.lastStatusToAck)}, total ${seconds(line.totalMs)}`
    )
  }
  return `${head} ${line.type.padEnd(15)} ${line.sender}  ${humanDetails(line)}`
}

function humanDetails(line: MessageLine): string {
  switch (line.type) {
    case 'StartCommit': {
      const offsets = line.tableOffsets.map((o) => `p${o.partition}=${o.offset}`).join(' ') || 'none'
      return `table offsets ${offsets} (snapshot ${line.snapshotId ?? 'none'})`
    }
    case 'EndCommit':
      return `expects ${plural(line.expectedPartitions.length, 'partition')}`
    case 'WriteStatus': {
      const parts = line.partitions.map((p) => {
        const name = `p${p.partition}`
        if (p.status === 'empty') return `${name} empty`
        if (p.status === 'error') return `${name} error: ${p.error ?? ''}`
        const [start, end] = p.range ?? [0n, 0n]
        return `${name} [${start},${end}) ${plural(p.files, 'file')} ${plural(p.records, 'record')}`
      })
      const pointer = line.filesPointer ? ` (file list at ${line.filesPointer.location})` : ''
      return `${parts.join('; ') || 'no partitions'}${pointer}`
    }
    case 'CommitAcked': {
      const committed = line.committed.map((c) => `p${c.partition}=${c.offset} (${plural(c.files, 'file')})`).join(' ')
      const rejected = line.rejections
        .map((r) => `p${r.partition} ${r.reason}${r.tableOffset === undefined ? '' : ` (table at ${r.tableOffset})`}`)
        .join(' ')
      const snapshot = line.snapshotId === null ? 'no snapshot' : `snapshot ${line.snapshotId}`
      return `${snapshot}; committed ${committed || 'none'}${rejected ? `; rejected ${rejected}` : ''}`
    }
    case 'CommitRequested':
      return `reason ${line.reason}`
  }
}

/** A line for machines: one JSON object, offsets and ids as exact JSON integers. */
export function jsonLine(line: ObservedLine): string {
  return stringifyJson(line)
}

// ---- the command -----------------------------------------------------------------------------

function channelLogger(stderr: Output): ControlLogger {
  const line = (details: Record<string, unknown>, message: string) =>
    stderr.write(`floe observe: ${message} ${JSON.stringify(details)}\n`)
  return { info: () => {}, warn: line, error: line }
}

export async function runObserve(
  configPath: string | undefined,
  options: { json?: boolean; stdout?: Output; stderr?: Output; signal?: AbortSignal; startTimeoutMs?: number } = {},
): Promise<number> {
  const stdout = options.stdout ?? process.stdout
  const stderr = options.stderr ?? process.stderr
  const config = configFor('observe', configPath, stderr)
  if (!config) return 2
  const workerId = `observe-${randomBytes(4).toString('hex')}`
  const topic = config.kafka.controlTopic
  const channel = new ControlChannel({
    connection: kafkaConnectionOf(config, workerId),
    topic,
    groupPrefix: config.kafka.groupPrefix,
    workerId,
    logger: channelLogger(stderr),
  })
  const watch = new RoundWatch()
  const format = options.json ? jsonLine : formatLine
  channel.register({
    receive: (message) => {
      for (const line of watch.observe(message)) stdout.write(`${format(line)}\n`)
    },
  })

  const stop = new AbortController()
  const onSignal = () => stop.abort()
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  options.signal?.addEventListener('abort', onSignal, { once: true })
  const stopped = new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }))
  const brokers = `kafka ${config.kafka.brokers.join(',')}`
  try {
    const startTimeoutMs = options.startTimeoutMs ?? 30_000
    await Promise.race([reach(brokers, 'KAFKA_UNAVAILABLE', startTimeoutMs, () => channel.start()), stopped])
    if (stop.signal.aborted) return 0
    stderr.write(
      `floe observe: watching ${topic} on ${config.kafka.brokers.join(',')} as ${workerId} (Ctrl-C to stop)\n`,
    )
    const failure = await Promise.race([channel.whenStopped(), stopped.then(() => undefined)])
    if (failure !== undefined) {
      stderr.write(`floe observe: ${brokers}: ${reasonOf(failure)}\n`)
      return 1
    }
    return 0
  } catch (error) {
    stderr.write(`floe observe: ${isFloeError(error) ? error.message : reasonOf(error)}\n`)
    return 1
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await channel.close().catch(() => {})
  }
}
