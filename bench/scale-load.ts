// The scale benchmark's input: 1 KB events (participant/decode/bench-events.ts) into a topic, either
// all at once before the workers start (a backlog, as after an outage) or at a steady rate while
// they run (a live topic, where rounds and commit visibility are measured).
import { setTimeout as sleep } from 'node:timers/promises'
import { benchEvent } from '../participant/decode/bench-events.ts'
import { type KafkaConnection, KafkaProducer, type OutgoingRecord } from '../shared/kafka/index.ts'

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`

/** Fills a topic with `events` events; each send goes to one or two partitions, as a busy producer's would. */
export async function produceBacklog(
  connection: KafkaConnection,
  topic: string,
  partitions: number,
  events: number,
): Promise<void> {
  const producer = new KafkaProducer(connection, { compression: 'lz4' })
  const started = performance.now()
  let bytes = 0
  let lastLine = started
  try {
    const chunk = 2000
    for (let i = 0; i < events; i += chunk) {
      const records: OutgoingRecord[] = []
      for (let k = i; k < Math.min(events, i + chunk); k++) {
        const value = benchEvent(k)
        bytes += value.length
        // Contiguous blocks of events per partition: the same count in each, sent in large batches.
        records.push({ topic, partition: Math.floor((k * partitions) / events), value })
      }
      await producer.send(records)
      if (performance.now() - lastLine > 10_000) {
        lastLine = performance.now()
        console.log(`  produced ${i + records.length} of ${events}`)
      }
    }
  } finally {
    await producer.close()
  }
  console.log(`  produced ${events} events (${mib(bytes)}) in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

/**
 * Readies a new topic for a live measurement; returns the events it wrote (one per partition per
 * send). The broker answers a produce to partitions that took their first records a few seconds
 * earlier after a long pause (measured: 4-38 s at 1,000 partitions, about 1 s at 300, none at 6,
 * with or without idempotence); in a live run that pause would be counted as commit visibility.
 * So one event goes to every partition every half second until, past 10 s, three sends in a row
 * are answered within 200 ms.
 */
export async function warmTopic(connection: KafkaConnection, topic: string, partitions: number): Promise<number> {
  const producer = new KafkaProducer(connection, { compression: 'lz4' })
  const started = performance.now()
  let sent = 0
  let quick = 0
  let slowest = 0
  try {
    while (performance.now() - started < 10_000 || quick < 3) {
      const records: OutgoingRecord[] = []
      for (let partition = 0; partition < partitions; partition++) {
        records.push({ topic, partition, value: benchEvent(sent + partition) })
      }
      const sentAt = performance.now()
      await producer.send(records)
      const ms = performance.now() - sentAt
      sent += partitions
      slowest = Math.max(slowest, ms)
      quick = ms < 200 ? quick + 1 : 0
      await sleep(500)
    }
  } finally {
    await producer.close()
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(0)
  console.log(`  topic warmed in ${seconds} s: ${sent} events, the slowest send answered in ${slowest.toFixed(0)} ms`)
  return sent
}

/**
 * Produces `rate` events a second for `seconds`, one send a second spread evenly over every
 * partition (as keyed traffic is); says so when the producer falls behind the rate. Resolves with
 * the number of events produced, which is `rate * seconds`.
 */
export async function produceSteadily(
  connection: KafkaConnection,
  topic: string,
  partitions: number,
  rate: number,
  seconds: number,
): Promise<number> {
  const producer = new KafkaProducer(connection, { compression: 'lz4' })
  const started = performance.now()
  let behind = 0
  try {
    for (let second = 0; second < seconds; second++) {
      const records: OutgoingRecord[] = []
      for (let k = second * rate; k < (second + 1) * rate; k++) {
        records.push({ topic, partition: k % partitions, value: benchEvent(k) })
      }
      await producer.send(records)
      const wait = started + (second + 1) * 1000 - performance.now()
      if (wait > 0) await sleep(wait)
      else behind++
      if (second % 10 === 9) console.log(`  produced ${(second + 1) * rate} of ${rate * seconds} at ${rate} events/s`)
    }
  } finally {
    await producer.close()
  }
  if (behind > 0) console.log(`  the producer fell behind the rate in ${behind} of ${seconds} seconds`)
  return rate * seconds
}
