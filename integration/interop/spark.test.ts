// Floe's tables are readable, and writable, by Spark. Two real `floe run` workers ingest events of
// every column type Spark reads (all-types.ts) into a table partitioned by identity(kind) and
// day(ts), and `floe maintain` compacts the first half of them into fewer files; then one Spark
// session (Spark 3.5 with Iceberg's Spark runtime, spark_check.py) on the stack's REST catalog reads
// every row back, rewritten or not, and compares every column with what was produced,
// shows that a filter on either partition column plans fewer files than the table has, and
// appends rows of its own with INSERT INTO between two of Floe's rounds while Floe keeps
// ingesting. Afterwards pyiceberg finds every Floe id and every Spark row exactly once, Floe
// committed on both sides of Spark's snapshot, and Floe's progress marker counts exactly what
// was produced to Kafka: nothing was re-ingested.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { describe, type TestContext, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { floeCommand } from '../cli/support.ts'
import { assertEveryIdOnce, Fleet } from '../e2e/fleet.ts'
import { endpoints } from '../harness.ts'
import { stackDir } from '../stack/index.ts'
import { interopReady, sparkJars } from '../stack/interop.ts'
import { allTypesDataset, allTypesEvent, allTypesExpected, dayOf, expectedLines, kinds } from './all-types.ts'

const minute = 60_000
const floeEvents = 600
const sparkRows = 60

type Step = Record<string, unknown> & { step: string }

/** spark_check.py as a child: its JSON lines one step at a time, `go` on stdin, killed at the end. */
class SparkCheck {
  readonly #steps: Step[] = []
  readonly #stderr: string[] = []
  readonly #child
  readonly exited: Promise<number | null>

  constructor(t: Pick<TestContext, 'after'>, args: string[]) {
    this.#child = spawn(endpoints().python, [join(import.meta.dirname, 'spark_check.py'), ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, SPARK_LOCAL_IP: '127.0.0.1', PYSPARK_PYTHON: endpoints().python },
    })
    createInterface({ input: this.#child.stdout }).on('line', (line) => {
      if (line.startsWith('{')) this.#steps.push(JSON.parse(line) as Step)
    })
    createInterface({ input: this.#child.stderr }).on('line', (line) => {
      this.#stderr.push(line)
      if (this.#stderr.length > 60) this.#stderr.shift()
    })
    this.exited = new Promise((resolve) => this.#child.on('exit', (code) => resolve(code)))
    t.after(async () => {
      if (this.#child.exitCode === null && this.#child.signalCode === null) this.#child.kill('SIGKILL')
      await this.exited
    })
  }

  /** The step's line, once printed; fails with the tail of Spark's log when the script ends first. */
  async step(name: string, timeoutMs = 5 * minute): Promise<Step> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = this.#steps.find((s) => s.step === name)
      if (found) return found
      const ended = this.#child.exitCode !== null || this.#child.signalCode !== null
      if (ended || Date.now() > deadline) {
        const why = ended ? `spark_check.py exited (${this.#child.exitCode ?? this.#child.signalCode})` : 'timed out'
        throw new Error(`${why} before its '${name}' step; its log ends:\n${this.#stderr.join('\n')}`)
      }
      await sleep(200)
    }
  }

  go(): void {
    this.#child.stdin.end('go\n')
  }
}

