// Code that both the coordinator and the participant use. Each concern is a folder with its own
// index.ts (iceberg, parquet, catalog, storage, kafka, ...); this file re-exports the small
// cross-cutting pieces.
export * from './deferred.ts'
export * from './errors.ts'
export * from './round-first.ts'
