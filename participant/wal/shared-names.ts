// File names of the shared-segment layout (docs/architecture.md, "Shared segments"). One folder
// per dataset holds every Kafka partition's rows, so no name carries a partition or a range: a
// segment is named by its UUID alone, and which rows it holds is the rotation manifest's to say
// (with 1,000 partitions the ranges no longer fit in a file name).
import { join } from 'node:path'

/**
 * `<wal.dir>/<dataset>/shared`, or `shared.<topic>` for each topic of a dataset that reads several
 * (their chains and rotations stay apart, as their statuses do): never a partition folder's name,
 * which is `<topic>-<partition>`.
 */
export function sharedLogDirectory(walDir: string, dataset: string, topic?: string): string {
  return join(walDir, dataset, topic === undefined ? 'shared' : `shared.${topic}`)
}

export type SharedFileName =
  /** An open segment, no footer. */
  | { kind: 'active'; uuid: string }
  /** A segment whose footer is written and fsynced. */
  | { kind: 'segment'; uuid: string }
  /** Its sidecar. */
  | { kind: 'sidecar'; uuid: string }
  /** A rotation manifest: the commit point of a cut. */
  | { kind: 'rotation'; uuid: string; sequence: bigint }
  /** A manifest or sidecar staged under a temporary name and never renamed into place. */
  | { kind: 'temporary' }

const uuidShape = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
const active = new RegExp(`^active_(${uuidShape})\\.parquet$`)
const segment = new RegExp(`^segment_(${uuidShape})\\.(parquet|json)$`)
const rotation = new RegExp(`^rotation_(\\d+)_(${uuidShape})\\.json$`)
const temporary = new RegExp(`^(segment_${uuidShape}|rotation_\\d+_${uuidShape})\\.json\\.tmp$`)

export function sharedActiveName(uuid: string): string {
  return `active_${uuid}.parquet`
}

export function sharedSegmentName(uuid: string, extension: 'parquet' | 'json'): string {
  return `segment_${uuid}.${extension}`
}

export function rotationManifestName(sequence: bigint, uuid: string): string {
  return `rotation_${sequence}_${uuid}.json`
}

export function sharedTemporaryName(name: string): string {
  return `${name}.tmp`
}

/** The parts of a shared-layout file name, or undefined for a name this layout does not make. */
export function parseSharedFileName(name: string): SharedFileName | undefined {
  const open = active.exec(name)
  if (open) return { kind: 'active', uuid: open[1] as string }
  const ready = segment.exec(name)
  if (ready) return { kind: ready[2] === 'parquet' ? 'segment' : 'sidecar', uuid: ready[1] as string }
  const manifest = rotation.exec(name)
  if (manifest) {
    const digits = manifest[1] as string
    const sequence = BigInt(digits)
    // only the canonical spelling, so one rotation has one name
    if (String(sequence) !== digits) return undefined
    return { kind: 'rotation', uuid: manifest[2] as string, sequence }
  }
  return temporary.test(name) ? { kind: 'temporary' } : undefined
}
