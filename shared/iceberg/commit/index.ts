// Committing to an Iceberg table: one atomic append per call, with the re-check, conflict and
// unknown-outcome handling of docs/design.md's invariants, and one atomic replace (compaction).
// Files not re-exported here are internal.
export {
  type AppendContent,
  type AppendRequest,
  type AppendResult,
  appendFiles,
  findCommittedSnapshot,
} from './append.ts'
export { type ReplaceGroup, type ReplaceRequest, type ReplaceResult, replaceFiles } from './replace.ts'
export { backoffMs, type RetryPolicy, retryPolicy } from './retry.ts'
export { appendSummary, partitionKey, replaceSummary } from './summary.ts'
