// Datasets are isolated (docs/design.md invariant 10), on the real stack with one real `floe run`
// worker: dataset A keeps its data files on Azurite, dataset B on local storage, both in the REST
// catalog. Azurite is frozen (SIGSTOP) for well over a commit interval: B keeps committing every
// interval and its new events land while A's storage answers nothing; after the thaw A catches up,
// and pyiceberg counts every id of A and of B exactly once after a settling time.
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { KafkaAdmin, KafkaProducer } from '../../shared/kafka/index.ts'
import { azuriteLocation } from '../catalog/probe.ts'
import { WorkerProcess } from '../e2e/fleet.ts'
import { endpoints, stackConfigYaml, uniqueName, type VerifyResult, verifyTable } from '../harness.ts'
import { freezeService, thawService } from '../stack/index.ts'

const commitIntervalSeconds = 2

interface Dataset {
  name: string
  topic: string
  table: string
  ids: string[]
}

function datasetYaml(d: Dataset, extra: string): string {
  return `  - name: ${d.name}
    topic: ${d.topic}
    table: ${d.table}
    customMapping: {id: id, n: n}
    schema: {id: string not null, n: long}
    badRecords: skip
${extra}`
}

async function produce(d: Dataset, count: number): Promise<void> {
  const producer = new KafkaProducer({ brokers: endpoints().kafka.brokers, clientId: 'isolation-producer' })
  try {
    const records = []
    for (let i = 0; i < count; i++) {
      const id = `${d.name}-${d.ids.length}`
      d.ids.push(id)
      records.push({ topic: d.topic, key: Buffer.from(id), value: Buffer.from(JSON.stringify({ id, n: i })) })
    }
    for (let i = 0; i < records.length; i += 500) await producer.send(records.slice(i, i + 500))
  } finally {
    await producer.close()
  }
}

async function verify(dir: string, d: Dataset): Promise<VerifyResult> {
  const idsFile = join(dir, `${d.name}.ids`)
  await writeFile(idsFile, `${d.ids.join('\n')}\n`)
  return verifyTable(d.table, { idsFile, idColumn: 'id' }).catch(
    (error: unknown) => ({ error: String(error) }) as VerifyResult,
  )
}

async function waitForAll(dir: string, d: Dataset, timeoutMs: number): Promise<VerifyResult> {
  const deadline = Date.now() + timeoutMs
  let last = await verify(dir, d)
  while (Date.now() < deadline && !(last.ids && last.ids.missing === 0 && !last.error)) {
    await sleep(1000)
    last = await verify(dir, d)
  }
  return last
}

/** Times (ms) of B's rounds that committed records, from the worker's log. */
function commitTimes(worker: WorkerProcess, dataset: string): number[] {
  return worker
    .lines()
    .filter((l) => l.dataset === dataset && l.msg === 'round committed')
    .map((l) => Date.parse(String(l.time)))
}

