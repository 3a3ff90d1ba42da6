// Test support for end-to-end runs: real `floe run` worker processes (bin/floe) on the real stack,
// a producer of events with unique ids, and the wait for pyiceberg to see them all. Every process
// a test starts is killed when the test ends, even when it fails.
import { type ChildProcess, spawn } from 'node:child_process'
import { createWriteStream, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { KafkaAdmin, KafkaProducer } from '../../shared/kafka/index.ts'
import { endpoints, uniqueName, type VerifyResult, verifyTable } from '../harness.ts'

const floe = join(import.meta.dirname, '..', '..', 'bin', 'floe')

export interface FleetOptions {
  partitions?: number
  commitIntervalSeconds?: number
  commitTimeoutSeconds?: number
  drainTimeoutSeconds?: number
  extraConfig?: string
  /** Environment overrides for every worker (FLOE_CATALOG__URI=... to go through a fault proxy). */
  env?: NodeJS.ProcessEnv
}

export class WorkerProcess {
  readonly id: string
  readonly logFile: string
  readonly child: ChildProcess
  readonly exited: Promise<number | null>

  constructor(id: string, config: string, logFile: string, env: NodeJS.ProcessEnv) {
    this.id = id
    this.logFile = logFile
    const out = createWriteStream(logFile, { flags: 'a' })
    this.child = spawn(floe, ['run', '--config', config], {
      env: { ...process.env, ...env, FLOE_WORKER_ID: id, FLOE_METRICS__PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.child.stdout?.pipe(out)
    this.child.stderr?.pipe(out)
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)))
  }

  /** Log lines as JSON objects (non-JSON lines are skipped). */
  lines(): Record<string, unknown>[] {
    let text = ''
    try {
      text = readFileSync(this.logFile, 'utf8')
    } catch {
      return []
    }
    return text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => {
        try {
          return JSON.parse(l) as Record<string, unknown>
        } catch {
          return {}
        }
      })
  }

  logged(message: string): boolean {
    return this.lines().some((l) => l.msg === message)
  }

  get coordinating(): boolean {
    const relevant = this.lines().filter((l) => l.msg === 'coordinating' || l.msg === 'no longer coordinating')
    return relevant.at(-1)?.msg === 'coordinating'
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  kill(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal)
  }
}

export class Fleet {
  readonly dir: string
  readonly topic: string
  readonly table: string
  readonly config: string
  readonly workers: WorkerProcess[] = []
  readonly ids: string[] = []
  readonly #env: NodeJS.ProcessEnv
  #serial = 0

  private constructor(dir: string, topic: string, table: string, config: string, env: NodeJS.ProcessEnv = {}) {
    this.dir = dir
    this.topic = topic
    this.table = table
    this.config = config
    this.#env = env
  }

