// A rotation's durable steps, in the order recovery depends on (see recovery-plan.ts):
//   1. every open segment writes its footer and is fsynced (DataFileWriter.close does both),
//   2. every segment's sidecar is written and fsynced, then the directory, so no `ready_*.parquet`
//      can exist on disk without its `.json`,
//   3. every `active_*.parquet` is renamed to `ready_*.parquet`, then the directory is fsynced.
// A crash anywhere leaves either only active files and orphan sidecars, or a rotation whose
// `.parquet`/`.json` pairs are partly complete: recovery deletes both kinds whole.
import { join } from 'node:path'
import { type DataFileMetrics, toDataFile } from '../../shared/parquet/index.ts'
import { fsyncDirectory, renameDurably, writeFileDurably } from './durable.ts'
import { readyFileName } from './names.ts'
import type { OpenSegment, TableContext } from './segment-types.ts'
import { encodeSidecar, type SidecarFile } from './sidecar.ts'
import type { ReadySegment } from './types.ts'

/** The Kafka records a rotation's files hold: the range `[start, end)` of one partition. */
export interface RotationRange {
  topic: string
  partition: number
  start: bigint
  end: bigint
}

export async function makeReady(
  context: TableContext,
  segments: readonly OpenSegment[],
  range: RotationRange,
): Promise<ReadySegment[]> {
  const { dir } = context
  const { topic, partition, start, end } = range
  // provenance in the footer: which Kafka records the file holds
  const keyValueMetadata = {
    'floe.kafka.topic': topic,
    'floe.kafka.partition': String(partition),
    'floe.kafka.start-offset': String(start),
    'floe.kafka.end-offset': String(end),
  }
  // the closes run side by side: each ends in its own fsync, which a disk serves in parallel
  const closed = await Promise.all(segments.map((segment) => segment.writer.close({ keyValueMetadata })))
  const ready = segments.map((segment, index) =>
    readySegmentOf(context, segment, closed[index] as DataFileMetrics, range),
  )
  await Promise.all(
    ready.map((segment) => writeFileDurably(segment.jsonPath, encodeSidecar(segment, context.partitionType))),
  )
  await fsyncDirectory(dir)
  await Promise.all(
    segments.map((segment, index) =>
      renameDurably(join(dir, segment.activeName), (ready[index] as ReadySegment).localPath),
    ),
  )
  await fsyncDirectory(dir)
  return ready
}

/**
 * What either layout's sidecar records of a closed segment's file: its partition, the manifest's
 * data_file without its object location (the upload sets it), bloom filters and size.
 */
export function closedFileOf(
  context: TableContext,
  segment: Pick<OpenSegment, 'partitionValues'>,
  metrics: DataFileMetrics,
): SidecarFile {
  const { schema, spec, fieldTypes, partitioner } = context
  const { filePath: _none, ...dataFile } = toDataFile(
    metrics,
    { filePath: '', schema, specId: spec['spec-id'], partition: segment.partitionValues },
    fieldTypes,
  )
  return {
    partitionValues: segment.partitionValues,
    partitionPath: partitioner.path(segment.partitionValues),
    dataFile,
    bloomFilters: metrics.bloomFilters,
    sizeBytes: Number(metrics.fileSizeInBytes),
  }
}

function readySegmentOf(
  context: TableContext,
  segment: OpenSegment,
  metrics: DataFileMetrics,
  range: RotationRange,
): ReadySegment {
  const { dir } = context
  const { topic, partition, start, end } = range
  return {
    uuid: segment.uuid,
    localPath: join(dir, readyFileName(topic, partition, start, end, segment.uuid, 'parquet')),
    jsonPath: join(dir, readyFileName(topic, partition, start, end, segment.uuid, 'json')),
    topic,
    partition,
    start,
    end,
    ...closedFileOf(context, segment, metrics),
  }
}