/** Produces a few events every half second until stopped: Floe has work in every round meanwhile. */
function keepProducing(fleet: Fleet): { stop: () => Promise<void> } {
  let running = true
  const loop = (async () => {
    while (running) {
      await fleet.produce(30, { event: allTypesEvent })
      await sleep(500)
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
    },
  }
}

describe('Spark on a table Floe writes', { concurrency: false }, () => {
  test('reads every value back, prunes by partition, and appends while Floe ingests, every row once', async (t) => {
    assert.ok(interopReady(stackDir()), 'Spark is not installed: run npm run stack -- setup --interop')
    // compaction rewrites the first half of the events: Spark then reads rewritten files and Floe's own
    const extraConfig = 'maintenance:\n  minInputFiles: 2\n'
    const fleet = await Fleet.create(t, {
      partitions: 3,
      commitIntervalSeconds: 2,
      dataset: allTypesDataset,
      extraConfig,
    })
    const workers = [await fleet.start(), await fleet.start()]
    const started = () => workers.every((w) => w.logged('worker started'))
    await fleet.waitFor(() => started() || workers.some((w) => !w.running), 3 * minute, 'both workers to start')
    assert.ok(started(), `a worker exited at start: ${workers.map((w) => w.lines().at(-1)?.msg).join('; ')}`)
    const produced: string[] = []
    for (let round = 0; round < 3; round++) {
      produced.push(...(await fleet.produce(floeEvents / 6, { event: allTypesEvent })))
      await fleet.waitUntilAllSeen(3 * minute)
    }
    const small = await fleet.waitUntilAllSeen(3 * minute)
    const compacted = await floeCommand(['maintain', '--config', fleet.config])
    assert.equal(compacted.code, 0, compacted.stderr)
    t.diagnostic(compacted.stdout.trim())
    const rewritten = await fleet.waitUntilAllSeen(3 * minute)
    assert.ok(rewritten.dataFiles < small.dataFiles, `compaction: ${small.dataFiles} -> ${rewritten.dataFiles} files`)
    produced.push(...(await fleet.produce(floeEvents / 2, { event: allTypesEvent })))
    const caughtUp = await fleet.waitUntilAllSeen(3 * minute)
    assert.equal(caughtUp.ids?.missing, 0, 'Floe ingested the first events')

    const expected = join(fleet.dir, 'expected.jsonl')
    await writeFile(expected, expectedLines(produced, allTypesExpected))
    const prefix = `${fleet.topic}-spark-`
    const spark = new SparkCheck(t, [
      '--uri',
      endpoints().rest.uri,
      '--warehouse',
      endpoints().rest.warehouse,
      '--jars',
      sparkJars(stackDir()).join(','),
      '--expected',
      expected,
      '--prefix',
      prefix,
      '--spark-rows',
      String(sparkRows),
      '--filter-kind',
      kinds[2],
      '--filter-day',
      dayOf(2),
      fleet.table,
    ])

    const read = await spark.step('read')
    t.diagnostic(`Spark's schema: ${String(read.schema)}`)
    const { matched, missing, unexpected, duplicated, mismatched } = read
    assert.deepEqual(
      { matched, missing, unexpected, duplicated, mismatched },
      { matched: floeEvents, missing: 0, unexpected: 0, duplicated: 0, mismatched: 0 },
      `Spark's rows differ from what was produced: ${JSON.stringify(read.mismatchSample)} (schema ${String(read.schema)})`,
    )

    // Each round writes a file per (kind, day) partition it has rows for; kind and day move
    // together (i % 3), so each filter keeps about a third of the files and exactly a third of the rows.
    const pruning = (await spark.step('pruning')) as Step &
      Record<'all' | 'kind' | 'day', { rows: number; files: number }>
    t.diagnostic(`planned files: ${JSON.stringify({ ...pruning, step: undefined })}`)
    assert.equal(pruning.all.rows, floeEvents)
    assert.equal(pruning.all.files, pruning.dataFiles, 'an unfiltered scan plans every data file')
    assert.equal(pruning.kind.rows, floeEvents / 3)
    assert.equal(pruning.day.rows, floeEvents / 3)
    assert.ok(pruning.kind.files < pruning.all.files, `kind = '${kinds[2]}' pruned files: ${JSON.stringify(pruning)}`)
    assert.ok(pruning.day.files < pruning.all.files, `ts >= ${dayOf(2)} pruned files: ${JSON.stringify(pruning)}`)

    // Spark appends between two of Floe's rounds, with Floe ingesting throughout.
    await spark.step('ready')
    const producer = keepProducing(fleet)
    try {
      await fleet.nextCommit(2 * minute)
      spark.go()
      const appended = await spark.step('appended')
      await fleet.nextCommit(2 * minute)
      const sparkSnapshots = appended.snapshots as string[]
      assert.equal(sparkSnapshots.length, 1, 'one INSERT, one Spark snapshot')
    } finally {
      await producer.stop()
    }
    assert.equal(await spark.exited, 0)

    // The next round commits new events and re-ingests nothing.
    await fleet.produce(300, { event: allTypesEvent })
    fleet.ids.push(...Array.from({ length: sparkRows }, (_, i) => `${prefix}${i}`))
    const report = await fleet.waitSettled(3 * minute)
    assertEveryIdOnce(fleet, report)

    const floeCommitted = report.snapshots.map((s) => s.summary['floe.commit-id'] !== undefined)
    const sparkAt = report.snapshots.findIndex((s) => s.summary['spark.app.id'] !== undefined)
    assert.ok(sparkAt > 0, 'Spark committed after Floe')
    assert.ok(floeCommitted.slice(0, sparkAt).some(Boolean), 'a Floe snapshot before Spark')
    assert.ok(floeCommitted.slice(sparkAt + 1).some(Boolean), 'a Floe snapshot after Spark')

    // The progress marker (a table property, and the summary of Floe's latest snapshot) counts
    // every event produced to Kafka once.
    const markers = Object.entries(report.properties).filter(([key]) => key.startsWith('floe.offsets.'))
    assert.equal(markers.length, 1)
    const [key, marker] = markers[0] ?? []
    const offsets = JSON.parse(marker ?? '{}') as Record<string, Record<string, number>>
    const committed = Object.values(offsets[fleet.topic] ?? {}).reduce((sum, offset) => sum + offset, 0)
    assert.equal(committed, fleet.ids.length - sparkRows)
    const lastFloe = report.snapshots.findLast((s) => s.summary['floe.commit-id'] !== undefined)
    assert.equal(lastFloe?.summary[key ?? ''], marker)
  })
})
