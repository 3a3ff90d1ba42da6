// Public surface of Floe's Iceberg layer (format v2): the schema model, value conversion,
// partition transforms, metadata, manifests and the snapshot commit. Files not re-exported here
// are internal to shared/iceberg.
export * from './types.ts'
