// A WRITE-STATUS as the round tracker takes it: its spilled file list read back from storage, and
// each file's partition tuple read with its spec's partition type (protocol/ cannot know the
// table, see protocol/data-file.ts).

import type { WriteStatusReport } from '../protocol/index.ts'
import {
  type ControlMessage,
  type DataFileEntry,
  resolveFiles,
  toDataFile,
  type WriteStatus,
  writeStatusReport,
} from '../protocol/index.ts'
import type { Catalog, TableIdentifier } from '../shared/catalog/index.ts'
import type { DataFile, StructType } from '../shared/iceberg/index.ts'
import { currentSchema, specById, type TableMetadata } from '../shared/iceberg/metadata/index.ts'
import { partitionType } from '../shared/iceberg/partitioning/index.ts'
import { FloeError, messageOf } from '../shared/index.ts'
import type { ObjectStorage } from '../shared/storage/index.ts'

/** The round in flight, as the starting actor loaded the table for it. */
export interface RoundTable {
  commitId: string
  metadata: TableMetadata
  /** Partition types by spec id, filled as files of each spec arrive. */
  partitionTypes: Map<number, StructType>
}

export interface StatusSources {
  catalog: Catalog
  table: TableIdentifier
  storage: ObjectStorage
}

/**
 * The status of the round in flight, its files in place. Throws what reading the file list or a
 * partition tuple throws (PROTOCOL_UNDECODABLE, STORAGE_NOT_FOUND, STORAGE_UNAVAILABLE, ...).
 */
export async function readWriteStatus(
  message: ControlMessage<WriteStatus>,
  round: RoundTable,
  sources: StatusSources,
): Promise<WriteStatusReport> {
  const resolved = await resolveFiles(message.body, sources.storage, { commitId: round.commitId })
  // A spec added after START-COMMIT is not in the round's metadata: load the table once more.
  const files = [...resolved.partitions, ...(resolved.rotations ?? [])].flatMap((p) => p.files)
  if (files.some((f) => !specById(round.metadata, f.specId))) {
    round.metadata = (await sources.catalog.loadTable(sources.table)).metadata
  }
  return writeStatusReport({ ...message, body: resolved }, (entry) => dataFileOf(round, entry))
}

/** A status of another round, for the machine to report as ignored: its files are not read. */
export function unreadWriteStatus(message: ControlMessage<WriteStatus>): WriteStatusReport {
  const partitions = message.body.partitions.map((status) => ({ ...status, files: [] }))
  const rotations = message.body.rotations?.map((rotation) => ({ ...rotation, files: [] }))
  const { filesPointer: _unread, ...rest } = message.body
  const body: WriteStatus = { ...rest, partitions, ...(rotations ? { rotations } : {}) }
  return writeStatusReport({ ...message, body }, (entry) => {
    throw new FloeError('INVARIANT_BROKEN', `data file ${entry.filePath} converted for a status that was not read`)
  })
}

/**
 * The status as `error` answers for every partition it names: they count as answered (the round
 * need not wait for them), are not committed, and their files are reported again next round.
 */
export function unreadableWriteStatus(message: ControlMessage<WriteStatus>, error: unknown): WriteStatusReport {
  return {
    commitId: message.commitId,
    sender: { ...message.sender },
    statuses: message.body.partitions.map(({ topic, partition }) => ({
      kind: 'error' as const,
      topic,
      partition,
      message: `files unreadable: ${messageOf(error)}`,
    })),
  }
}

function dataFileOf(round: RoundTable, entry: DataFileEntry): DataFile {
  let type = round.partitionTypes.get(entry.specId)
  if (!type) {
    const spec = specById(round.metadata, entry.specId)
    if (!spec) {
      throw new FloeError(
        'PROTOCOL_UNDECODABLE',
        `data file ${entry.filePath}: the table has no spec ${entry.specId}`,
        {
          details: { filePath: entry.filePath, specId: entry.specId, reason: 'unknown-spec' },
        },
      )
    }
    type = partitionType(spec, currentSchema(round.metadata))
    round.partitionTypes.set(entry.specId, type)
  }
  return toDataFile(entry, type)
}
