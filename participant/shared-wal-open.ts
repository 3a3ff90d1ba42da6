// Opening a dataset's shared WAL on a worker: recovery from disk against the table's offsets and
// the assignment of that moment (recoverSharedLog), and the log made from the rotations it kept.
import type { SlotEnvironment } from './partition-slot.ts'
import { walOptionsOf } from './partition-work.ts'
import { recoverSharedLog, SharedLog } from './wal/index.ts'

export interface OpenedSharedLog {
  log: SharedLog
  /** The partitions the kept rotations hold, with the table's offset of each (undefined: none). */
  kept: Map<number, bigint | undefined>
}

export async function openSharedLog(env: SlotEnvironment, dir: string): Promise<OpenedSharedLog> {
  const tableOffsets = await env.table.offsets()
  const recovered = await recoverSharedLog(dir, {
    topic: env.dataset.topic,
    tableOffsets,
    assigned: env.reader.assigned(),
    specId: env.table.spec['spec-id'],
  })
  const names = env.route ? env.decoder.routeTables?.names : undefined
  const log = new SharedLog({
    ...walOptionsOf(env),
    ...(env.route && names ? { route: { names, maxOpenTables: env.route.maxOpenTables } } : {}),
    onEvict: (tables) => env.metrics.tableEvictions.inc({ dataset: env.dataset.name }, tables),
    dir,
    recovered: recovered.rotations,
    nextSequence: recovered.nextSequence,
  })
  const kept = new Map<number, bigint | undefined>()
  for (const rotation of recovered.rotations) {
    for (const range of rotation.ranges) kept.set(range.partition, tableOffsets.get(range.partition))
  }
  env.logger.info(
    {
      keptRotations: recovered.rotations.length,
      deletedFiles: recovered.deleted.length,
      nextSequence: String(recovered.nextSequence),
    },
    'shared WAL recovered',
  )
  return { log, kept }
}
