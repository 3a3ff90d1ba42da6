// Test support for end-to-end runs: real `floe run` worker processes (bin/floe) on the real stack,
// a producer of events with unique ids (and malformed ones, for the dead-letter topic), and the
// wait for pyiceberg to see them all, then to still see each exactly once a few commit intervals
// later. Every process a test starts is killed when the test ends, even when it fails.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { createWriteStream, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { KafkaAdmin, KafkaProducer } from '../../shared/kafka/index.ts'
import { azuriteLocation } from '../catalog/probe.ts'
import { endpoints, uniqueName, type VerifyResult, verifyTable } from '../harness.ts'
import { s3Endpoints } from '../s3/support.ts'
import { badEventsIn, malformedEvent } from './events.ts'
import { digestOf } from './log-digest.ts'

const floe = join(import.meta.dirname, '..', '..', 'bin', 'floe')

export interface FleetOptions {
  /** Partitions of each topic the fleet creates (default 6). */
  partitions?: number
  /**
   * How many topics the dataset reads (default 1: `topic:`); more are `topics: [...]`, named
   * `<first>`, `<first>.2`, ..., each with `partitions`.
   */
  topicCount?: number
  /**
   * The topics by `topicPattern` (`<first>(\..+)?`, looked for every 2 s) instead of a `topics`
   * list; `addTopic` then makes one more that it matches.
   */
  topicPattern?: boolean
  commitIntervalSeconds?: number
  commitTimeoutSeconds?: number
  drainTimeoutSeconds?: number
  /** kafka.sessionTimeoutMs of the workers: how soon a frozen worker loses its partitions. */
  sessionTimeoutMs?: number
  /** Where data files go: the local warehouse (default), Azurite, or the stack's S3 server (`up --s3`). */
  storage?: 'local' | 'azure' | 's3'
  /**
   * The workers' catalog: the stack's REST catalog (default; with `storage: 's3'`, the REST catalog
   * whose warehouse is on S3); `sql`, Floe's SQL catalog on a SQLite
   * file of the fleet's own, its warehouse in the chosen storage (with `storage: 's3'`, data and
   * metadata on S3); or `postgres`, the SQL catalog on the stack's PostgreSQL (`stack up
   * --postgres`), the password from the environment. pyiceberg reads through the same catalog.
   */
  catalog?: 'rest' | 'sql' | 'postgres'
  extraConfig?: string
  /** ingestion.wal.layout of the workers (default: the config's default). */
  walLayout?: 'partition' | 'shared'
  /** ingestion.wal.encoderThreads of the workers (default: the config's default, no encoder thread). */
  encoderThreads?: number
  /**
   * ingestion.threads of the workers: each worker's members on threads (default 1, the one-member
   * worker these suites were written for, whatever the machine's cores).
   */
  threads?: number
  /** Environment overrides for every worker (FLOE_CATALOG__URI=... to go through a fault proxy). */
  env?: NodeJS.ProcessEnv
  /**
   * How the workers reach Kafka: the PLAINTEXT listener (default), or the stack's SASL_SSL one
   * (`stack up --kafka-security sasl_ssl`) with SCRAM-SHA-512, the stack's CA and client
   * certificate, the password from the environment. The test's own producer stays on PLAINTEXT.
   */
  kafka?: 'plaintext' | 'sasl_ssl'
  /**
   * The dataset's customMapping, schema and partitionSpec (YAML at the dataset's indentation) in
   * place of the default five columns; `produce` then needs an `event` that fits them.
   */
  dataset?: string
  /** Settings of the topic the fleet creates (`message.timestamp.type: LogAppendTime`). */
  topicConfigs?: Record<string, string>
  /**
   * Routes the default events by their `kind` into `<namespace>.events_<kind>` (the dataset's
   * `table` then holds the progress only); `kindOf` gives the n-th good event's kind.
   */
  route?: { kindOf(n: number): string; extra?: string }
}

