// The ceiling of any Floe figure: a bare Node loop that reads a topic with the same Kafka client and
// fetch path Floe's participant uses (shared/kafka's GroupReader) and `JSON.parse`s every value,
// nothing else — no mapping, no conversion, no Parquet, no upload, no commit. What a worker does per
// event beyond this is Floe's own cost, so benchmarks print their figure beside this one and the
// ratio (measureCeiling, ratioToCeiling).
//
//   node bench/ceiling.ts <topic> [runs=1]
//
// Reads the topic's whole backlog (log start to end offset, every partition) in this process, as
// one member of a fresh consumer group, and prints events/s and events per CPU-second (this
// process's user + system time: the client's work counts, the broker's does not). Timing starts
// once the group has assigned every partition. Needs the local stack's Kafka, or FLOE_BENCH_BROKERS.
import { fileURLToPath } from 'node:url'
import { readEndpoints } from '../integration/stack/index.ts'
import { GroupReader, KafkaAdmin, type KafkaConnection } from '../shared/kafka/index.ts'

export interface CeilingResult {
  topic: string
  events: number
  bytes: number
  wallSeconds: number
  cpuSeconds: number
  eventsPerSecond: number
  eventsPerCpuSecond: number
}

export interface CeilingOptions {
  topic: string
  brokers?: string[]
  /** Gives up after this long (the broker stopped answering, say); default 10 minutes. */
  timeoutMs?: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function defaultBrokers(): string[] {
  return process.env.FLOE_BENCH_BROKERS?.split(',') ?? readEndpoints().kafka.brokers
}

/** Reads the topic's backlog once, parsing every value as JSON; see the header. */
export async function measureCeiling(options: CeilingOptions): Promise<CeilingResult> {
  const connection: KafkaConnection = { brokers: options.brokers ?? defaultBrokers(), clientId: 'floe-bench-ceiling' }
  const admin = new KafkaAdmin(connection)
  const reader = new GroupReader(connection, { groupId: `floe-bench-ceiling-${Date.now()}`, topic: options.topic })
  const deadline = Date.now() + (options.timeoutMs ?? 10 * 60_000)
  try {
    await reader.join()
    const count = reader.partitionCount()
    while (reader.assigned().length < count) {
      if (Date.now() > deadline) throw new Error(`the group never assigned all ${count} partitions of ${options.topic}`)
      await sleep(20)
    }
    const all = Array.from({ length: count }, (_, p) => p)
    const ends = await admin.endOffsets(options.topic, all)
    // From offset 0: a partition whose log starts later answers out-of-range and moves to its start.
    const positions = new Map<number, bigint>()
    for (const p of all) if ((ends.get(p) ?? 0n) > 0n) positions.set(p, 0n)

    let events = 0
    let bytes = 0
    // Kept live so the parse is not optimised away.
    let sink = 0
    const cpu = process.cpuUsage()
    const started = performance.now()
    while (positions.size > 0) {
      if (Date.now() > deadline) throw new Error(`the ceiling loop did not finish reading ${options.topic} in time`)
      for (const fetched of await reader.fetch(positions)) {
        const { partition } = fetched
        if (fetched.outOfRange) {
          positions.set(partition, fetched.logStartOffset)
          continue
        }
        for (const batch of fetched.batches) {
          const skip = batch.firstOffset < fetched.from ? Number(fetched.from - batch.firstOffset) : 0
          const list = batch.records
          for (let i = 0; i < list.length; i++) {
            const record = list[i]
            if (record === undefined || record.offsetDelta < skip) continue
            events++
            const value = record.value
            if (!value) continue
            bytes += value.length
            sink += JSON.parse(value.toString('utf8')) === null ? 1 : 0
          }
        }
        if (fetched.next >= (ends.get(partition) ?? 0n)) positions.delete(partition)
        else positions.set(partition, fetched.next)
      }
    }
    const wallSeconds = (performance.now() - started) / 1000
    const used = process.cpuUsage(cpu)
    const cpuSeconds = (used.user + used.system) / 1e6
    if (sink < 0) console.log(sink)
    return {
      topic: options.topic,
      events,
      bytes,
      wallSeconds,
      cpuSeconds,
      eventsPerSecond: events / wallSeconds,
      eventsPerCpuSecond: events / cpuSeconds,
    }
  } finally {
    await reader.leave().catch(() => {})
    await admin.close().catch(() => {})
  }
}

/** One line: the ceiling's figures. */
export function ceilingLine(ceiling: CeilingResult): string {
  return (
    `ceiling (consume + JSON.parse): ${ceiling.events} events, ${Math.round(ceiling.eventsPerSecond)} events/s, ` +
    `${Math.round(ceiling.eventsPerCpuSecond)} events per CPU-second (${ceiling.cpuSeconds.toFixed(2)} CPU s over ${ceiling.wallSeconds.toFixed(2)} s)`
  )
}

/** A benchmark's events per CPU-second as a share of the ceiling's, e.g. "0.42 of the ceiling". */
export function ratioToCeiling(eventsPerCpuSecond: number, ceiling: CeilingResult): string {
  return `${Math.round(eventsPerCpuSecond)} events per CPU-second = ${(eventsPerCpuSecond / ceiling.eventsPerCpuSecond).toFixed(2)} of the ceiling's ${Math.round(ceiling.eventsPerCpuSecond)}`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const topic = process.argv[2]
  const runs = Number(process.argv[3] ?? 1)
  if (!topic) {
    console.error('usage: node bench/ceiling.ts <topic> [runs=1]')
    process.exit(2)
  }
  for (let run = 1; run <= runs; run++) console.log(`run ${run}: ${ceilingLine(await measureCeiling({ topic }))}`)
}
