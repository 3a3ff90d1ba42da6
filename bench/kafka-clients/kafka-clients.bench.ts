// Which Kafka client should Floe use? kafkajs, @confluentinc/kafka-javascript and @platformatic/kafka,
// measured side by side against the real broker of the local stack:
//
//   node bench/kafka-clients/kafka-clients.bench.ts [--runs 5] [--only produce,consume,rebalance,capabilities]
//   node bench/kafka-clients/kafka-clients.bench.ts --report [results.json]   (re-render only)
//
// Its dependencies are this folder's own (package.json here; see RESULTS.md for the install).
//
// Clients take turns (a, b, c, a, b, c, ...) because the machine is shared and noisy; each
// measurement runs in a child process of its own. Medians and ratios vs @platformatic/kafka go to
// stdout as markdown and, in full, to results.json beside this file. Topics and groups are named
// bench-kc-* and deleted at the end.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { BenchAdmin } from './admin.ts'
import type { CapabilitiesReport } from './capabilities.ts'
import { type ClientName, clientOrder, here, partitionCount, type ThroughputResult, topicPrefix } from './common.ts'
import type { RebalanceReport, RebalanceTask } from './rebalance.ts'
import { bigintAsString, renderAll, type SavedResults, summarize, type ThroughputRow } from './report.ts'
import { runTaskInChild, runTaskInThisProcess, type Task } from './tasks.ts'

// Re-renders the tables of a saved results.json (after a change to report.ts, say) without measuring.
if (process.argv[2] === '--report') {
  const saved = JSON.parse(readFileSync(process.argv[3] ?? join(here, 'results.json'), 'utf8')) as SavedResults
  console.log(renderAll(saved))
  process.exit(0)
}

if (process.argv[2] === '--task') {
  await runTaskInThisProcess(JSON.parse(process.argv[3] ?? '{}') as Task)
  // Client libraries keep timers and sockets alive after close(); the result is already written.
  process.exit(0)
}

const { values: options } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    only: { type: 'string', default: 'produce,consume,rebalance,capabilities' },
    'consume-messages': { type: 'string', default: '200000' },
    'produce-messages': { type: 'string', default: '100000' },
    'rebalance-runs': { type: 'string', default: '3' },
  },
})
const runs = Number(options.runs)
const only = new Set(options.only.split(','))
const consumeMessages = Number(options['consume-messages'])
const produceMessages = Number(options['produce-messages'])
const stamp = new Date()
  .toISOString()
  .replace(/[-:.TZ]/g, '')
  .slice(0, 14)

const produceVariants: [ClientName, string][] = [
  ['platformatic', 'send-seq'],
  ['confluent', 'send-seq'],
  ['kafkajs', 'send-seq'],
  ['platformatic', 'send-4-inflight'],
  ['confluent', 'send-4-inflight'],
  ['kafkajs', 'send-4-inflight'],
  ['confluent', 'rdkafka-produce'],
]
const consumeVariants: [ClientName, string][] = [
  ['platformatic', 'stream'],
  ['confluent', 'eachBatch'],
  ['kafkajs', 'eachBatch'],
  ['platformatic', 'fetch'],
  ['confluent', 'eachBatch-unbounded'],
  ['confluent', 'rdkafka-consume'],
  ['platformatic', 'stream-default-options'],
]

const admin = new BenchAdmin()
const results: SavedResults = { date: new Date().toISOString(), node: process.version, runs }

async function freshTopic(name: string): Promise<string> {
  const topic = `${topicPrefix}${stamp}-${name}`
  await admin.createTopic(topic)
  return topic
}

async function measure(
  variants: [ClientName, string][],
  makeTask: (client: ClientName, variant: string, run: number) => Promise<Task>,
  after: (task: Task) => Promise<void>,
): Promise<Map<string, ThroughputResult[]>> {
  const samples = new Map<string, ThroughputResult[]>()
  for (let run = 1; run <= runs; run++) {
    for (const [client, variant] of variants) {
      const task = await makeTask(client, variant, run)
      const key = `${client}/${variant}`
      try {
        const result = await runTaskInChild<ThroughputResult>(task, 300_000)
        samples.set(key, [...(samples.get(key) ?? []), result])
        const rate = Math.round(result.messages / ((result.steadyMs ?? result.totalMs) / 1000))
        console.error(`run ${run} ${key}: ${rate} msg/s`)
      } catch (error) {
        console.error(`run ${run} ${key} failed:`, error)
        samples.set(key, samples.get(key) ?? [])
      }
      await after(task)
    }
  }
  return samples
}

