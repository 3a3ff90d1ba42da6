// The soak (not in CI): a fleet of `floe run` workers on the real local stack, data files on
// Azurite, under a steady stream of events (with malformed ones mixed in) while faults of every
// kind land at random moments: kill -9 of a worker (restarted on its WAL), SIGSTOP of a worker,
// of the REST catalog, of the broker, of Azurite, and a kill -9 restart of the broker on its data.
// At the end it lets the fleet settle, counts every id with pyiceberg and prints one line.
// `--storage s3` puts the data files and the SQL catalog's warehouse (manifests, metadata) on the
// stack's S3 server instead (`up --s3`), so a frozen storage also holds commits and table loads;
// there is no catalog server to freeze then. `--layout` picks the WAL layout of every worker.
//
//   node integration/stack/stack.ts up [--s3]
//   node bench/soak.ts --faults 40 [--workers 3] [--rate 150] [--seed 7] [--storage azure|s3] [--layout partition|shared]

import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { Fleet, type WorkerProcess } from '../integration/e2e/fleet.ts'
import { endpoints, type VerifyResult } from '../integration/harness.ts'
import { freezeService, restartBroker, thawService } from '../integration/stack/index.ts'
import { KafkaAdmin } from '../shared/kafka/index.ts'

const { values } = parseArgs({
  options: {
    faults: { type: 'string', default: '30' },
    workers: { type: 'string', default: '3' },
    partitions: { type: 'string', default: '6' },
    rate: { type: 'string', default: '150' },
    seed: { type: 'string' },
    storage: { type: 'string', default: 'azure' },
    layout: { type: 'string', default: 'partition' },
  },
})
const storage = values.storage
const walLayout = values.layout
if (storage !== 'azure' && storage !== 's3') throw new Error(`--storage is azure or s3, not ${storage}`)
if (walLayout !== 'partition' && walLayout !== 'shared')
  throw new Error(`--layout is partition or shared, not ${walLayout}`)
const faultCount = Number(values.faults)
const workerCount = Number(values.workers)
const partitions = Number(values.partitions)
const eventsPerSecond = Number(values.rate)

// A small seeded generator, so a run that found something can be repeated with --seed.
let state = Number(values.seed ?? Date.now() % 2 ** 31) >>> 0
const seed = state
function random(): number {
  state = (state + 0x6d2b79f5) >>> 0
  let x = Math.imul(state ^ (state >>> 15), 1 | state)
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
  return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32
}
const between = (lo: number, hi: number) => Math.floor(lo + random() * (hi - lo))

const allKinds = ['kill9', 'worker-stop', 'catalog-stop', 'broker-stop', 'broker-restart', 'storage-stop'] as const
type Kind = (typeof allKinds)[number]
// On S3 the catalog is the SQL one on a local file: freezing the storage is what holds it.
const kinds = storage === 's3' ? allKinds.filter((kind) => kind !== 'catalog-stop') : allKinds
const storageService = storage === 's3' ? 's3' : 'azurite'
const injected = Object.fromEntries(kinds.map((k) => [k, 0])) as Record<Kind, number>

const cleanups: (() => Promise<void> | void)[] = []
const context = { after: (fn: () => Promise<void> | void) => cleanups.push(fn) }
const frozen = new Set<string>()
async function cleanUp(): Promise<void> {
  for (const service of frozen) thawService(service)
  for (const fn of cleanups.reverse()) await fn()
}
process.once('SIGINT', () => void cleanUp().finally(() => process.exit(130)))

