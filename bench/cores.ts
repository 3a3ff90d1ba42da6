// What two cores give on this machine, before any Floe code runs: the same CPU-bound work on one
// thread alone, then on two threads at once, and how much slower each thread runs beside the other.
// A worker of two members (ingestion.threads 2) can drain no faster than this allows, so the
// members' benchmark (scale.bench.ts --threads 2) is read beside it.
//
//   node bench/cores.ts [rounds=3]
//
// Two kinds of work: `JSON.parse` of 1 KiB events (what a member spends most of its time on), and
// SHA-256 over a block that stays in each core's own caches (so a slowdown there is the cores', not
// the shared cache's or memory's). On a machine whose two cores are truly independent both read
// about 1.00x; virtual cores that share a physical one, or a host that lowers its clock with more
// cores busy, read more.
import { createHash } from 'node:crypto'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { quantile } from './scale-probes.ts'

type Work = 'parse' | 'hash'

interface ThreadResult {
  wallMs: number
  sink: number
}

const PARSES = 400_000
const HASHES = 60_000

function parseWork(): number {
  const events: Buffer[] = []
  for (let i = 0; i < 2_000; i++) {
    const event = { id: i, name: 'n'.repeat(200 + (i % 50)), at: Date.now(), amount: i * 1.5, tags: [1, 2, 3] }
    events.push(
      Buffer.from(JSON.stringify({ ...event, nested: { text: 't'.repeat(300), id: i }, note: 'x'.repeat(300) })),
    )
  }
  let sink = 0
  for (let k = 0; k < PARSES; k++)
    sink += (JSON.parse((events[k % events.length] as Buffer).toString('utf8')) as { id: number }).id
  return sink
}

// Native code over 16 KiB that stays in the core's own caches: no JIT tier to wait for (a JS loop
// ran 0.4 s or 2.8 s by the tier V8 happened to give it), no memory traffic to share.
function hashWork(): number {
  const block = Buffer.alloc(16 * 1024, 7)
  let sink = 0
  for (let k = 0; k < HASHES; k++) sink += createHash('sha256').update(block).digest()[0] as number
  return sink
}

function runOnThread(work: Work): Promise<ThreadResult> {
  return new Promise((resolve, reject) => {
    const thread = new Worker(new URL(import.meta.url), { workerData: work })
    thread.once('message', resolve)
    thread.once('error', reject)
  })
}

/** Each thread's wall time when `threads` run `work` at once (the slowest decides a drain). */
async function wallMs(work: Work, threads: number): Promise<number> {
  const results = await Promise.all(Array.from({ length: threads }, () => runOnThread(work)))
  return Math.max(...results.map((r) => r.wallMs))
}

if (!isMainThread) {
  const started = performance.now()
  const sink = workerData === 'parse' ? parseWork() : hashWork()
  parentPort?.postMessage({ wallMs: performance.now() - started, sink } satisfies ThreadResult)
} else {
  const rounds = Number(process.argv[2] ?? 3)
  for (const work of ['parse', 'hash'] as const) {
    const alone: number[] = []
    const together: number[] = []
    // Alternated, so a noisy minute weighs on both.
    for (let round = 0; round < rounds; round++) {
      alone.push(await wallMs(work, 1))
      together.push(await wallMs(work, 2))
    }
    const slowdown = quantile(together, 0.5) / quantile(alone, 0.5)
    console.log(
      `${work}: one thread ${alone.map((ms) => ms.toFixed(0)).join(' / ')} ms, two at once ${together.map((ms) => ms.toFixed(0)).join(' / ')} ms; ` +
        `each runs ${slowdown.toFixed(2)}x slower beside the other, so two cores give ${(2 / slowdown).toFixed(2)}x one`,
    )
  }
}
