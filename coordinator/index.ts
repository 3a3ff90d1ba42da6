// The coordinator: drives one dataset's commit rounds and makes the Iceberg commit.
// Imports protocol/ and shared/, never participant/. Pure bookkeeping (progress marker, round
// tracker, contiguity check and its rotation walk for shared segments, commit and ACK content, the round's report), the committing actor's
// work on top of shared/iceberg/commit, the round machine, and
// the DatasetCoordinator that runs the machine on the real table, topic and control channel, and
// the table maintenance it runs between rounds; a routed ledger's route record and the switch to
// another route (route-record.ts, route-switch.ts).
// Internal: the DatasetCoordinator's parts (write-status-reader.ts, round-report.ts, round-log.ts,
// round-waiters.ts, topic-reads.ts, table-gauges.ts, maintenance-schedule.ts, maintenance-runner.ts,
// unheld-partitions.ts), each-bounded.ts,
// test-fixtures.ts and read_table.py (the tests' builders and pyiceberg reader).
export {
  type CommitPlan,
  type CommittedPartition,
  planCommit,
  type RoundAck,
  type RoundToCommit,
  roundAck,
} from './commit-content.ts'
export {
  type CommitRoundRequest,
  type CommitRoundResult,
  type CommitTarget,
  commitRound,
  commitRoundLogic,
} from './commit-round.ts'
export {
  type AcceptedPartition,
  type AcceptedRotation,
  acceptedFiles,
  advancesTable,
  type ContiguityCheck,
  checkContiguity,
  type LostRecords,
  type RejectedPartition,
  type RejectedRotation,
  type RejectionReason,
} from './contiguity.ts'
export { coordinatorMachine } from './coordinator.machine.ts'
export { DatasetCoordinator, type DatasetCoordinatorOptions } from './dataset-coordinator.ts'
export {
  type AckRoundInput,
  type AckRoundOutput,
  type CommitRetry,
  type CommitRoundActorInput,
  type CommitRoundActorOutput,
  type CoordinatorContext,
  type CoordinatorEmitted,
  type CoordinatorEvent,
  type CoordinatorInput,
  type EndRoundInput,
  type EndRoundOutput,
  type FailureSummary,
  failureSummary,
  type Phase,
  type PhaseDurations,
  type RoundOutcome,
  type RoundTiming,
  type StartRoundInput,
  type StartRoundOutput,
} from './machine-types.ts'
export type { CoordinatorMaintenance } from './maintenance-runner.ts'
export { lastRunProperty } from './maintenance-schedule.ts'
export {
  type CommittedOffset,
  decodeProgress,
  encodeProgress,
  type FoundProgress,
  findProgress,
  floeSummaryKeys,
  lostRecordsKey,
  mergeProgress,
  offsetsKey,
  type ProgressSource,
  progressForRound,
  type RoundProgress,
  readProgress,
  tableOffset,
} from './progress.ts'
export { checkRound, type RotationReport } from './rotation-check.ts'
export {
  answeredPartitions,
  answeredReports,
  answeredStatuses,
  decideRound,
  type ExpectedPartitions,
  hasDataToCommit,
  type IgnoredReason,
  type IgnoredStatus,
  isRoundComplete,
  missingPartitions,
  openRound,
  type Recorded,
  type RecordedStatus,
  type RoundDecision,
  type RoundTracker,
  recordWriteStatus,
} from './round-tracker.ts'
export type { RoundResult } from './round-waiters.ts'
export {
  type EarlierRoute,
  type RouteFloors,
  type RouteGate,
  type RouteGeneration,
  type RouteRecord,
  readRouteRecord,
  routeGate,
} from './route-record.ts'
export {
  askRouteGate,
  type RouteSwitchResult,
  type RouteSwitchTarget,
  switchRoute,
  tablesRouteCanName,
} from './route-switch.ts'
export {
  commitRoutedRound,
  type RoutedCommitRequest,
  type RoutedCommitResult,
  type RoutedCommitTarget,
  type RoutedLedgerCommit,
  type RoutedTableCommit,
  routedRoundAck,
} from './routed-commit.ts'
export { UnheldPartitionGuard, UnheldPartitionGuards, unheldIn } from './unheld-partitions.ts'
