// A cut's durable steps in the shared layout, in the order recovery depends on
// (shared-recovery.ts):
//   1. every open segment writes its footer (with the rotation's id and ranges) and is fsynced,
//   2. every `active_*` is renamed to `segment_*`, and every sidecar written and fsynced,
//   3. the directory is fsynced, so every file the manifest will name is durable,
//   4. the rotation manifest is written under a temporary name, fsynced, renamed into place, and
//      the directory fsynced: the rename is the rotation's commit point.
// A crash before 4's rename leaves segments no manifest names (deleted at recovery: the
// rotation never existed); after it, the rotation is whole. A routed cut also records its claims
// per table in the manifest, and each file's table in its sidecar and footer. The files of tables
// evicted since the last cut (open-segments.ts) had step 1 then, under the cut's id; they take
// steps 2-4 with the others.
import { join } from 'node:path'
import { FloeError } from '../../shared/index.ts'
import type { DataFileMetrics } from '../../shared/parquet/index.ts'
import { fsyncDirectory, renameDurably, replaceFileDurably, writeFileDurably } from './durable.ts'
import { closedFileOf } from './make-ready.ts'
import {
  encodeRotationManifest,
  encodeSharedSidecar,
  rotationFooter,
  type SharedRotation,
  type SharedSegment,
  type TableClaims,
} from './rotation-manifest.ts'
import type { WalkRange } from './rotation-walk.ts'
import type { EvictedSegment, OpenSegment, TableContext } from './segment-types.ts'
import { rotationManifestName, sharedSegmentName, sharedTemporaryName } from './shared-names.ts'
import { claimsMatchFiles } from './table-claims.ts'
import type { RotationReason } from './types.ts'

export interface Cut {
  id: string
  sequence: bigint
  reason: RotationReason
  ranges: readonly WalkRange[]
  /** A routed cut's claims (table-claims.ts); absent when unrouted. */
  tables?: readonly TableClaims[]
}

export async function writeRotation(
  context: TableContext,
  open: readonly OpenSegment[],
  cut: Cut,
  evicted: readonly EvictedSegment[] = [],
): Promise<SharedRotation> {
  const { dir } = context
  const segments = [...evicted.map(({ segment }) => segment), ...open]
  if (!claimsMatchFiles(cut.tables, segments)) {
    throw new FloeError('INVARIANT_BROKEN', "a cut's claimed tables are not its files' tables", {
      details: { rotation: cut.id, tables: cut.tables?.map(({ table }) => table) },
    })
  }
  const footer = rotationFooter(cut.id, cut.ranges)
  // the closes run side by side: each ends in its own fsync, which a disk serves in parallel
  const closed = [
    ...evicted.map(({ metrics }) => metrics),
    ...(await Promise.all(
      open.map((segment) =>
        segment.writer.close({
          keyValueMetadata: segment.table === undefined ? footer : rotationFooter(cut.id, cut.ranges, segment.table),
        }),
      ),
    )),
  ]
  const ready = segments.map((segment, index) =>
    sharedSegmentOf(context, segment, closed[index] as DataFileMetrics, cut.id),
  )
  await Promise.all(
    segments.map((segment, index) =>
      renameDurably(join(dir, segment.activeName), (ready[index] as SharedSegment).localPath),
    ),
  )
  await Promise.all(
    ready.map((segment) => writeFileDurably(segment.jsonPath, encodeSharedSidecar(segment, context.partitionType))),
  )
  await fsyncDirectory(dir)
  const name = rotationManifestName(cut.sequence, cut.id)
  await replaceFileDurably(
    dir,
    name,
    sharedTemporaryName(name),
    encodeRotationManifest({
      id: cut.id,
      sequence: cut.sequence,
      files: ready.map((segment) => segment.uuid),
      ranges: [...cut.ranges],
      ...(cut.tables === undefined ? {} : { tables: [...cut.tables] }),
    }),
  )
  return {
    id: cut.id,
    sequence: cut.sequence,
    reason: cut.reason,
    ranges: cut.ranges,
    segments: ready,
    ...(cut.tables === undefined ? {} : { tables: cut.tables }),
    manifestPath: join(dir, name),
  }
}

function sharedSegmentOf(
  context: TableContext,
  segment: EvictedSegment['segment'],
  metrics: DataFileMetrics,
  rotation: string,
): SharedSegment {
  const { dir } = context
  return {
    uuid: segment.uuid,
    rotation,
    ...(segment.table === undefined ? {} : { table: segment.table }),
    localPath: join(dir, sharedSegmentName(segment.uuid, 'parquet')),
    jsonPath: join(dir, sharedSegmentName(segment.uuid, 'json')),
    ...closedFileOf(context, segment, metrics),
  }
}
