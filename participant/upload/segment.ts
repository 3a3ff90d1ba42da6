// What the uploader takes from the WAL: one ready segment (footer written, fsynced, renamed) and
// the object names derived from it. The shape is declared here rather than imported because
// participant/wal/ is written alongside; it is the contract in docs/architecture.md.

import type { DataFile } from '../../shared/iceberg/index.ts'
import { FloeError } from '../../shared/index.ts'
import type { BloomFilterLocation } from '../../shared/parquet/index.ts'

export interface ReadySegment {
  /** Chosen at rotation; names the object, so a repeated upload replaces it (invariant 7). */
  uuid: string
  localPath: string
  /** The Kafka partition and range `[start, end)` the segment covers; none for a shared segment, which holds many. */
  topic?: string
  partition?: number
  start?: bigint
  end?: bigint
  /** Iceberg's partition path, e.g. `ts_day=2025-11-30`; empty for an unpartitioned table. */
  partitionPath: string
  dataFile: Omit<DataFile, 'filePath'>
  /** The native split-block bloom filters inside the Parquet file, per row group and field id. */
  bloomFilters: readonly BloomFilterLocation[]
  sizeBytes: number
}

// Any RFC 4122 layout (v4 from randomUUID, v7, ...): only hex and dashes can reach an object name.
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * `<tableDataLocation>/<partitionPath>/<uuid>.parquet`, or `<tableDataLocation>/<uuid>.parquet`
 * when unpartitioned. Refuses names that could leave the data directory: the WAL made them, so
 * a bad one is a bug, not a condition to retry.
 */
export function dataObjectLocation(tableDataLocation: string, segment: Pick<ReadySegment, 'uuid' | 'partitionPath'>) {
  if (!uuidPattern.test(segment.uuid)) {
    throw new FloeError('INVARIANT_BROKEN', `segment id ${segment.uuid} is not a UUID`, {
      details: { uuid: segment.uuid },
    })
  }
  const base = tableDataLocation.replace(/\/+$/, '')
  if (base === '') {
    throw new FloeError('CONFIG_INVALID', 'the table data location is empty', { details: { tableDataLocation } })
  }
  const partitionPath = segment.partitionPath.replace(/^\/+|\/+$/g, '')
  if (partitionPath === '') return `${base}/${segment.uuid}.parquet`
  const parts = partitionPath.split('/')
  if (parts.some((part) => part === '' || part === '.' || part === '..')) {
    throw new FloeError('INVARIANT_BROKEN', `partition path ${segment.partitionPath} is not a relative path`, {
      details: { partitionPath: segment.partitionPath },
    })
  }
  return `${base}/${partitionPath}/${segment.uuid}.parquet`
}

/** The bloom-filter sidecar sits beside its data file: `<data object>.bloom`. */
export function bloomSidecarLocation(dataFileLocation: string): string {
  return `${dataFileLocation}.bloom`
}
