// Floe's Prometheus metrics, on a registry of their own (no global state: tests and several
// workers in one process do not collide). Names follow Prometheus conventions: _total for
// counters, base units (seconds, bytes).
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

/**
 * Buckets of the visibility histogram: fixed ones, plus the commit interval and a few seconds past
 * it, so "visible within the interval + 2 s" can be read off the histogram whatever the interval.
 */
export function visibilityBuckets(commitIntervalSeconds?: number): number[] {
  const fixed = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600]
  if (commitIntervalSeconds === undefined) return fixed
  const near = [0, 1, 2, 5].map((extra) => commitIntervalSeconds + extra)
  return [...new Set([...fixed, ...near, 2 * commitIntervalSeconds])].sort((a, b) => a - b)
}

export function createMetrics(options: { defaultMetrics?: boolean; commitIntervalSeconds?: number } = {}) {
  const registry = new Registry()
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'floe_process_' })
  const registers = [registry]
  const metrics = {
    registry,
    // the record path
    recordsReceived: new Counter({
      name: 'floe_records_received_total',
      help: 'Records read from Kafka',
      labelNames: ['dataset'],
      registers,
    }),
    recordsWritten: new Counter({
      name: 'floe_records_written_total',
      help: 'Records appended to WAL segments',
      labelNames: ['dataset'],
      registers,
    }),
    recordsDeadLettered: new Counter({
      name: 'floe_records_dead_lettered_total',
      help: 'Records sent to the dead-letter topic, by reason',
      labelNames: ['dataset', 'reason'],
      registers,
    }),
    recordsDropped: new Counter({
      name: 'floe_records_dropped_total',
      help: 'Bad records kept nowhere, by reason: skipped (badRecords: skip), or refused by the dead-letter topic for good',
      labelNames: ['dataset', 'reason'],
      registers,
    }),
    recordsSkipped: new Counter({
      name: 'floe_records_skipped_total',
      help: 'Records a participant jumped over without reading them, by reason (retention: deleted before any commit)',
      labelNames: ['dataset', 'reason'],
      registers,
    }),
    deadLetterCut: new Counter({
      name: 'floe_dead_letter_cut_total',
      help: 'Dead-letter records sent with their payload cut because the topic refused them whole',
      labelNames: ['dataset'],
      registers,
    }),
    deadLetterRefused: new Counter({
      name: 'floe_dead_letter_refused_total',
      help: 'Bad records the dead-letter topic refused for good (too large even cut, topic missing, not authorized)',
      labelNames: ['dataset', 'error'],
      registers,
    }),
    deadLetterSends: new Counter({
      name: 'floe_dead_letter_sends_total',
      help: 'Produce requests to the dead-letter topic, by outcome (ok, retry, refused)',
      labelNames: ['dataset', 'outcome'],
      registers,
    }),
    deadLetterPaused: new Gauge({
      name: 'floe_dead_letter_paused',
      help: '1 while a dataset waits for an unavailable dead-letter topic (its record loop holds, nothing more is fetched)',
      labelNames: ['dataset'],
      // a worker of members on threads is paused while one is
      aggregator: 'max',
      registers,
    }),
    walBytes: new Gauge({
      name: 'floe_wal_bytes',
      help: 'Bytes in the WAL, by segment state: ready files on disk, or the memory open segments hold',
      labelNames: ['dataset', 'state'],
      registers,
    }),
    memoryReliefs: new Counter({
      name: 'floe_memory_reliefs_total',
      help: 'Open segments flushed as a row group or rotated to stay under maxOpenSegmentMemoryBytes, by action',
      labelNames: ['dataset', 'action'],
      registers,
    }),
    walFiles: new Gauge({
      name: 'floe_wal_files',
      help: 'Files in the WAL, by segment state',
      labelNames: ['dataset', 'state'],
      registers,
    }),
    uploadsPending: new Gauge({
      name: 'floe_uploads_pending',
      help: 'Ready segments waiting for or in upload',
      labelNames: ['dataset'],
      registers,
    }),
    uploadPendingBytes: new Gauge({
      name: 'floe_upload_pending_bytes',
      help: 'Bytes waiting for or in upload',
      labelNames: ['dataset'],
      registers,
    }),
    uploads: new Counter({
      name: 'floe_uploads_total',
      help: 'Segment uploads by outcome',
      labelNames: ['dataset', 'outcome'],
      registers,
    }),
    rotations: new Counter({
      name: 'floe_rotations_total',
      help: 'Segment rotations by reason',
      labelNames: ['dataset', 'reason'],
      registers,
    }),
    tableEvictions: new Counter({
      name: 'floe_table_evictions_total',
      help: "Tables whose open segments a routed worker closed early, least recently used first, to keep within the route's maxOpenTables",
      labelNames: ['dataset'],
      registers,
    }),
    schemaChanges: new Counter({
      name: 'floe_schema_changes_total',
      help: 'Schema changes this worker committed for fields records brought (a dataset that infers its columns)',
      labelNames: ['dataset'],
      registers,
    }),
    paused: new Gauge({
      name: 'floe_paused',
      help: '1 while consuming is paused, by reason',
      labelNames: ['reason'],
      // a worker of members on threads is paused while one is
      aggregator: 'max',
      registers,
    }),
    phaseSeconds: new Counter({
      name: 'floe_phase_seconds_total',
      help: 'Wall-clock seconds of the record loop, by phase',
      labelNames: ['phase'],
      registers,
    }),
    consumerLag: new Gauge({
      name: 'floe_consumer_lag',
      help: 'Topic end offset minus the table offset, per partition of each topic',
      labelNames: ['dataset', 'topic', 'partition'],
      // a partition's participant and its dataset's coordinator may be different members
      aggregator: 'max',
      registers,
    }),
    workerReady: new Gauge({
      name: 'floe_worker_ready',
      help: '1 while the worker is ready as /readyz says (consuming, or deliberately idle), else 0',
      // a worker of members on threads is ready when every one is
      aggregator: 'min',
      registers,
    }),
    // commit rounds
    coordinatorActive: new Gauge({
      name: 'floe_coordinator_active',
      help: '1 while this worker coordinates the dataset',
      labelNames: ['dataset'],
      registers,
    }),
    rounds: new Counter({
      name: 'floe_rounds_total',
      help: 'Commit rounds by outcome',
      labelNames: ['dataset', 'outcome'],
      registers,
    }),
    roundsTimedOut: new Counter({
      name: 'floe_rounds_timed_out_total',
      help: 'Commit rounds the commit timeout cut short (they commit only the partitions that answered)',
      labelNames: ['dataset'],
      registers,
    }),
    unheldPartitionRebalances: new Counter({
      name: 'floe_unheld_partition_rebalances_total',
      help: 'Rebalances a worker asked for because partitions of the Stable group were held by no member',
      labelNames: ['dataset'],
      registers,
    }),
    roundPhaseSeconds: new Histogram({
      name: 'floe_round_phase_seconds',
      help: 'Duration of each phase of a commit round',
      labelNames: ['dataset', 'phase'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers,
    }),
    recordsCommitted: new Counter({
      name: 'floe_records_committed_total',
      help: 'Records committed to the table',
      labelNames: ['dataset'],
      registers,
    }),
    dataFilesCommitted: new Counter({
      name: 'floe_data_files_committed_total',
      help: 'Data files committed to the table (per commit: divide by floe_rounds_total{outcome="committed"})',
      labelNames: ['dataset'],
      registers,
    }),
    dataBytesCommitted: new Counter({
      name: 'floe_data_bytes_committed_total',
      help: 'Bytes of the data files committed to the table',
      labelNames: ['dataset'],
      registers,
    }),
    commitVisibilitySeconds: new Histogram({
      name: 'floe_commit_visibility_seconds',
      help: 'From the Kafka record timestamp to the commit that made it visible (oldest record of each committed range)',
      labelNames: ['dataset'],
      buckets: visibilityBuckets(options.commitIntervalSeconds),
      registers,
    }),
    lostRecords: new Counter({
      name: 'floe_records_lost_to_retention_total',
      help: 'Records deleted by Kafka retention before they were committed (the one allowed gap)',
      labelNames: ['dataset'],
      registers,
    }),
    // the table, as the coordinator last read it, and the maintenance it runs between rounds
    tableDataFiles: new Gauge({
      name: 'floe_table_data_files',
      help: "Live data files of the table's current snapshot (its summary's total-data-files)",
      labelNames: ['dataset'],
      // one member coordinates; another may not have dropped its last figure yet
      aggregator: 'max',
      registers,
    }),
    tableAverageFileBytes: new Gauge({
      name: 'floe_table_average_file_bytes',
      help: "Average size of the current snapshot's files (total-files-size / total-data-files): small files call for compaction",
      labelNames: ['dataset'],
      // one member coordinates; another may not have dropped its last figure yet
      aggregator: 'max',
      registers,
    }),
    maintenanceRuns: new Counter({
      name: 'floe_maintenance_runs_total',
      help: 'Maintenance runs of the coordinator, by outcome (ok, failed, aborted)',
      labelNames: ['dataset', 'outcome'],
      registers,
    }),
    maintenanceSeconds: new Histogram({
      name: 'floe_maintenance_duration_seconds',
      help: 'Duration of the maintenance runs the coordinator makes between rounds (compaction, snapshot expiry, orphan cleanup)',
      labelNames: ['dataset'],
      buckets: [0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
      registers,
    }),
  }
  return metrics
}

export type FloeMetrics = ReturnType<typeof createMetrics>
