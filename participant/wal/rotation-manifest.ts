// The shapes of the shared-segment layout and the codecs of what it writes besides Parquet: the
// rotation manifest (`rotation_<seq>_<uuid>.json`, the commit point of a cut), a segment's
// sidecar (`segment_<uuid>.json`, as today's but naming its rotation instead of a range), and the
// footer key-value metadata every file of a rotation carries (`floe.rotation`, `floe.ranges`), so
// a data file found anywhere says what it claims.
//
// A routed dataset (docs/architecture.md, "Several topics and many tables") adds, all optional so
// that a WAL written before routing reads back as unrouted: the manifest's `tables` (per table its
// claims), the sidecar's and the footer's table (`table`, `floe.table`). The version stays 1: an
// unrouted manifest is byte for byte what it was.
import type { StructType } from '../../shared/iceberg/index.ts'
import { type JsonObject, type JsonValue, stringifyJsonBytes } from '../../shared/json/index.ts'
import { partitionKey, type WalkRange } from './rotation-walk.ts'
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
  /** The routed table (`namespace.table`) whose rows it holds; absent in an unrouted log. */
  readonly table?: string
}

/**
 * What a rotation's files claim for one routed table: per partition with rows of that table,
 * `[s, e)` with `e` the partition's range end and `s` at or past its range start (a skip floor
 * raises it). Every record of those positions that the route sends to the table is in its files.
 */
export interface TableClaims {
  readonly table: string
  /** In partition order, one per partition at most. */
  readonly claims: readonly WalkRange[]
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
  /** A routed log's claims, by table name; absent in an unrouted log. */
  readonly tables?: readonly TableClaims[]
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
  /** Absent: unrouted. */
  tables?: TableClaims[]
}

export function encodeRotationManifest(manifest: RotationManifest): Uint8Array {
  return stringifyJsonBytes({
    format: manifestFormat,
    version,
    id: manifest.id,
    sequence: manifest.sequence,
    files: manifest.files,
    ranges: manifest.ranges.map(rangeToJson),
    ...(manifest.tables === undefined
      ? {}
      : {
          tables: manifest.tables.map(({ table, claims }) => ({ table, claims: claims.map(rangeToJson) })),
        }),
  })
}

/**
 * Throws INVARIANT_BROKEN (malformed) for a manifest that does not read back, or whose claims are
 * not within its ranges (the rotation would claim positions it did not read).
 */
export function decodeRotationManifest(text: string): RotationManifest {
  const json = sidecarObject(text, manifestFormat, version)
  const manifest: RotationManifest = {
    id: string(json['id'], 'id'),
    sequence: long(json['sequence'], 'sequence'),
    files: array(json['files'], 'files').map((file) => string(file, 'files')),
    ranges: array(json['ranges'], 'ranges').map((range) => rangeFromJson(range, 'ranges')),
  }
  if (json['tables'] !== undefined) {
    manifest.tables = array(json['tables'], 'tables').map(tableClaimsFromJson)
    claimsWithinRanges(manifest.ranges, manifest.tables)
  }
  return manifest
}

export function encodeSharedSidecar(segment: SharedSegment, partitionType: StructType): Uint8Array {
  return stringifyJsonBytes({
    format: sidecarFormat,
    version,
    uuid: segment.uuid,
    rotation: segment.rotation,
    ...(segment.table === undefined ? {} : { table: segment.table }),
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
  const segment: DecodedSharedSidecar['segment'] = {
    uuid: string(json['uuid'], 'uuid'),
    rotation: string(json['rotation'], 'rotation'),
    ...(json['table'] === undefined ? {} : { table: tableName(json['table'], 'table') }),
    ...file,
  }
  return { segment, partitionType }
}

/**
 * The footer key-value metadata of every file of a rotation; a routed file also says its table.
 * A file closed before its cut (its table evicted) says its rotation and table, not the ranges,
 * which were not known yet: `ranges` undefined.
 */
export function rotationFooter(
  id: string,
  ranges: readonly WalkRange[] | undefined,
  table?: string,
): Record<string, string> {
  if (ranges === undefined) return { 'floe.rotation': id, ...(table === undefined ? {} : { 'floe.table': table }) }
  // offsets as strings: a reader of the footer need not parse 64-bit JSON numbers
  const list = ranges.map((range) => ({
    topic: range.topic,
    partition: range.partition,
    start: String(range.start),
    end: String(range.end),
    ...(range.after === undefined ? {} : { after: String(range.after) }),
  }))
  const footer: Record<string, string> = { 'floe.rotation': id, 'floe.ranges': JSON.stringify(list) }
  if (table !== undefined) footer['floe.table'] = table
  return footer
}

function rangeToJson(range: WalkRange): Record<string, unknown> {
  const json = { topic: range.topic, partition: range.partition, start: range.start, end: range.end }
  // only where a jump was recorded: a manifest without one stays byte for byte what it was
  return range.after === undefined ? json : { ...json, after: range.after }
}

function rangeFromJson(value: JsonValue, what: string): WalkRange {
  const json: JsonObject = object(value, what)
  const range: WalkRange = {
    topic: string(json['topic'], `${what}.topic`),
    partition: integer(json['partition'], `${what}.partition`),
    start: long(json['start'], `${what}.start`),
    end: long(json['end'], `${what}.end`),
  }
  if (range.partition < 0 || range.start < 0n || range.end <= range.start)
    throw malformed('a range is empty or negative')
  if (json['after'] !== undefined) {
    range.after = long(json['after'], `${what}.after`)
    if (range.after < 0n || range.after >= range.start) throw malformed('a range continues from at or past its start')
  }
  return range
}

function tableClaimsFromJson(value: JsonValue): TableClaims {
  const json = object(value, 'tables')
  return {
    table: tableName(json['table'], 'tables.table'),
    claims: array(json['claims'], 'tables.claims').map((claim) => rangeFromJson(claim, 'tables.claims')),
  }
}

function tableName(value: JsonValue | undefined, what: string): string {
  const name = string(value, what)
  if (name === '') throw malformed(`${what} is empty`)
  return name
}

/**
 * A claim ends where its partition's range ends (the cut's end is the same for every table) and
 * starts inside that range; tables come in name order, each once, with at least one claim and
 * one claim per partition at most.
 */
function claimsWithinRanges(ranges: readonly WalkRange[], tables: readonly TableClaims[]): void {
  const byPartition = new Map(ranges.map((range) => [partitionKey(range.topic, range.partition), range]))
  let previous: string | undefined
  for (const { table, claims } of tables) {
    if (previous !== undefined && !(previous < table)) throw malformed('tables are not in name order, once each')
    previous = table
    if (claims.length === 0) throw malformed(`table ${table} is claimed without positions`)
    const seen = new Set<string>()
    for (const claim of claims) {
      const key = partitionKey(claim.topic, claim.partition)
      const range = byPartition.get(key)
      if (!range) throw malformed(`table ${table} claims partition ${key}, which the rotation has no range of`)
      if (seen.has(key)) throw malformed(`table ${table} claims partition ${key} twice`)
      seen.add(key)
      if (claim.end !== range.end || claim.start < range.start) {
        throw malformed(`table ${table}'s claim of partition ${key} is not within its range`)
      }
    }
  }
}
