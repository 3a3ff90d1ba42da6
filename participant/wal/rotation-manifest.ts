// The shapes of the shared-segment layout and the codecs of what it writes besides Parquet: the
// rotation manifest (`rotation_<seq>_<uuid>.json`, the commit point of a cut), a segment's
// sidecar (`segment_<uuid>.json`, as today's but naming its rotation instead of a range), and the
// footer key-value metadata every file of a rotation carries (`floe.rotation`, `floe.ranges`), so
// a data file found anywhere says what it claims.
import type { StructType } from '../../shared/iceberg/index.ts'
import { type JsonObject, type JsonValue, stringifyJsonBytes } from '../../shared/json/index.ts'
import type { WalkRange } from './rotation-walk.ts'
import {
  array,
  decodeFileFields,
  fileFields,
  integer,
  long,
  malformed,
  object,
  type SidecarFile,
  sidecarObject,
  string,
} from './sidecar.ts'
import type { RotationReason } from './types.ts'

/** One closed, fsynced file of a rotation: an Iceberg data file waiting for upload and commit. */
export interface SharedSegment extends SidecarFile {
  /** Chosen when the segment opened; names the object in storage (invariant 7). */
  readonly uuid: string
  /** The rotation it belongs to. */
  readonly rotation: string
  /** The `segment_*.parquet` file and its `segment_*.json` sidecar. */
  readonly localPath: string
  readonly jsonPath: string
}

/** What one cut made: for every partition that moved since the previous cut, its range, and the files holding their rows. */
export interface SharedRotation {
  readonly id: string
  readonly sequence: bigint
  readonly reason: RotationReason
  /** Every partition the rotation claims, in partition order; their rows are in `segments` together. */
  readonly ranges: readonly WalkRange[]
  /** May be empty: every record of the ranges dead-lettered, markers, compaction gaps. */
  readonly segments: readonly SharedSegment[]
  /** The `rotation_*.json` manifest. */
  readonly manifestPath: string
}

const manifestFormat = 'floe-wal-rotation'
const sidecarFormat = 'floe-wal-shared-segment'
const version = 1

export interface RotationManifest {
  id: string
  sequence: bigint
  files: string[]
  ranges: WalkRange[]
}

export function encodeRotationManifest(manifest: RotationManifest): Uint8Array {
  return stringifyJsonBytes({
    format: manifestFormat,
    version,
    id: manifest.id,
    sequence: manifest.sequence,
    files: manifest.files,
    ranges: manifest.ranges.map(rangeToJson),
  })
}

/** Throws INVARIANT_BROKEN (malformed) for a manifest that does not read back. */
export function decodeRotationManifest(text: string): RotationManifest {
  const json = sidecarObject(text, manifestFormat, version)
  return {
    id: string(json['id'], 'id'),
    sequence: long(json['sequence'], 'sequence'),
    files: array(json['files'], 'files').map((file) => string(file, 'files')),
    ranges: array(json['ranges'], 'ranges').map((range) => rangeFromJson(range)),
  }
}

export function encodeSharedSidecar(segment: SharedSegment, partitionType: StructType): Uint8Array {
  return stringifyJsonBytes({
    format: sidecarFormat,
    version,
    uuid: segment.uuid,
    rotation: segment.rotation,
    ...fileFields(segment, partitionType),
  })
}

export interface DecodedSharedSidecar {
  segment: Omit<SharedSegment, 'localPath' | 'jsonPath'>
  partitionType: StructType
}

export function decodeSharedSidecar(text: string): DecodedSharedSidecar {
  const json = sidecarObject(text, sidecarFormat, version)
  const { partitionType, ...file } = decodeFileFields(json)
  return {
    segment: { uuid: string(json['uuid'], 'uuid'), rotation: string(json['rotation'], 'rotation'), ...file },
    partitionType,
  }
}

/** The footer key-value metadata of every file of a rotation. */
export function rotationFooter(id: string, ranges: readonly WalkRange[]): Record<string, string> {
  // offsets as strings: a reader of the footer need not parse 64-bit JSON numbers
  const list = ranges.map((range) => ({
    topic: range.topic,
    partition: range.partition,
    start: String(range.start),
    end: String(range.end),
  }))
  return { 'floe.rotation': id, 'floe.ranges': JSON.stringify(list) }
}

function rangeToJson(range: WalkRange): Record<string, unknown> {
  return { topic: range.topic, partition: range.partition, start: range.start, end: range.end }
}

function rangeFromJson(value: JsonValue): WalkRange {
  const json: JsonObject = object(value, 'ranges')
  const range = {
    topic: string(json['topic'], 'ranges.topic'),
    partition: integer(json['partition'], 'ranges.partition'),
    start: long(json['start'], 'ranges.start'),
    end: long(json['end'], 'ranges.end'),
  }
  if (range.partition < 0 || range.start < 0n || range.end <= range.start)
    throw malformed('a range is empty or negative')
  return range
}
