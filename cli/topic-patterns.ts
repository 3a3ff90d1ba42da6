// A dataset's `topicPattern`, followed: the topics it matches when the worker starts, and again
// every `topicRefreshSeconds`, so a topic created later is read without a restart (as Kafka
// Connect's `topics.regex` does). Never matched: Kafka's internal topics, the control topic and
// any dataset's dead-letter topic, which a broad pattern would otherwise read back into a table.
import { type DatasetConfig, type FloeConfig, topicsMatching } from '../shared/config/index.ts'
import { FloeError, messageOf } from '../shared/index.ts'
import type { KafkaAdmin } from '../shared/kafka/index.ts'
import type { Logger } from '../shared/telemetry/index.ts'
import type { DatasetRuntime } from './dataset-runtime.ts'

/** The topics no pattern matches: the control topic and every dataset's dead-letter topic. */
export function excludedTopics(config: FloeConfig): Set<string> {
  const dlq = config.datasets.flatMap((dataset) => (dataset.dlqTopic ? [dataset.dlqTopic] : []))
  return new Set([config.kafka.controlTopic, ...dlq])
}

/** The topics the dataset reads now: its list, or what its pattern matches (maybe none). */
export async function matchedTopics(config: FloeConfig, dataset: DatasetConfig, admin: KafkaAdmin): Promise<string[]> {
  if (!dataset.topicPattern) return [...dataset.topics]
  return topicsMatching(dataset, await admin.topicNames(), excludedTopics(config))
}

/** The dataset with the topics it reads now: its pattern must match at least one at start. */
export async function withMatchedTopics(
  config: FloeConfig,
  dataset: DatasetConfig,
  admin: KafkaAdmin,
): Promise<DatasetConfig> {
  if (!dataset.topicPattern) return dataset
  const topics = await matchedTopics(config, dataset, admin)
  if (topics.length === 0) {
    throw new FloeError(
      'CONFIG_INVALID',
      `datasets.${dataset.name}.topicPattern: ${dataset.topicPattern.source} matches no topic: create one first`,
    )
  }
  return { ...dataset, topics }
}

/** Looks for each pattern's topics every topicRefreshSeconds; returns the timers to clear. */
export function followTopicPatterns(
  config: FloeConfig,
  runtimes: readonly DatasetRuntime[],
  admin: KafkaAdmin,
  logger: Logger,
): NodeJS.Timeout[] {
  const excluded = excludedTopics(config)
  const timers: NodeJS.Timeout[] = []
  for (const dataset of config.datasets) {
    const runtime = runtimes.find((r) => r.name === dataset.name)
    if (!dataset.topicPattern || !runtime) continue
    let looking = false
    const look = async () => {
      if (looking) return
      looking = true
      try {
        runtime.followTopics(topicsMatching(dataset, await admin.topicNames(), excluded))
      } catch (error) {
        logger.warn({ dataset: dataset.name, err: messageOf(error) }, 'could not list the topics for topicPattern')
      } finally {
        looking = false
      }
    }
    timers.push(setInterval(() => void look(), dataset.topicRefreshSeconds * 1000))
  }
  return timers
}
