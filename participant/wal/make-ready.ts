// A rotation's durable steps, in the order recovery depends on (see recovery-plan.ts):
//   1. every open segment writes its footer and is fsynced (DataFileWriter.close does both),
//   2. every segment's sidecar is written and fsynced, then the directory, so no `ready_*.parquet`
//      can exist on disk without its `.json`,
//   3. every `active_*.parquet` is renamed to `ready_*.parquet`, then the directory is fsynced.
// A crash anywhere leaves either only active files and orphan sidecars, or a rotation whose
// `.parquet`/`.json` pairs are partly complete: recovery deletes both kinds whole.
import { join } from 'node:path'
import type { DataFile, PartitionSpec, PrimitiveType, Schema, StructType } from '../../shared/iceberg/index.ts'
import type { Partitioner } from '../../shared/iceberg/partitioning/index.ts'
import { type DataFileMetrics, toDataFile } from '../../shared/parquet/index.ts'
import { fsyncDirectory, renameDurably, writeFileDurably } from './durable.ts'
import { readyFileName } from './names.ts'
import type { OpenSegment } from './open-segments.ts'
import { encodeSidecar } from './sidecar.ts'
import type { ReadySegment } from './types.ts'

export interface RotationContext {
  dir: string
  topic: string
  partition: number
  schema: Schema
  spec: PartitionSpec
  partitioner: Partitioner
  partitionType: StructType
  fieldTypes: ReadonlyMap<number, PrimitiveType>
}

export async function makeReady(
  context: RotationContext,
  segments: readonly OpenSegment[],
  start: bigint,
  end: bigint,
): Promise<ReadySegment[]> {
  const { dir, topic, partition } = context
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
    readySegmentOf(context, segment, closed[index] as DataFileMetrics, start, end),
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

/** The manifest's data_file of a closed segment, without its object location (the upload sets it). */
export function dataFileOf(
  context: Pick<RotationContext, 'schema' | 'spec' | 'fieldTypes'>,
  segment: Pick<OpenSegment, 'partitionValues'>,
  metrics: DataFileMetrics,
): Omit<DataFile, 'filePath'> {
  const { schema, spec, fieldTypes } = context
  const { filePath: _none, ...dataFile } = toDataFile(
    metrics,
    { filePath: '', schema, specId: spec['spec-id'], partition: segment.partitionValues },
    fieldTypes,
  )
  return dataFile
}

function readySegmentOf(
  context: RotationContext,
  segment: OpenSegment,
  metrics: DataFileMetrics,
  start: bigint,
  end: bigint,
): ReadySegment {
  const { dir, topic, partition, partitioner } = context
  const dataFile = dataFileOf(context, segment, metrics)
  return {
    uuid: segment.uuid,
    localPath: join(dir, readyFileName(topic, partition, start, end, segment.uuid, 'parquet')),
    jsonPath: join(dir, readyFileName(topic, partition, start, end, segment.uuid, 'json')),
    topic,
    partition,
    start,
    end,
    partitionValues: segment.partitionValues,
    partitionPath: partitioner.path(segment.partitionValues),
    dataFile,
    bloomFilters: metrics.bloomFilters,
    sizeBytes: Number(metrics.fileSizeInBytes),
  }
}
