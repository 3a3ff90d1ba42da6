// WAL folders of partitions this worker no longer owns. A revoked partition rotates its open
// segments and leaves its ready files, for reuse if the partition comes back (docs/design.md "Rotate ...
// a rebalance"). If it does not, the files would stay for good and count against the WAL volume's
// disk watermark. So every START-COMMIT, which carries the table's offsets, deletes from the
// folders of unowned partitions the ready files the table already holds. Nothing else: open
// segments and files ahead of the table are left alone, as they may be a live log's (a WAL folder
// shared by two workers, wrongly, must not lose them); a later START finds them behind too. The
// first START also looks for the other WAL layout's files the table lacks (other-layout.ts).
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { StartCommit } from '../protocol/index.ts'
import { messageOf } from '../shared/index.ts'
import type { Logger } from '../shared/telemetry/index.ts'
import { type UnreadFiles, unreadByLayout } from './other-layout.ts'
import type { PartitionQueue } from './partition-queue.ts'
import type { WalLayout } from './partition-slot.ts'
import { partitionLogDirectory, partitionOfFolder, pruneBehindTable } from './wal/index.ts'

export interface UnownedSweep {
  walDir: string
  dataset: string
  topic: string
  /** The table's next offset per partition, from START-COMMIT. */
  tableOffsets: ReadonlyMap<number, bigint>
  /** Checked as a step on the partition's queue: a partition assigned meanwhile is its own sync's. */
  owned(partition: number): boolean
  queue(partition: number): PartitionQueue
}

/** Resolves to the number of files deleted. */
export async function sweepUnownedPartitions(sweep: UnownedSweep): Promise<number> {
  const root = join(sweep.walDir, sweep.dataset)
  let folders: string[]
  try {
    folders = await readdir(root)
  } catch {
    return 0
  }
  let deleted = 0
  for (const folder of folders) {
    const partition = partitionOfFolder(folder, sweep.topic)
    if (partition === undefined) continue
    const tableOffset = sweep.tableOffsets.get(partition)
    if (tableOffset === undefined || sweep.owned(partition)) continue
    deleted += await sweep.queue(partition).run(async () => {
      if (sweep.owned(partition)) return 0
      const dir = partitionLogDirectory(sweep.walDir, sweep.dataset, sweep.topic, partition)
      return (await pruneBehindTable(dir, tableOffset, { topic: sweep.topic, partition })).length
    })
  }
  return deleted
}

/** What a worker's dataset sweeps at each START-COMMIT (StartSweeps). */
export interface StartSweepScope extends Omit<UnownedSweep, 'tableOffsets'> {
  /** The worker's WAL layout: the first START also looks for the other layout's files. */
  layout: WalLayout
  /** The dataset reads several topics: each has a shared folder of its own. */
  severalTopics: boolean
}

/**
 * At every START-COMMIT, in the background: the sweep with the table's offsets it carries, logged.
 * At the first, then, the files of the other layout that the table lacks (other-layout.ts), warned
 * of once: the table's offsets are what tells them from files it already holds.
 */
export class StartSweeps {
  readonly #scope: StartSweepScope
  readonly #logger: Logger
  #layoutChecked = false

  constructor(scope: StartSweepScope, logger: Logger) {
    this.#scope = scope
    this.#logger = logger
  }

  atStart(start: StartCommit): void {
    const scope = this.#scope
    const logger = this.#logger
    const tableOffsets = new Map<number, bigint>()
    for (const { topic, partition, offset } of start.tableOffsets) {
      if (topic === scope.topic) tableOffsets.set(partition, offset)
    }
    const swept = sweepUnownedPartitions({ ...scope, tableOffsets }).then(
      (deleted) => {
        if (deleted > 0) logger.info({ deleted }, 'deleted WAL files of partitions other workers own now')
      },
      (error: unknown) => logger.warn({ err: messageOf(error) }, 'could not sweep WAL files of unowned partitions'),
    )
    if (this.#layoutChecked) return
    this.#layoutChecked = true
    void swept
      .then(() => unreadByLayout(scope.layout, { ...scope, tableOffsets }))
      .then(
        (unread) => unread && warnUnread(unread, scope.layout, logger),
        (error: unknown) => logger.warn({ err: messageOf(error) }, "could not look for the other WAL layout's files"),
      )
  }
}

function warnUnread(unread: UnreadFiles, layout: WalLayout, logger: Logger): void {
  const { partitions, ...where } = unread
  logger.warn(
    { ...where, partitions: partitions.slice(0, 20), partitionCount: partitions.length, workerLayout: layout },
    `WAL files of the ${unread.layout} layout hold rows the table lacks: a worker on the ${layout} layout ` +
      'does not read them, so their rows are read from Kafka again (switch ingestion.wal.layout after a drain)',
  )
}