  static async create(t: TestContext, options: FleetOptions = {}): Promise<Fleet> {
    const dir = await mkdtemp(join(tmpdir(), 'floe-e2e-'))
    const topic = uniqueName('e2e-events')
    const namespace = uniqueName('e2e')
    const table = `${namespace}.events`
    const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'e2e' })
    await admin.ensureTopic(topic, options.partitions ?? 6)
    await admin.close()
    const config = join(dir, 'floe.yaml')
    await writeFile(
      config,
      `kafka:
  brokers: [${endpoints().kafka.bootstrap}]
  groupPrefix: ${uniqueName('floe')}
  controlTopic: ${uniqueName('e2e-control')}
catalog:
  type: rest
  uri: ${endpoints().rest.uri}
ingestion:
  commitIntervalSeconds: ${options.commitIntervalSeconds ?? 2}
  commitTimeoutSeconds: ${options.commitTimeoutSeconds ?? 5}
  drainTimeoutSeconds: ${options.drainTimeoutSeconds ?? 20}
  wal:
    dir: ${join(dir, 'wal-unused')}
    maxFileAgeMinutes: 1
datasets:
  - name: events
    topic: ${topic}
    table: ${table}
    customMapping:
      id: id
      ts: ts
      user_id: user.id
      kind: kind
      amount: amount
    schema:
      id: string not null
      ts: timestamptz
      user_id: long
      kind: string
      amount: double
    partitionSpec: [day(ts)]
    dlqTopic: ${topic}-dlq
${options.extraConfig ?? ''}
log:
  level: info
`,
    )
    const fleet = new Fleet(dir, topic, table, config, options.env)
    t.after(async () => {
      for (const worker of fleet.workers) worker.kill('SIGKILL')
      await Promise.all(fleet.workers.map((w) => w.exited))
      if (!process.env.FLOE_KEEP_E2E) await rm(dir, { recursive: true, force: true })
    })
    return fleet
  }

  /**
   * Starts a worker with a WAL folder of its own (each worker is a machine of its own); a name used
   * before restarts that machine, its WAL folder kept. `env` overrides configuration keys.
   */
  async start(name = `w${++this.#serial}`, env: NodeJS.ProcessEnv = {}): Promise<WorkerProcess> {
    const wal = this.walDir(name)
    await mkdir(wal, { recursive: true })
    const worker = new WorkerProcess(name, this.config, join(this.dir, `${name}.log`), {
      ...this.#env,
      ...env,
      FLOE_INGESTION__WAL__DIR: wal,
    })
    this.workers.push(worker)
    return worker
  }

  walDir(name: string): string {
    return join(this.dir, name, 'wal')
  }

  /** Produces `count` events with new unique ids, spread over the partitions by key, or all to `partition`. */
  async produce(count: number, batch = 500, partition?: number): Promise<string[]> {
    const first = this.ids.length
    const producer = new KafkaProducer({ brokers: endpoints().kafka.brokers, clientId: 'e2e-producer' })
    try {
      for (let sent = 0; sent < count; sent += batch) {
        const records = []
        for (let i = sent; i < Math.min(count, sent + batch); i++) {
          const id = `${this.topic}-${this.ids.length}`
          this.ids.push(id)
          const event = {
            id,
            ts: new Date(Date.UTC(2026, 10, 28 + (i % 3))).toISOString(),
            user: { id: i },
            kind: 'click',
            amount: i / 10,
          }
          records.push({
            topic: this.topic,
            key: Buffer.from(id),
            value: Buffer.from(JSON.stringify(event)),
            ...(partition === undefined ? {} : { partition }),
          })
        }
        await producer.send(records)
      }
    } finally {
      await producer.close()
    }
    return this.ids.slice(first)
  }

  /** Waits until pyiceberg sees as many rows as ids were produced, or the deadline passes. */
  async waitForAll(timeoutMs: number): Promise<VerifyResult> {
    const idsFile = join(this.dir, 'ids.txt')
    await writeFile(idsFile, `${this.ids.join('\n')}\n`)
    const deadline = Date.now() + timeoutMs
    let last: VerifyResult | undefined
    while (Date.now() < deadline) {
      last = await verifyTable(this.table, { idsFile, idColumn: 'id' }).catch(
        (error: unknown) => ({ error: String(error) }) as VerifyResult,
      )
      if (!last.error && last.ids && last.ids.found >= this.ids.length && last.ids.missing === 0) return last
      await sleep(2000)
    }
    if (!last) throw new Error('no verification ran')
    return last
  }

  /** The worker's Prometheus metrics as `name{labels}` -> value (the port it logged at start). */
  async metrics(worker: WorkerProcess): Promise<Map<string, number>> {
    // A restarted machine appends to the same log: its latest start names the port.
    const started = worker
      .lines()
      .filter((l) => l.msg === 'worker started')
      .at(-1)
    if (!started) throw new Error(`worker ${worker.id} has not started`)
    const text = await (await fetch(`http://127.0.0.1:${String(started.metricsPort)}/metrics`)).text()
    const values = new Map<string, number>()
    for (const line of text.split('\n')) {
      if (line.startsWith('#') || line.trim() === '') continue
      const at = line.lastIndexOf(' ')
      values.set(line.slice(0, at), Number(line.slice(at + 1)))
    }
    return values
  }

  async waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await sleep(200)
    }
  }
}
