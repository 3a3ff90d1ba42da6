// Public surface of Iceberg manifests and manifest lists (format v2, Avro): write and read both,
// and merge small manifests on append as Iceberg's MergingSnapshotProducer does. Files not
// re-exported here (the Avro container, the Avro schemas, partition codecs) are internal.
export type { AvroCodec } from './avro-container.ts'
export {
  inheritFromManifest,
  type ManifestRead,
  type ManifestToWrite,
  manifestFileOf,
  readManifest,
  writeManifest,
} from './manifest.ts'
export {
  type ManifestListRead,
  type ManifestListToWrite,
  readManifestList,
  writeManifestList,
} from './manifest-list.ts'
export {
  defaultManifestMergePolicy,
  type ManifestMergePlan,
  type ManifestMergePolicy,
  type ManifestMergeStep,
  type ManifestToMerge,
  manifestMergePolicy,
  mergeManifests,
  planManifestMerge,
} from './merge.ts'
export {
  type ContentFile,
  DataFileContent,
  type ManifestContent,
  type ManifestEntry,
  ManifestEntryStatus,
  type ManifestEntryToWrite,
  type ManifestFile,
  type ManifestSummary,
  type PartitionFieldSummary,
  type SerializeBound,
  type WrittenManifest,
} from './model.ts'
export { partitionResultType } from './partition-fields.ts'
