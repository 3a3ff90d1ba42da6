// What a round reads of the dataset's topic beside the table: how many partitions must answer,
// and the end offsets behind the lag gauge.
import type { ControlLogger } from '../protocol/index.ts'
import { FloeError, isFloeError, messageOf } from '../shared/index.ts'
import type { KafkaAdmin } from '../shared/kafka/index.ts'
import type { Progress } from '../shared/progress/index.ts'
import type { FloeMetrics } from '../shared/telemetry/index.ts'

/** The topic's partition count; a topic that does not exist is a configuration error. */
export async function partitionCountOf(admin: KafkaAdmin, dataset: string, topic: string): Promise<number> {
  let count: number | undefined
  try {
    count = await admin.partitionCount(topic)
  } catch (error) {
    if (isFloeError(error)) throw error
    throw new FloeError('KAFKA_UNAVAILABLE', `could not read the partitions of topic ${topic}`, { cause: error })
  }
  if (count === undefined) {
    throw new FloeError('CONFIG_INVALID', `topic ${topic} of dataset ${dataset} does not exist`, {
      details: { dataset, topic },
    })
  }
  return count
}

/**
 * Sets the lag gauge from the table's offsets and the topic's end offsets. A by-product of the
 * round's table read: it never throws, so it never holds a round up.
 */
export async function updateLag(
  deps: { admin: KafkaAdmin; metrics: FloeMetrics; logger: ControlLogger },
  dataset: string,
  topic: string,
  progress: Progress,
  partitionCount: number,
): Promise<void> {
  const offsets = progress.get(topic)
  if (!offsets || offsets.size === 0) return
  try {
    const ends = await deps.admin.endOffsets(
      topic,
      [...offsets.keys()].filter((p) => p < partitionCount),
    )
    for (const [partition, end] of ends) {
      const table = offsets.get(partition)
      if (table === undefined) continue
      const lag = end > table ? end - table : 0n
      deps.metrics.consumerLag.set({ dataset, topic, partition: String(partition) }, Number(lag))
    }
  } catch (error) {
    deps.logger.warn({ dataset, topic, error: messageOf(error) }, 'could not read end offsets for lag')
  }
}
