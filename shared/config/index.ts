// The operator's configuration: floe.yaml plus FLOE_* environment overrides, validated into
// typed settings. Files not re-exported here are internal to shared/config.
export { type CatalogSettings, catalogLabel, type PostgresSettings } from './catalog.ts'
export { type ColumnType, parseColumnType } from './column-types.ts'
export type { BadRecordsChoice, DatasetConfig, TopicDataset } from './datasets.ts'
export { topicDatasets, topicsMatching } from './datasets.ts'
export type { KafkaConfig, KafkaSaslSettings, KafkaTlsSettings } from './kafka-security.ts'
export { type HeadersShape, headersShape, type KafkaSource, parseKafkaSource } from './kafka-sources.ts'
export { applyEnvironment, type FloeConfig, loadConfig, parseConfig, redact } from './load.ts'
export {
  type DatasetRoute,
  type RouteDefinition,
  routeCanName,
  routeDefinitionOf,
  routedTable,
  routeFingerprint,
  routeIdentity,
  routeNamespaces,
  routeOfDefinition,
  routeValueName,
} from './routes.ts'
export type { StorageConfig } from './schema.ts'
