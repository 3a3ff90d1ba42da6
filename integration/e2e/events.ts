// Malformed events for the end-to-end and fault tests, and reading them back from the dataset's
// dead-letter topic. A malformed event is cut-off JSON that still names its id at the start, so
// the payload that arrives in the DLQ (as it was produced) says which event it was.
import { KafkaConsumer } from '../../shared/kafka/index.ts'
import { endpoints, uniqueName } from '../harness.ts'

export function malformedEvent(id: string): Buffer {
  return Buffer.from(`{"id": "${id}", "kind": "click", "amount": `)
}

const idOf = /^\{"id": "([^"]+)"/

/**
 * Reads `topic` from its start and returns the ids of `wanted` found there, once all are found or
 * `timeoutMs` passed.
 */
export async function badEventsIn(topic: string, wanted: ReadonlySet<string>, timeoutMs: number): Promise<Set<string>> {
  const found = new Set<string>()
  if (wanted.size === 0) return found
  const consumer = new KafkaConsumer(
    { brokers: endpoints().kafka.brokers, clientId: 'e2e-dlq-reader' },
    { groupId: uniqueName('e2e-dlq-reader'), topics: [topic], startFrom: 'earliest', sessionTimeoutMs: 10_000 },
  )
  const timer = setTimeout(() => void consumer.close().catch(() => {}), timeoutMs)
  try {
    for await (const record of consumer.records()) {
      const id = record.value?.toString('utf8').match(idOf)?.[1]
      if (id !== undefined && wanted.has(id)) found.add(id)
      if (found.size === wanted.size) break
    }
  } catch {
    // Closed by the timer: report what was found.
  } finally {
    clearTimeout(timer)
    await consumer.close().catch(() => {})
  }
  return found
}
