// Test support for the coordinator's end-to-end tests: a table on the REST catalog, a 3-partition
// topic, and fake participants on the control topic that answer END-COMMIT with WRITE-STATUS
// messages carrying real data files (written by integration/iceberg/table-writer.ts).
import { type ChildProcess, spawn } from 'node:child_process'
import type {
  ControlLogger,
  ControlMessage,
  ControlReceiver,
  PartitionStatus,
  WriteStatus,
} from '../../protocol/index.ts'
import { type CommitAcked, type ControlChannel, toDataFileEntry } from '../../protocol/index.ts'
import type { Catalog, TableIdentifier } from '../../shared/catalog/index.ts'
import type { Schema, StructValue } from '../../shared/iceberg/index.ts'
import { currentSchema, defaultSpec } from '../../shared/iceberg/metadata/index.ts'
import { partitionType } from '../../shared/iceberg/partitioning/index.ts'
import type { ObjectStorage } from '../../shared/storage/index.ts'
import { writeDataFiles } from '../iceberg/table-writer.ts'

export const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'string' },
    { id: 2, name: 'kind', required: false, type: 'string' },
    { id: 3, name: 'position', required: false, type: 'long' },
  ],
}
/** Partitioned, so that each WRITE-STATUS carries partition tuples the coordinator must convert. */
export const spec = { fields: [{ 'source-id': 2, name: 'kind', transform: 'identity' }] }

/** The id of the record at `offset` of Kafka partition `partition`: unique over the whole test. */
export const idOf = (partition: number, offset: number) => `p${partition}-o${offset}`

function rowsOf(partition: number, start: number, end: number): StructValue[] {
  return Array.from({ length: end - start }, (_, k) => ({
    id: idOf(partition, start + k),
    kind: (start + k) % 2 === 0 ? 'even' : 'odd',
    position: BigInt(start + k),
  }))
}

export interface LogLine {
  level: 'info' | 'warn' | 'error'
  details: Record<string, unknown>
  message: string
}

export function recordingLogger(): ControlLogger & { lines: LogLine[] } {
  const lines: LogLine[] = []
  return {
    lines,
    info: (details, message) => lines.push({ level: 'info', details, message }),
    warn: (details, message) => lines.push({ level: 'warn', details, message }),
    error: (details, message) => lines.push({ level: 'error', details, message }),
  }
}

/** Resolves when `check` returns a value; fails after `timeoutMs`. Woken by `wake`, never polled on a timer. */
class Waitable {
  #wakers = new Set<() => void>()
  wake(): void {
    for (const waker of this.#wakers) waker()
  }
  async until<T>(what: string, check: () => T | undefined, timeoutMs = 30_000): Promise<T> {
    const found = check()
    if (found !== undefined) return found
    let timer: NodeJS.Timeout | undefined
    let waker: (() => void) | undefined
    try {
      return await new Promise<T>((resolve, reject) => {
        waker = () => {
          const value = check()
          if (value !== undefined) resolve(value)
        }
        this.#wakers.add(waker)
        timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs)
      })
    } finally {
      clearTimeout(timer)
      if (waker) this.#wakers.delete(waker)
    }
  }
}

/**
 * Participants as a test scripts them: at every END-COMMIT (of any coordinator) they answer with
 * `answers`, one WRITE-STATUS per worker that `workerOf` names for each partition.
 */
export class FakeParticipants implements ControlReceiver {
  readonly seen: ControlMessage[] = []
  answers: PartitionStatus[] = []
  /** Rewrites each WRITE-STATUS before it is sent (e.g. spills its file list to storage). */
  rewrite: ((message: ControlMessage<WriteStatus>) => Promise<ControlMessage<WriteStatus>>) | undefined
  readonly #channel: ControlChannel
  readonly #dataset: string
  readonly #group: string
  readonly #workerOf: (partition: number) => string
  readonly #arrivals = new Waitable()

  constructor(channel: ControlChannel, dataset: string, group: string, workerOf: (partition: number) => string) {
    this.#channel = channel
    this.#dataset = dataset
    this.#group = group
    this.#workerOf = workerOf
  }

  async receive(message: ControlMessage): Promise<void> {
    if (message.dataset !== this.#dataset || message.group !== this.#group) return
    this.seen.push(message)
    this.#arrivals.wake()
    if (message.body.type !== 'EndCommit') return
    const byWorker = new Map<string, PartitionStatus[]>()
    for (const status of this.answers) {
      const worker = this.#workerOf(status.partition)
      byWorker.set(worker, [...(byWorker.get(worker) ?? []), status])
    }
    for (const [workerId, partitions] of byWorker) {
      const status: ControlMessage<WriteStatus> = {
        dataset: this.#dataset,
        group: this.#group,
        commitId: message.commitId,
        sender: { workerId, memberId: `${workerId}-member`, generation: 1 },
        timeMs: Date.now(),
        body: { type: 'WriteStatus', partitions },
      }
      await this.#channel.send(this.rewrite ? await this.rewrite(status) : status)
    }
  }

  /** The ACK of a round, once it has arrived. */
  ack(commitId: string): Promise<CommitAcked> {
    return this.#arrivals.until(`the ACK of ${commitId}`, () => {
      const found = this.seen.find((m) => m.commitId === commitId && m.body.type === 'CommitAcked')
      return found?.body as CommitAcked | undefined
    })
  }

  /** The START-COMMIT of a round. */
  start(commitId: string): Promise<ControlMessage> {
    return this.#arrivals.until(`the START of ${commitId}`, () =>
      this.seen.find((m) => m.commitId === commitId && m.body.type === 'StartCommit'),
    )
  }
}

/** Writes the rows of `[start, end)` of a partition as data files and reports them as one status. */
export async function writtenStatus(
  target: { catalog: Catalog; storage: ObjectStorage; table: TableIdentifier; topic: string },
  partition: number,
  start: number,
  end: number,
  origin: 'table' | 'offset-reset' = 'table',
): Promise<PartitionStatus> {
  const { metadata } = await target.catalog.loadTable(target.table)
  const files = await writeDataFiles(target.storage, metadata, rowsOf(partition, start, end))
  const type = partitionType(defaultSpec(metadata), currentSchema(metadata))
  return {
    topic: target.topic,
    partition,
    kind: 'data',
    rangeStart: BigInt(start),
    rangeEnd: BigInt(end),
    files: files.map((file) => toDataFileEntry(file, type)),
    origin,
  }
}

export function emptyStatus(topic: string, partition: number, at: number): PartitionStatus {
  return { topic, partition, kind: 'empty', rangeStart: BigInt(at), rangeEnd: BigInt(at), files: [] }
}

/** A child process whose stdout and stderr lines a test can wait for. */
export class WatchedProcess {
  readonly child: ChildProcess
  readonly stdout: string[] = []
  readonly stderr: string[] = []
  readonly exited: Promise<number | null>
  readonly #lines = new Waitable()

  constructor(command: string, args: string[]) {
    this.child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    for (const [stream, lines] of [
      [this.child.stdout, this.stdout],
      [this.child.stderr, this.stderr],
    ] as const) {
      let partial = ''
      stream?.setEncoding('utf8')
      stream?.on('data', (chunk: string) => {
        const parts = (partial + chunk).split('\n')
        partial = parts.pop() ?? ''
        lines.push(...parts)
        this.#lines.wake()
      })
    }
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)))
  }

  line(stream: 'stdout' | 'stderr', what: string, matches: (line: string) => boolean, timeoutMs?: number) {
    return this.#lines.until(what, () => this[stream].find(matches), timeoutMs)
  }
}
