// Files the other WAL layout left behind. A worker reads only its own layout's files: moving a
// worker between layouts is meant to follow a drain, whose last round commits what they hold. After
// a crash, or an upgrade that changed the default, the other layout's files can hold rows the table
// lacks; those rows are read again from Kafka, which is safe while retention still has them. So the
// worker looks once and says which partitions, how many files and where, instead of re-reading in
// silence (README, `ingestion.wal.layout`).
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { WalLayout } from './partition-slot.ts'
import {
  decodeRotationManifest,
  listWalDirectory,
  parseSharedFileName,
  parseWalFileName,
  partitionLogDirectory,
  partitionOfFolder,
  sharedLogDirectory,
} from './wal/index.ts'

export interface UnreadFiles {
  /** The layout that wrote them. */
  layout: WalLayout
  /** The dataset's folder of that layout's files. */
  dir: string
  /** Data files holding rows past the table's offset of their partition. */
  files: number
  /** The partitions those rows belong to, in order. */
  partitions: number[]
}

export interface UnreadScope {
  walDir: string
  dataset: string
  topic: string
  /** The dataset reads several topics: each has a shared folder of its own (default: one topic). */
  severalTopics?: boolean
  /** The table's next offset per partition; a partition it lacks has no row of it committed. */
  tableOffsets: ReadonlyMap<number, bigint>
}

/** What the layout other than `layout` left that the table does not hold; undefined when nothing. */
export async function unreadByLayout(layout: WalLayout, scope: UnreadScope): Promise<UnreadFiles | undefined> {
  const found = layout === 'shared' ? await perPartitionFiles(scope) : await sharedFiles(scope)
  return found.files > 0 ? found : undefined
}

function ahead(scope: UnreadScope, partition: number, end: bigint): boolean {
  const tableOffset = scope.tableOffsets.get(partition)
  return tableOffset === undefined || end > tableOffset
}

/** Ready files of the per-partition layout (`<topic>-<partition>/`), each name carrying its range. */
async function perPartitionFiles(scope: UnreadScope): Promise<UnreadFiles> {
  const root = join(scope.walDir, scope.dataset)
  const partitions: number[] = []
  let files = 0
  for (const folder of await listWalDirectory(root)) {
    const partition = partitionOfFolder(folder, scope.topic)
    if (partition === undefined) continue
    const dir = partitionLogDirectory(scope.walDir, scope.dataset, scope.topic, partition)
    let held = 0
    for (const name of await listWalDirectory(dir)) {
      const file = parseWalFileName(name)
      if (file?.kind !== 'ready-parquet' || file.end === undefined || file.topic !== scope.topic) continue
      if (ahead(scope, partition, file.end)) held++
    }
    if (held > 0) partitions.push(partition)
    files += held
  }
  return { layout: 'partition', dir: root, files, partitions: partitions.sort((a, b) => a - b) }
}

/** Rotations of the shared layout (`shared/`): each manifest lists its files and every partition's range. */
async function sharedFiles(scope: UnreadScope): Promise<UnreadFiles> {
  const dir = sharedLogDirectory(scope.walDir, scope.dataset, scope.severalTopics === true ? scope.topic : undefined)
  const partitions = new Set<number>()
  let files = 0
  for (const name of await listWalDirectory(dir)) {
    if (parseSharedFileName(name)?.kind !== 'rotation') continue
    let manifest: ReturnType<typeof decodeRotationManifest>
    try {
      manifest = decodeRotationManifest(await readFile(join(dir, name), 'utf8'))
    } catch {
      continue // deleted meanwhile, or unreadable: the shared layout's recovery judges it, not this count
    }
    const lacking = manifest.ranges.filter(
      (range) => range.topic === scope.topic && ahead(scope, range.partition, range.end),
    )
    if (lacking.length === 0) continue
    files += manifest.files.length
    for (const range of lacking) partitions.add(range.partition)
  }
  return { layout: 'shared', dir, files, partitions: [...partitions].sort((a, b) => a - b) }
}