const fleet = await Fleet.create(context, {
  partitions,
  commitIntervalSeconds: 3,
  commitTimeoutSeconds: 8,
  sessionTimeoutMs: 6000,
  storage,
  walLayout,
  ...(storage === 's3' ? { catalog: 'sql' as const } : {}),
})
const t0 = Date.now()
const say = (text: string) => console.error(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(5)} s] ${text}`)
say(
  `seed ${seed}, ${workerCount} workers, ${partitions} partitions, ${eventsPerSecond} events/s, ` +
    `${storage} storage, ${walLayout} WAL, logs in ${fleet.dir}`,
)

// The producer holds off while the broker is down or frozen: a send that fails half-way leaves
// ids whose fate nobody knows, and the count at the end must be exact.
let brokerDown = false
let producing = true
let produceErrors = 0
const producer = (async () => {
  while (producing) {
    const started = Date.now()
    if (!brokerDown) {
      await fleet.produce(eventsPerSecond, { batch: eventsPerSecond, badEvery: 50 }).catch((error: unknown) => {
        produceErrors++
        say(`produce failed: ${error instanceof Error ? error.message : String(error)}`)
      })
    }
    await sleep(Math.max(0, 1000 - (Date.now() - started)))
  }
})()

async function freezeFor(service: string, ms: number): Promise<void> {
  frozen.add(service)
  freezeService(service)
  await sleep(ms)
  thawService(service)
  frozen.delete(service)
}

// A supervisor, as an orchestrator would be: a worker that exits by itself (it could not reach a
// server at start, or it crashed) is counted and started again on its WAL.
const current = new Map<string, WorkerProcess>()
const exits: string[] = []
let killing: WorkerProcess | undefined
const supervisor = setInterval(() => {
  for (const [name, worker] of current) {
    if (worker.running || worker === killing) continue
    exits.push(`${name} exit ${worker.child.exitCode ?? worker.child.signalCode}`)
    say(`${name} exited by itself (${worker.child.exitCode ?? worker.child.signalCode}); starting it again`)
    current.delete(name)
    void fleet.restart(worker).then((again) => current.set(name, again))
  }
}, 2000)
cleanups.push(() => clearInterval(supervisor))

for (let i = 0; i < workerCount; i++) {
  const worker = await fleet.start()
  current.set(worker.id, worker)
}

function someWorker(): WorkerProcess | undefined {
  const running = [...current.values()].filter((w) => w.running)
  return running[between(0, running.length)]
}

async function inject(kind: Kind): Promise<string> {
  switch (kind) {
    case 'kill9': {
      const victim = someWorker()
      if (!victim) return 'kill -9: no worker running'
      killing = victim
      victim.kill('SIGKILL')
      await victim.exited
      await sleep(between(0, 3000))
      current.set(victim.id, await fleet.restart(victim))
      killing = undefined
      return `kill -9 ${victim.id}, restarted on its WAL`
    }
    case 'worker-stop': {
      const victim = someWorker()
      if (!victim) return 'SIGSTOP: no worker running'
      const ms = between(3000, 15_000)
      victim.freeze()
      await sleep(ms)
      victim.thaw()
      return `SIGSTOP ${victim.id} for ${ms} ms`
    }
    case 'catalog-stop': {
      const ms = between(3000, 15_000)
      await freezeFor('iceberg-rest', ms)
      return `SIGSTOP catalog for ${ms} ms`
    }
    case 'storage-stop': {
      const ms = between(3000, 15_000)
      await freezeFor(storageService, ms)
      return `SIGSTOP ${storageService} for ${ms} ms`
    }
    case 'broker-stop': {
      const ms = between(3000, 12_000)
      brokerDown = true
      await freezeFor('kafka', ms)
      brokerDown = false
      return `SIGSTOP broker for ${ms} ms`
    }
    case 'broker-restart': {
      const downMs = between(0, 5000)
      brokerDown = true
      await restartBroker(0, { hard: true, downMs })
      brokerDown = false
      return `kill -9 broker, restarted on its data after ${downMs} ms`
    }
  }
}

/** Events past the table's offsets, summed over the topic's partitions. */
async function lagOf(report: VerifyResult): Promise<number> {
  const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'soak-lag' })
  try {
    const ends = await admin.endOffsets(
      fleet.topic,
      Array.from({ length: partitions }, (_, i) => i),
    )
    const marker = [...report.snapshots]
      .reverse()
      .flatMap((s) => Object.entries(s.summary).filter(([key]) => key.startsWith('floe.offsets.')))[0]
    const committed = (marker ? JSON.parse(marker[1]) : {}) as Record<string, Record<string, string | number>>
    const offsets = committed[fleet.topic] ?? {}
    let lag = 0
    for (const [partition, end] of ends) lag += Number(end) - Number(offsets[partition] ?? 0)
    return lag
  } finally {
    await admin.close()
  }
}

let report: VerifyResult | undefined
let dead = 0
try {
  await sleep(10_000)
  for (let n = 1; n <= faultCount; n++) {
    const kind = kinds[between(0, kinds.length)] as Kind
    injected[kind]++
    say(`fault ${n}/${faultCount}: ${await inject(kind)}`)
    await sleep(between(2000, 12_000))
  }
  producing = false
  await producer
  // Every worker that is still up (and the ones killed last, restarted) finish what they have.
  say(`faults done; waiting for ${fleet.ids.length} events to settle`)
  report = await fleet.waitSettled(10 * 60_000, 4)
  dead = (await fleet.deadLettered(60_000)).size
} finally {
  producing = false
  await producer
  const lag = report && !report.error ? await lagOf(report).catch(() => -1) : -1
  const ids = report?.ids
  const faults = kinds.map((k) => `${k} ${injected[k]}`).join(', ')
  console.log(
    `soak: ${storage} storage, ${walLayout} WAL, ${faultCount} faults (${faults}) | events ${fleet.ids.length} | rows ${report?.rows ?? '?'} | ` +
      `duplicates ${ids?.duplicated ?? '?'} | missing ${ids?.missing ?? '?'} | unexpected ${ids?.unexpected ?? '?'} | ` +
      `dlq ${dead}/${fleet.badIds.length} | lag ${lag} | worker exits ${exits.length} | produce errors ${produceErrors} | ` +
      `${((Date.now() - t0) / 1000).toFixed(0)} s | seed ${seed}${report?.error ? ` | error ${report.error}` : ''}`,
  )
  await cleanUp()
  if (exits.length) console.log(`worker exits: ${exits.join(', ')}`)
  const ok = ids?.missing === 0 && ids.duplicated === 0 && ids.unexpected === 0 && dead === fleet.badIds.length
  process.exitCode = ok ? 0 : 1
}