/** The `catalog:` section of a worker's floe.yaml, and the environment that gives its password. */
function catalogSection(
  options: FleetOptions,
  dir: string,
  namespace: string,
): { yaml: string; env: NodeJS.ProcessEnv } {
  if (options.catalog === 'postgres') {
    const server = endpoints().postgres
    if (!server) throw new Error('the stack has no PostgreSQL: start it with --postgres')
    return {
      yaml: `catalog:\n  type: sql\n  uri: ${server.uri}\n  warehouse: file://${join(dir, 'warehouse')}\n`,
      env: { FLOE_CATALOG__PASSWORD: server.password },
    }
  }
  if (options.catalog !== 'sql') {
    // With S3 storage, the REST catalog whose warehouse is on S3: the table wholly there.
    const uri = options.storage === 's3' ? s3Endpoints().rest.uri : endpoints().rest.uri
    return { yaml: `catalog:\n  type: rest\n  uri: ${uri}\n`, env: {} }
  }
  const warehouse =
    options.storage === 's3'
      ? `${s3Endpoints().warehouse}/${namespace}`
      : options.storage === 'azure'
        ? azuriteLocation(namespace)
        : `file://${join(dir, 'warehouse')}`
  return { yaml: `catalog:\n  type: sql\n  path: ${join(dir, 'catalog.db')}\n  warehouse: ${warehouse}\n`, env: {} }
}

/** The `kafka:` lines that reach the SASL_SSL listener, and the secrets a worker must never print. */
function secureKafka(): { yaml: string; env: NodeJS.ProcessEnv; secrets: string[] } {
  const secure = endpoints().kafka.secure
  if (!secure) throw new Error('the stack has no SASL_SSL listener: start it with --kafka-security sasl_ssl')
  const key = readFileSync(secure.keyFile, 'utf8')
  return {
    yaml: `  brokers: [${secure.bootstrap}]
  ssl:
    caFile: ${secure.caFile}
    certFile: ${secure.certFile}
    keyFile: ${secure.keyFile}
  sasl:
    mechanism: scram-sha-512
    username: ${secure.users.scram.username}
`,
    env: { FLOE_KAFKA__SASL__PASSWORD: secure.users.scram.password },
    // The key's base64 body, line by line: a PEM printed whole or in part is found.
    secrets: [
      secure.users.scram.password,
      ...key.split('\n').filter((line) => line.length > 0 && !line.startsWith('-----')),
    ],
  }
}

const defaultDataset = `    customMapping:
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
`

export class WorkerProcess {
  readonly id: string
  readonly logFile: string
  readonly child: ChildProcess
  readonly exited: Promise<number | null>

  /** The WAL folder, when the fleet chose it: a restart of the same worker (Fleet.restart) finds what it left there. */
  readonly walDir: string | undefined

