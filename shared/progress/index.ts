// Floe's progress marker in a table: which Kafka offsets a consumer group has committed (docs/design.md
// invariants 1 and 8). Files not re-exported here are internal to shared/progress.
export * from './progress.ts'
