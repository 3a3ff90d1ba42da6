// The WAL's file names. They carry everything recovery needs without opening a file: which Kafka
// partition, which offset range and which segment UUID. Topic names may contain `_`, `-` and `.`,
// so names are parsed from the right, where every part has a fixed shape.

import { join } from 'node:path'
import type { LogStartJump } from '../../protocol/index.ts'

/** `<wal.dir>/<dataset>/<topic>-<partition>`: one folder per assigned Kafka partition of a dataset. */
export function partitionLogDirectory(walDir: string, dataset: string, topic: string, partition: number): string {
  return join(walDir, dataset, `${topic}-${partition}`)
}

export type WalFileKind = 'active' | 'ready-parquet' | 'ready-json' | 'temporary'

export interface WalFileName {
  kind: WalFileKind
  topic: string
  partition: number
  uuid: string
  /** Ready files (and their temporaries) only. */
  start?: bigint
  end?: bigint
}

const uuidShape = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
const activePattern = new RegExp(`^active_(.+)_(\\d+)_(${uuidShape})\\.parquet$`)
const jumpPattern = /^jump_(.+)_(\d+)_(\d+)-(\d+)$/
const readyPattern = new RegExp(`^ready_(.+)_(\\d+)_(\\d+)-(\\d+)_(${uuidShape})\\.(parquet|json|json\\.tmp)$`)

export function activeFileName(topic: string, partition: number, uuid: string): string {
  return `active_${topic}_${partition}_${uuid}.parquet`
}

export function readyFileName(
  topic: string,
  partition: number,
  start: bigint,
  end: bigint,
  uuid: string,
  extension: 'parquet' | 'json',
): string {
  return `ready_${topic}_${partition}_${start}-${end}_${uuid}.${extension}`
}

/**
 * `jump_<topic>_<partition>_<from>-<to>`: a log-start jump the partition's chain crossed, written
 * before anything is read past it (jump-marker.ts). Ready files are named by their range alone,
 * so without it the files read past a jump look like a gap after the files before it.
 */
export function jumpFileName(topic: string, partition: number, jump: LogStartJump): string {
  return `jump_${topic}_${partition}_${jump.from}-${jump.to}`
}

export interface JumpFileName {
  topic: string
  partition: number
  jump: LogStartJump
}

/** The parts of a jump marker's name, or undefined for any other name. */
export function parseJumpFileName(name: string): JumpFileName | undefined {
  const parts = jumpPattern.exec(name)
  if (!parts) return undefined
  const range = partitionRange(parts[2] as string, parts[3] as string, parts[4] as string)
  if (!range) return undefined
  return { topic: parts[1] as string, partition: range.partition, jump: { from: range.start, to: range.end } }
}

/** Where a sidecar's rewrite is staged before it is renamed over the sidecar. */
export function temporaryFileName(jsonFileName: string): string {
  return `${jsonFileName}.tmp`
}

/** The parts of a WAL file name, or undefined for a name the WAL does not make. */
export function parseWalFileName(name: string): WalFileName | undefined {
  const active = activePattern.exec(name)
  if (active) {
    const partition = kafkaPartition(active[2] as string)
    if (partition === undefined) return undefined
    return { kind: 'active', topic: active[1] as string, partition, uuid: active[3] as string }
  }
  const ready = readyPattern.exec(name)
  if (!ready) return undefined
  const range = partitionRange(ready[2] as string, ready[3] as string, ready[4] as string)
  if (!range) return undefined
  const extension = ready[6]
  const kind = extension === 'parquet' ? 'ready-parquet' : extension === 'json' ? 'ready-json' : 'temporary'
  return { kind, topic: ready[1] as string, uuid: ready[5] as string, ...range }
}

/**
 * A name's `<partition>_<start>-<end>`, in canonical digits and never empty: a rotation with files
 * always holds at least one record, and a jump skips at least one.
 */
function partitionRange(partitionDigits: string, startDigits: string, endDigits: string) {
  const partition = kafkaPartition(partitionDigits)
  const start = offset(startDigits)
  const end = offset(endDigits)
  if (partition === undefined || start === undefined || end === undefined || start >= end) return undefined
  return { partition, start, end }
}

/** The partition of a folder named by partitionLogDirectory for `topic`, or undefined for any other name. */
export function partitionOfFolder(folder: string, topic: string): number | undefined {
  const prefix = `${topic}-`
  return folder.startsWith(prefix) ? kafkaPartition(folder.slice(prefix.length)) : undefined
}

function kafkaPartition(digits: string): number | undefined {
  const value = Number(digits)
  return Number.isSafeInteger(value) && String(value) === digits ? value : undefined
}

/** Only the canonical digits the WAL writes, so one range has one spelling. */
function offset(digits: string): bigint | undefined {
  const value = BigInt(digits)
  return String(value) === digits ? value : undefined
}