  constructor(id: string, config: string, logFile: string, env: NodeJS.ProcessEnv = {}, walDir?: string) {
    this.walDir = walDir
    this.id = id
    this.logFile = logFile
    const out = createWriteStream(logFile, { flags: 'a' })
    this.child = spawn(floe, ['run', '--config', config], {
      env: {
        ...process.env,
        // One member, whatever the machine's cores, unless the test asks for more (or the whole run
        // does, FLOE_TEST_THREADS: the suites once more with every worker on members).
        FLOE_INGESTION__THREADS: process.env.FLOE_TEST_THREADS ?? '1',
        ...env,
        FLOE_WORKER_ID: id,
        FLOE_METRICS__PORT: '0',
        ...(walDir === undefined ? {} : { FLOE_INGESTION__WAL__DIR: walDir }),
      },
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

  /** SIGSTOP: the process holds its sockets, files and partitions and does nothing (a zombie). */
  freeze(): void {
    this.kill('SIGSTOP')
  }

  thaw(): void {
    this.kill('SIGCONT')
  }
}

export class Fleet {
  readonly dir: string
  /** The dataset's first topic; `topics` holds every one. */
  readonly topic: string
  readonly #topics: string[]
  readonly #partitions: number
  readonly #topicConfigs: Record<string, string> | undefined
  readonly table: string
  readonly config: string
  readonly dlqTopic: string
  readonly commitIntervalMs: number
  readonly workers: WorkerProcess[] = []
  readonly #route: FleetOptions['route']
  /** A routed fleet: the table each good id belongs in, by id. */
  readonly tableOf = new Map<string, string>()
  /** Ids of the good events produced: each must be in the table exactly once. */
  readonly ids: string[] = []
  /** Ids of the malformed events produced: each must be in the dead-letter topic, none in the table. */
  readonly badIds: string[] = []
  /** What no worker may ever write to its log: the SASL password and the private key on SASL_SSL, the S3 secret key. */
  readonly secrets: string[]
  readonly #env: NodeJS.ProcessEnv
  /** How pyiceberg finds the table: the workers' catalog (with the SQLite file, when the fleet has one). */
  readonly #verifyCatalog: { catalog: 'rest' | 'sql' | 'postgres'; sqlPath?: string; restUri?: string }
  #serial = 0
  readonly #incarnations = new Map<string, number>()

  private constructor(
    dir: string,
    topics: readonly string[],
    table: string,
    config: string,
    options: FleetOptions,
    kafka?: { env: NodeJS.ProcessEnv; secrets: string[] },
    catalogEnv: NodeJS.ProcessEnv = {},
  ) {
    this.dir = dir
    const [topic = ''] = topics
    this.topic = topic
    this.#topics = [...topics]
    this.#partitions = options.partitions ?? 6
    this.#topicConfigs = options.topicConfigs
    this.#route = options.route
    this.table = table
    this.config = config
    this.dlqTopic = `${topic}-dlq`
    this.commitIntervalMs = (options.commitIntervalSeconds ?? 2) * 1000
    const s3 = options.storage === 's3' ? s3Endpoints() : undefined
    this.secrets = [
      ...(kafka?.secrets ?? []),
      ...Object.values(catalogEnv).filter((v) => v !== undefined),
      ...(s3 ? [s3.secretAccessKey] : []),
    ]
    this.#verifyCatalog =
      options.catalog === 'sql'
        ? { catalog: 'sql', sqlPath: join(dir, 'catalog.db') }
        : {
            catalog: options.catalog ?? 'rest',
            ...(s3 && options.catalog !== 'postgres' ? { restUri: s3.rest.uri } : {}),
          }
    this.#env = {
      ...kafka?.env,
      ...catalogEnv,
      ...(s3
        ? { FLOE_STORAGE__S3__ACCESS_KEY_ID: s3.accessKeyId, FLOE_STORAGE__S3__SECRET_ACCESS_KEY: s3.secretAccessKey }
        : {}),
      ...(options.storage === 'azure'
        ? { FLOE_STORAGE__AZURE__CONNECTION_STRING: endpoints().azurite.connectionString }
        : {}),
      ...(options.threads === undefined ? {} : { FLOE_INGESTION__THREADS: String(options.threads) }),
      ...options.env,
    }
  }

  static async create(t: Pick<TestContext, 'after'>, options: FleetOptions = {}): Promise<Fleet> {
    const dir = await mkdtemp(join(tmpdir(), 'floe-e2e-'))
    const topic = uniqueName('e2e-events')
    const topicCount = options.topicCount ?? 1
    const topics = [topic, ...Array.from({ length: topicCount - 1 }, (_, i) => `${topic}.${i + 2}`)]
    const namespace = uniqueName('e2e')
    const table = `${namespace}.events`
    const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'e2e' })
    for (const name of topics) await admin.ensureTopic(name, options.partitions ?? 6, options.topicConfigs)
    await admin.close()
    const config = join(dir, 'floe.yaml')
    const azure = options.storage === 'azure'
    const kafka = options.kafka === 'sasl_ssl' ? secureKafka() : undefined
    const catalog = catalogSection(options, dir, namespace)
    // The table's data files on Azurite; pyiceberg reads abfs:// through fsspec (integration/participant).
    const s3 = options.storage === 's3' ? s3Endpoints() : undefined
    const storage = s3
      ? `storage:
  type: s3
  s3:
    bucket: ${s3.bucket}
    region: ${s3.region}
    endpoint: ${s3.endpoint}
    forcePathStyle: true
`
      : azure
        ? `storage:
  type: azure
  azure:
    container: ${endpoints().azurite.container}
`
        : ''
    const tableProperties = azure
      ? `    tableProperties:
      write.data.path: ${azuriteLocation(`${namespace}/events/data`)}
      py-io-impl: pyiceberg.io.fsspec.FsspecFileIO
`
      : ''
    await writeFile(
      config,
      `kafka:
${kafka?.yaml ?? `  brokers: [${endpoints().kafka.bootstrap}]\n`}  groupPrefix: ${uniqueName('floe')}
  controlTopic: ${uniqueName('e2e-control')}
  sessionTimeoutMs: ${options.sessionTimeoutMs ?? 30_000}
${catalog.yaml}${storage}ingestion:
  commitIntervalSeconds: ${options.commitIntervalSeconds ?? 2}
  commitTimeoutSeconds: ${options.commitTimeoutSeconds ?? 5}
  drainTimeoutSeconds: ${options.drainTimeoutSeconds ?? 20}
  wal:
    dir: ${join(dir, 'wal-unused')}
    maxFileAgeMinutes: 1
${options.walLayout ? `    layout: ${options.walLayout}\n` : ''}${options.encoderThreads ? `    encoderThreads: ${options.encoderThreads}\n` : ''}datasets:
  - name: events
    ${
      options.topicPattern
        ? `topicPattern: '${topic.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\..+)?'\n    topicRefreshSeconds: 2`
        : topicCount === 1
          ? `topic: ${topic}`
          : `topics: [${topics.join(', ')}]`
    }
    table: ${table}
${options.dataset ?? defaultDataset}    dlqTopic: ${topic}-dlq
${options.route ? `    route: {field: kind, table: '${namespace}.events_{value}'${options.route.extra ?? ''}}\n` : ''}
${tableProperties}${options.extraConfig ?? ''}
log:
  level: info
`,
    )
    const fleet = new Fleet(dir, topics, table, config, options, kafka, catalog.env)
    t.after(async () => {
      for (const worker of fleet.workers) worker.kill('SIGKILL')
      // A frozen process acts on SIGKILL too; SIGCONT for one that is stopped in a debugger.
      for (const worker of fleet.workers) worker.thaw()
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
    const incarnation = (this.#incarnations.get(name) ?? 0) + 1
    this.#incarnations.set(name, incarnation)
    const log = join(this.dir, incarnation === 1 ? `${name}.log` : `${name}.${incarnation}.log`)
    const worker = new WorkerProcess(name, this.config, log, { ...this.#env, ...env }, wal)
    this.workers.push(worker)
    return worker
  }

  get topics(): readonly string[] {
    return this.#topics
  }

  /** Creates one more topic (`<first>.<n>`, which a fleet's topicPattern matches); returns its name. */
  async addTopic(): Promise<string> {
    const topic = `${this.topic}.${this.#topics.length + 1}`
    const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'e2e' })
    try {
      await admin.ensureTopic(topic, this.#partitions, this.#topicConfigs)
    } finally {
      await admin.close()
    }
    this.#topics.push(topic)
    return topic
  }

  walDir(name: string): string {
    return join(this.dir, name, 'wal')
  }

  /**
   * Starts `worker` again after it exited, as the same machine: same worker id, same WAL folder
   * (what a crash left there is recovered or dropped, docs/design.md "Recovery"), a log of its own.
   */
  async restart(worker: WorkerProcess): Promise<WorkerProcess> {
    // A kill just sent is not an exit yet: give the process a moment to go.
    const exited = await Promise.race([worker.exited.then(() => true), sleep(10_000).then(() => false)])
    if (!exited) throw new Error(`worker ${worker.id} still runs: kill it first`)
    return this.start(worker.id)
  }

  /**
   * Produces `count` events with new unique ids, spread over the partitions by key or all to
   * `partition`; with `badEvery`, every so many of them is a malformed JSON event instead
   * (dead-letter material); `event` makes the event of an id (its index among all good ids), for a
   * fleet made with `dataset`. Returns the good ids produced.
   */
  async produce(
    count: number,
    options: {
      batch?: number
      badEvery?: number
      partition?: number
      event?: (id: string, i: number) => unknown
      /** Headers of each good event. */
      headers?: (id: string, i: number) => Record<string, string>
      /** The topic to produce to (default: the first). */
      topic?: string
    } = {},
  ): Promise<string[]> {
    const topic = options.topic ?? this.topic
    const batch = options.batch ?? 500
    const partition = options.partition === undefined ? {} : { partition: options.partition }
    const first = this.ids.length
    const producer = new KafkaProducer({ brokers: endpoints().kafka.brokers, clientId: 'e2e-producer' })
    try {
      for (let sent = 0; sent < count; sent += batch) {
        const records = []
        for (let i = sent; i < Math.min(count, sent + batch); i++) {
          if (options.badEvery && i % options.badEvery === options.badEvery - 1) {
            const id = `${topic}-bad-${this.badIds.length}`
            this.badIds.push(id)
            records.push({ topic, key: Buffer.from(id), value: malformedEvent(id), ...partition })
            continue
          }
          const id = `${topic}-${this.ids.length}`
          this.ids.push(id)
          const kind = this.#route?.kindOf(this.ids.length - 1) ?? 'click'
          if (this.#route) this.tableOf.set(id, `${this.table}_${kind}`)
          const event = options.event?.(id, this.ids.length - 1) ?? {
            id,
            ts: new Date(Date.UTC(2026, 10, 28 + (i % 3))).toISOString(),
            user: { id: i },
            kind,
            amount: i / 10,
          }
          const headers = options.headers?.(id, this.ids.length - 1)
          records.push({
            topic,
            key: Buffer.from(id),
            value: Buffer.from(JSON.stringify(event)),
            ...partition,
            ...(headers ? { headers } : {}),
          })
        }
        await producer.send(records)
      }
    } finally {
      await producer.close()
    }
    return this.ids.slice(first)
  }

  /**
   * The malformed events' ids found in the dead-letter topic, read from its start until every one
   * is there or `timeoutMs` passes (duplicates there are allowed: the DLQ is at-least-once).
   */
  async deadLettered(timeoutMs: number): Promise<Set<string>> {
    return badEventsIn(this.dlqTopic, new Set(this.badIds), timeoutMs)
  }

  /**
   * Waits until pyiceberg sees every produced id, or the deadline passes. A step inside a test
   * (the fleet has caught up), never its verdict: a duplicate can still land after the first
   * moment every id is there. `waitSettled` is the verdict.
   */
  async waitUntilAllSeen(timeoutMs: number): Promise<VerifyResult> {
    const idsFile = join(this.dir, 'ids.txt')
    // routed: every table the route made, each id checked to be in its own
    const lines = this.#route ? this.ids.map((id) => `${id}\t${this.tableOf.get(id)}`) : this.ids
    await writeFile(idsFile, `${lines.join('\n')}\n`)
    const table = this.#route ? `${this.table}_*` : this.table
    const deadline = Date.now() + timeoutMs
    let last: VerifyResult | undefined
    while (Date.now() < deadline) {
      last = await verifyTable(table, { idsFile, idColumn: 'id', ...this.#verifyCatalog }).catch(
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
    // The latest start in this process's log names the port.
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

  /**
   * The verdict of a test: waits for every id, then lets `settleMs` pass (three commit intervals
   * unless a test says otherwise) and reads the table again, so a late duplicate (a zombie's
   * commit, a retried upload) lands in that time and is seen. `assertEveryIdOnce` takes only this.
   */
  async waitSettled(timeoutMs: number, settleMs = 3 * this.commitIntervalMs): Promise<SettledResult> {
    const first = await this.waitUntilAllSeen(timeoutMs)
    if (first.error || first.ids?.missing !== 0) return { ...first, settledMs: 0, group: await this.groupView() }
    await sleep(settleMs)
    const settled = await this.waitUntilAllSeen(timeoutMs)
    const complete = !settled.error && settled.ids?.missing === 0 && settled.ids.duplicated === 0
    return { ...settled, settledMs: settleMs, ...(complete ? {} : { group: await this.groupView() }) }
  }

  /** The dataset's consumer group. */
  get group(): string {
    const prefix = /groupPrefix: (\S+)/.exec(readFileSync(this.config, 'utf8'))?.[1]
    return `${prefix}-events`
  }

  /**
   * The dataset's consumer group as the broker sees it, for a failed verdict: its state, each
   * member's partitions, and the partitions no member holds (a partition no one reads is a stall,
   * not a loss).
   */
  async groupView(): Promise<string> {
    const group = this.group
    const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'e2e' })
    try {
      const views: string[] = []
      for (const topic of this.topics) {
        const [{ state, members }, partitions] = await Promise.all([
          admin.groupAssignment(group, topic),
          admin.partitionCount(topic),
        ])
        const held = new Set(members.flatMap((member) => member.partitions))
        const nobody = Array.from({ length: partitions ?? 0 }, (_, p) => p).filter((p) => !held.has(p))
        const lines = members.map((member) => `   ${member.memberId}: [${member.partitions.join(',')}]`)
        views.push(`group ${group} ${state}, ${topic} held by no member: [${nobody.join(',')}]`, ...lines)
      }
      return views.join('\n')
    } catch (error) {
      return `group ${group}: could not describe it: ${String(error)}`
    } finally {
      await admin.close()
    }
  }

  async waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (!predicate()) {
      if (Date.now() > deadline) {
        console.error(`timed out waiting for ${what}; the workers:\n${digestOf(this.workers)}`)
        throw new Error(`timed out waiting for ${what}`)
      }
      await sleep(200)
    }
  }

  /** The worker that coordinates now (it owns partition 0 and said so). */
  async coordinator(timeoutMs = 180_000): Promise<WorkerProcess> {
    let found: WorkerProcess | undefined
    await this.waitFor(
      () => {
        found = this.workers.find((w) => w.running && w.coordinating)
        return found !== undefined
      },
      timeoutMs,
      'a coordinator',
    )
    return found as WorkerProcess
  }

  /** Every secret of `secrets` found in a worker's whole log (stdout and stderr), by worker id. */
  secretsLogged(): string[] {
    const found: string[] = []
    for (const worker of this.workers) {
      const log = readFileSync(worker.logFile, 'utf8')
      if (this.secrets.some((secret) => log.includes(secret))) found.push(worker.id)
    }
    return found
  }

  /** Resolves once a round has committed since the call (any worker's log says so). */
  async nextCommit(timeoutMs: number): Promise<void> {
    const count = () =>
      this.workers.reduce((n, w) => n + w.lines().filter((l) => l.msg === 'round committed').length, 0)
    const before = count()
    await this.waitFor(() => count() > before, timeoutMs, 'a committed round')
  }
}

/** A table read made after a settling time (`Fleet.waitSettled`), the only kind a verdict accepts. */
export interface SettledResult extends VerifyResult {
  readonly settledMs: number
  /** The consumer group as the broker saw it when the table was not right (Fleet.groupView). */
  readonly group?: string
}

/** The exactly-once verdict on a settled pyiceberg report: every id of `fleet` in the table once, nothing else. */
export function assertEveryIdOnce(fleet: Fleet, report: SettledResult): void {
  const complete = report.error === undefined && report.ids?.missing === 0 && report.ids.duplicated === 0
  if (!complete) {
    console.error(`the table is not right; the workers:\n${digestOf(fleet.workers)}\n${report.group ?? ''}`)
  }
  assert.equal(report.error, undefined, report.error)
  assert.deepEqual(
    {
      expected: report.ids?.expected,
      missing: report.ids?.missing,
      duplicated: report.ids?.duplicated,
      unexpected: report.ids?.unexpected,
      misrouted: report.ids?.misrouted ?? 0,
    },
    { expected: fleet.ids.length, missing: 0, duplicated: 0, unexpected: 0, misrouted: 0 },
    `ids: ${JSON.stringify(report.ids)}`,
  )
  assert.equal(report.rows, fleet.ids.length)
}
