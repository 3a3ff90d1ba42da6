// Floe's seam to Kafka. Everything Floe asks of a Kafka client goes through these classes, so the
// client library (docs/decisions.md) can change without touching the coordinator or participant.
export { type GroupAssignment, KafkaAdmin, type PartitionOffsets } from './admin.ts'
export type { KafkaConnection, KafkaSasl, KafkaTls } from './connection.ts'
export { type KafkaConnectionFailure, kafkaConnectionFailureOf } from './connection-failure.ts'
export { type ConsumerSettings, type IncomingRecord, KafkaConsumer } from './consumer.ts'
export {
  type FetchedPartition,
  GroupReader,
  type GroupReaderEvents,
  type GroupReaderSettings,
  type RecordsBatch,
  type TopicReader,
} from './group-reader.ts'
export { classifyProduceError, KafkaProducer, type OutgoingRecord, type ProducerSettings } from './producer.ts'