let produceRows: ThroughputRow[] = []
if (only.has('produce') || only.has('consume')) {
  const samples = await measure(
    produceVariants,
    async (client, variant, run) => ({
      kind: 'produce',
      client,
      variant,
      topic: await freshTopic(`produce-${client}-${variant}-${run}`),
      messages: produceMessages,
      batchSize: 1000,
    }),
    // 100 MB per run: give the disk back at once.
    async (task) => {
      if (task.kind === 'produce') await admin.deleteTopics([task.topic])
    },
  )
  produceRows = summarize(samples, 'platformatic/send-seq')
  results['produce'] = { messages: produceMessages, batchSize: 1000, rows: produceRows }
}

if (only.has('consume')) {
  const fastest = [...produceRows].sort((a, b) => b.medianRate - a.medianRate)[0]
  const [fillClient, fillVariant] = (fastest?.key ?? 'platformatic/send-seq').split('/') as [ClientName, string]
  const topic = await freshTopic('consume')
  const fill = await runTaskInChild<ThroughputResult>(
    { kind: 'produce', client: fillClient, variant: fillVariant, topic, messages: consumeMessages, batchSize: 1000 },
    300_000,
  )
  const ends = await admin.endOffsets(topic)
  const stored = ends.reduce((sum, end) => sum + end, 0n)
  console.error(`filled ${topic} with ${stored} messages via ${fillClient}/${fillVariant} in ${fill.totalMs} ms`)
  const samples = await measure(
    consumeVariants,
    async (client, variant, run) => ({
      kind: 'consume',
      client,
      variant,
      topic,
      groupId: `${topicPrefix}${stamp}-${client}-${variant}-${run}`,
      expected: Number(stored),
    }),
    async () => {},
  )
  const rows = summarize(samples, 'platformatic/stream')
  results['consume'] = { messages: Number(stored), filledWith: `${fillClient}/${fillVariant}`, partitionCount, rows }
}

if (only.has('rebalance')) {
  const variants: [ClientName, RebalanceTask['protocol']][] = [
    ['platformatic', 'eager'],
    ['confluent', 'eager'],
    ['kafkajs', 'eager'],
    ['platformatic', 'cooperative'],
    ['confluent', 'cooperative'],
    ['platformatic', 'consumer'],
    ['confluent', 'consumer'],
  ]
  const reports: RebalanceReport[] = []
  const rebalanceRuns = Number(options['rebalance-runs'])
  // Timing runs with instant callbacks first, then one run whose revoke callback takes 2 s.
  const plan: [number, number][] = [...Array.from({ length: rebalanceRuns }, (_, i) => [i + 1, 0] as [number, number])]
  plan.push([rebalanceRuns + 1, 2000])
  for (const [run, revokeDelayMs] of plan) {
    for (const [client, protocol] of variants) {
      const topic = await freshTopic(`rebalance-${client}-${protocol}-${run}`)
      const task: RebalanceTask = {
        kind: 'rebalance',
        client,
        protocol,
        topic,
        groupId: `${topic}-group`,
        revokeDelayMs,
        run,
      }
      try {
        const report = await runTaskInChild<RebalanceReport>(task, 240_000)
        reports.push(report)
        const settled = report.phases.map((phase) => phase.settledMs).join(' / ')
        console.error(`rebalance ${client}/${protocol} run ${run} (revoke ${revokeDelayMs} ms): settled ${settled} ms`)
      } catch (error) {
        console.error(`rebalance ${client}/${protocol} run ${run} failed:`, error)
        reports.push({ client, protocol, run, revokeDelayMs, failed: String(error), phases: [] } as RebalanceReport)
      }
      await admin.deleteTopics([topic])
    }
  }
  results['rebalance'] = reports
}

if (only.has('capabilities')) {
  const reports: CapabilitiesReport[] = []
  for (const client of clientOrder) {
    const topic = await freshTopic(`caps-${client}`)
    try {
      reports.push(await runTaskInChild<CapabilitiesReport>({ kind: 'capabilities', client, topic }, 240_000))
    } catch (error) {
      console.error(`capabilities ${client} failed:`, error)
    }
  }
  results['capabilities'] = reports
  results['broker'] = await admin.brokerConfigs([
    'group.coordinator.rebalance.protocols',
    'group.consumer.heartbeat.interval.ms',
    'group.consumer.assignors',
  ])
}

writeFileSync(join(here, 'results.json'), `${JSON.stringify(results, bigintAsString, 2)}\n`)
console.log(renderAll(results))
await admin.deleteTopics(await admin.leftoverTopics())
await admin.deleteGroups(topicPrefix)
await admin.close()
