// Opening a dataset's shared WAL on a worker: recovery from disk against the table's offsets and
// the assignment of that moment (recoverSharedLog), and the log made from the rotations it kept.
// A routed WAL first drops what another route wrote (forgetOtherRoute).
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from '../shared/telemetry/index.ts'
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
  if (env.route) await forgetOtherRoute(dir, env.route.fingerprint, env.logger)
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

/** The file of a routed WAL folder that names the route its rotations were written under. */
export const WAL_ROUTE_FILE = 'route'

/**
 * Rotations written under another route claim by that route's tables and skipped nothing by the
 * floors of a switch: committed under this route's generation they could land a record twice
 * (docs/architecture.md, "A route changed while the fleet runs"). They are dropped whole, and
 * their records read again from the ledger. A folder that names no route (written before routes
 * were named) is taken to be this route's, as the ledger's first switch takes it.
 */
export async function forgetOtherRoute(dir: string, fingerprint: string, logger: Logger): Promise<void> {
  const file = join(dir, WAL_ROUTE_FILE)
  const named = await readFile(file, 'utf8').then(
    (text) => text.trim(),
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw error
    },
  )
  if (named === fingerprint) return
  if (named !== undefined) {
    const entries = (await readdir(dir)).filter((name) => name !== WAL_ROUTE_FILE)
    await Promise.all(entries.map((name) => rm(join(dir, name), { recursive: true, force: true })))
    logger.warn(
      { walRoute: named, route: fingerprint, deletedFiles: entries.length },
      'the WAL held rotations of another route: dropped, their records are read again from the ledger',
    )
  }
  await mkdir(dir, { recursive: true })
  await writeFile(`${file}.tmp`, `${fingerprint}\n`)
  await rename(`${file}.tmp`, file)
}
