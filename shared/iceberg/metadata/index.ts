// Iceberg table metadata (format v2): the model, lossless reading and writing of metadata files,
// lookups a writer needs, the REST catalog's TableUpdate / TableRequirement objects, and what a
// catalog does with them (checkRequirements, applyUpdates), plus new-table metadata and
// metadata file naming. Files not re-exported here are internal to shared/iceberg/metadata.
export type {
  TableRequirement,
  TableRequirementType,
  TableUpdate,
  TableUpdateAction,
  UnboundPartitionSpec,
} from './changes.ts'
export { assignFreshIds, type FreshSchema, type NewTableMetadataOptions, newTableMetadata } from './create.ts'
export {
  canPromote,
  describeSchemaChange,
  planSchemaChange,
  planWidening,
  type SchemaChange,
  sameType,
  widenFields,
} from './evolve.ts'
export { dataDirectory, metadataDirectory, metadataFileLocation, metadataFileVersion } from './location.ts'
export {
  ancestorsOf,
  ancestorsOfRef,
  currentSchema,
  currentSnapshot,
  defaultSortOrder,
  defaultSpec,
  newSnapshotId,
  nextSequenceNumber,
  refSnapshotId,
  schemaById,
  snapshotById,
  specById,
} from './lookup.ts'
export {
  type BlobMetadata,
  type MetadataLogEntry,
  mainBranch,
  type PartitionStatisticsFile,
  partitionFieldIdStart,
  previousVersionsMaxDefault,
  type Snapshot,
  type SnapshotLogEntry,
  type SnapshotOperation,
  type SnapshotRef,
  type SnapshotSummary,
  type StatisticsFile,
  type TableMetadata,
  tableProperties,
} from './model.ts'
export { checkRequirements } from './requirements.ts'
export { parseTableMetadata, serializeTableMetadata, tableMetadataFromJson, tableMetadataToJson } from './serde.ts'
export { applyUpdates } from './updates.ts'
