// The per-partition layout's record of a log-start jump: an empty file whose name carries it
// (names.ts, `jump_<topic>_<partition>_<from>-<to>`), written durably before the partition reads
// past the jump. Ready files are named by their range alone, so a restart or a resync that finds
// files on both sides of a jump needs this to keep them as one chain (recovery-plan.ts crosses
// it) instead of dropping those past it as a gap. The shared layout records the same jump in its
// rotation manifests instead (rotation-walk.ts, `after`).
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { LogStartJump } from '../../protocol/index.ts'
import { deleteWalFiles, fsyncDirectory, listWalDirectory, storageError, writeFileDurably } from './durable.ts'
import { jumpFileName, parseJumpFileName } from './names.ts'

/**
 * Makes `jump` the partition's one recorded jump: a chain declares at most one, so the markers of
 * earlier jumps go first (a crash in between leaves none, as before jumps were recorded).
 */
export async function recordJump(dir: string, topic: string, partition: number, jump: LogStartJump): Promise<void> {
  const name = jumpFileName(topic, partition, jump)
  const others: string[] = []
  let present = false
  for (const file of await listWalDirectory(dir)) {
    const marker = parseJumpFileName(file)
    if (marker?.topic !== topic || marker.partition !== partition) continue
    if (file === name) present = true
    else others.push(file)
  }
  await deleteWalFiles(dir, others)
  if (present) return
  try {
    await mkdir(dir, { recursive: true })
  } catch (error) {
    throw storageError('cannot create WAL directory', dir, error)
  }
  await writeFileDurably(join(dir, name), new Uint8Array(0))
  await fsyncDirectory(dir)
}
