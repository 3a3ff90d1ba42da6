import { join } from 'node:path'
import type { LogStartJump } from '../../protocol/index.ts'
import { deleteWalFiles, listWalDirectory } from './durable.ts'
import { parseWalFileName } from './names.ts'
import { type KeptRotation, planRecovery, type RecoveryDeletionReason } from './recovery-plan.ts'
import { decodeSidecar, readSidecarWithSize } from './sidecar.ts'
import type { ReadySegment, Rotation } from './types.ts'

export type RecoveredDeletionReason =
  | RecoveryDeletionReason
  /** Its sidecar does not read back or disagrees with the file name or the .parquet's size. */
  | 'unreadable'
  /** Written under a partition spec other than the one the dataset has now. */
  | 'spec-changed'

export interface RecoveredDeletion {
  file: string
  reason: RecoveredDeletionReason
}

export interface RecoveredPartition {
  /** The kept segments, oldest range first: hand them to PartitionLog as `recovered`. */
  segments: ReadySegment[]
  /** The kept rotations (reason 'recovered'); they chain from the table's offset. */
  rotations: Rotation[]
  /** Where to consume from: the last kept rotation's end, else the table's offset. */
  resumeFrom: bigint | undefined
  /** The recorded log-start jump the kept rotations cross (jump-marker.ts). */
  jump?: LogStartJump
  deleted: RecoveredDeletion[]
  /** File names the WAL does not make; left alone. */
  unknown: string[]
}

export interface RecoverPartitionOptions {
  /** When given with `partition`, files of another Kafka partition are reported as unknown. */
  topic?: string
  partition?: number
  /** When given, kept files written under another partition spec are deleted. */
  specId?: number
  /** False: a recorded jump is not crossed, and the files past it go as a gap (a chain that must jump again). */
  crossJumps?: boolean
}

/**
 * Applies the recovery plan to a partition's WAL folder (deletions fsynced) and returns what is
 * kept. A folder that does not exist holds nothing to recover.
 */
export async function recoverPartition(
  dir: string,
  tableOffset: bigint | undefined,
  options: RecoverPartitionOptions = {},
): Promise<RecoveredPartition> {
  const names = await listWalDirectory(dir)
  const scope =
    options.topic !== undefined && options.partition !== undefined
      ? { topic: options.topic, partition: options.partition }
      : undefined
  const plan = planRecovery(names, tableOffset, scope, { crossJumps: options.crossJumps ?? true })
  const deleted: RecoveredDeletion[] = [...plan.deletions]
  const rotations: Rotation[] = []
  let resumeFrom = plan.resumeFrom
  const jump = plan.jump
  for (let i = 0; i < plan.kept.length; i++) {
    const kept = plan.kept[i] as KeptRotation
    const read = await readKeptRotation(dir, kept, options.specId)
    if (typeof read === 'string') {
      for (const file of kept.files) deleted.push({ file, reason: read })
      for (const later of plan.kept.slice(i + 1)) for (const file of later.files) deleted.push({ file, reason: 'gap' })
      // the chain's files end where the jump starts when the first rotation past it is the one unread
      resumeFrom = jump && kept.start === jump.to ? jump.from : kept.start
      break
    }
    rotations.push({ start: kept.start, end: kept.end, reason: 'recovered', segments: read })
  }
  const crossed = jump && rotations.some((rotation) => rotation.start === jump.to)
  if (jump && !crossed) deleted.push({ file: jump.file, reason: 'jump-not-crossed' })
  await deleteWalFiles(
    dir,
    deleted.map((deletion) => deletion.file),
  )
  return {
    segments: rotations.flatMap((rotation) => rotation.segments),
    rotations,
    resumeFrom,
    ...(jump && crossed ? { jump: { from: jump.from, to: jump.to } } : {}),
    deleted,
    unknown: plan.unknown,
  }
}

async function readKeptRotation(
  dir: string,
  kept: KeptRotation,
  specId: number | undefined,
): Promise<ReadySegment[] | 'unreadable' | 'spec-changed'> {
  const segments: ReadySegment[] = []
  for (const file of kept.files) {
    const name = parseWalFileName(file)
    if (name?.kind !== 'ready-json') continue
    const jsonPath = join(dir, file)
    const localPath = jsonPath.replace(/\.json$/, '.parquet')
    const read = await readSidecarWithSize(jsonPath, localPath, decodeSidecar)
    if (!read) return 'unreadable'
    const { segment } = read.decoded
    const size = read.size
    const matches =
      segment.uuid === name.uuid &&
      segment.topic === name.topic &&
      segment.partition === name.partition &&
      segment.start === name.start &&
      segment.end === name.end &&
      segment.sizeBytes === size
    if (!matches) return 'unreadable'
    if (specId !== undefined && segment.dataFile.specId !== specId) return 'spec-changed'
    segments.push({ ...segment, localPath, jsonPath })
  }
  return segments
}

/**
 * Deletes the ready files of a partition this worker does not own whose range the table already
 * holds, wholly or in part: nobody can commit them any more. Everything else stays (open segments
 * and ready files ahead of the table may belong to a log that is still live). A folder that does
 * not exist holds nothing. Returns the deleted file names.
 */
export async function pruneBehindTable(
  dir: string,
  tableOffset: bigint,
  scope: { topic: string; partition: number },
): Promise<string[]> {
  const names = await listWalDirectory(dir)
  const doomed = planRecovery(names, tableOffset, scope)
    .deletions.filter((deletion) => deletion.reason === 'behind-table' || deletion.reason === 'straddles-table')
    .map((deletion) => deletion.file)
  await deleteWalFiles(dir, doomed)
  return doomed
}