test("one dataset's storage brownout does not stall another dataset of the same worker", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'floe-isolation-'))
  const namespace = uniqueName('isolation')
  const a: Dataset = { name: 'a', topic: uniqueName('iso-a'), table: `${namespace}.a`, ids: [] }
  const b: Dataset = { name: 'b', topic: uniqueName('iso-b'), table: `${namespace}.b`, ids: [] }
  const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'isolation' })
  await admin.ensureTopic(a.topic, 2)
  await admin.ensureTopic(b.topic, 2)
  await admin.close()
  const azurite = endpoints().azurite
  const config = join(dir, 'floe.yaml')
  await writeFile(
    config,
    `${stackConfigYaml('iso')}ingestion:
  commitIntervalSeconds: ${commitIntervalSeconds}
  commitTimeoutSeconds: 3
  drainTimeoutSeconds: 10
  wal:
    dir: ${join(dir, 'wal')}
datasets:
${datasetYaml(
  a,
  `    storage:
      type: azure
      azure: {container: ${azurite.container}}
    tableProperties:
      write.data.path: ${azuriteLocation(`${namespace}/a/data`)}
      py-io-impl: pyiceberg.io.fsspec.FsspecFileIO
`,
)}${datasetYaml(b, '    storage: {type: local}\n')}log:
  level: info
`,
  )
  await mkdir(join(dir, 'wal'), { recursive: true })
  const worker = new WorkerProcess('iso', config, join(dir, 'iso.log'), {
    FLOE_DATASETS__A__STORAGE__AZURE__CONNECTION_STRING: azurite.connectionString,
  })
  t.after(async () => {
    thawService('azurite')
    worker.kill('SIGKILL')
    await worker.exited
    if (!process.env.FLOE_KEEP_E2E) await rm(dir, { recursive: true, force: true })
  })
  const deadline = Date.now() + 90_000
  while (!worker.logged('worker started')) {
    assert.ok(worker.running && Date.now() < deadline, 'the worker starts')
    await sleep(250)
  }

  await Promise.all([produce(a, 1000), produce(b, 1000)])
  for (const d of [a, b]) {
    const first = await waitForAll(dir, d, 90_000)
    assert.equal(first.ids?.missing, 0, `${d.name} before the brownout: ${JSON.stringify(first.ids ?? first.error)}`)
  }

  freezeService('azurite')
  const frozenAt = Date.now()
  await produce(a, 1000)
  // B gets new events all through A's brownout, so each of its rounds has something to commit.
  while (Date.now() < frozenAt + 40_000) {
    await produce(b, 100)
    await sleep(1000)
  }
  const stoppedProducingAt = Date.now()
  // B's events land while A's storage still answers nothing.
  const during = await waitForAll(dir, b, 30_000)
  assert.equal(during.ids?.missing, 0, `B during the brownout: ${JSON.stringify(during.ids ?? during.error)}`)
  // (pyiceberg cannot look at A now: its data files are on the frozen storage.)
  const thawedAt = Date.now()
  thawService('azurite')
  const aCommits = commitTimes(worker, 'a').filter((time) => time >= frozenAt + 10_000 && time <= thawedAt)
  assert.deepEqual(aCommits, [], 'A committed nothing while its storage was frozen')
  const bCommits = commitTimes(worker, 'b').filter((time) => time >= frozenAt && time <= stoppedProducingAt)
  // Every interval, give or take a round's own time: never a gap of more than a few intervals.
  const gaps = [frozenAt, ...bCommits, stoppedProducingAt]
    .slice(1)
    .map((time, i, all) => time - (i === 0 ? frozenAt : all[i - 1]!))
  assert.ok(
    bCommits.length >= 5,
    `B committed ${bCommits.length} rounds in ${(stoppedProducingAt - frozenAt) / 1000} s of brownout (thawed after ${(thawedAt - frozenAt) / 1000} s)`,
  )
  assert.ok(
    Math.max(...gaps) <= 5 * commitIntervalSeconds * 1000,
    `B's longest pause between commits in the brownout: ${Math.max(...gaps)} ms`,
  )

  const after = await waitForAll(dir, a, 150_000)
  assert.equal(after.ids?.missing, 0, `A after the thaw: ${JSON.stringify(after.ids ?? after.error)}`)
  // Settling: a late duplicate would show within a few commit intervals.
  await sleep(4 * commitIntervalSeconds * 1000)
  for (const d of [a, b]) {
    const result = await verify(dir, d)
    assert.deepEqual(
      { missing: result.ids?.missing, duplicated: result.ids?.duplicated, unexpected: result.ids?.unexpected },
      { missing: 0, duplicated: 0, unexpected: 0 },
      `${d.name}: ${result.error ?? ''}`,
    )
    assert.equal(result.rows, d.ids.length, `${d.name} rows`)
  }
  assert.ok(worker.running, 'the worker ran through the brownout')
})
