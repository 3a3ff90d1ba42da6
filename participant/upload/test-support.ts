// Helpers for this folder's tests (and integration/upload) only: temporary directories that clean
// up after themselves, and real ready segments written with shared/parquet, as the WAL writes them.
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import type { Schema, StructValue } from '../../shared/iceberg/index.ts'
import { type BloomFilterColumn, openDataFile, toDataFile } from '../../shared/parquet/index.ts'
import type { ReadySegment } from './segment.ts'

export async function temporaryDirectory(t: Pick<TestContext, 'after'>, prefix = 'floe-upload-'): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), prefix))
  t.after(() => rm(directory, { recursive: true, force: true }))
  return directory
}

/** name (string, id 1), user_id (long, id 2), amount (double, id 3). */
export const eventSchema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'name', required: false, type: 'string' },
    { id: 2, name: 'user_id', required: false, type: 'long' },
    { id: 3, name: 'amount', required: false, type: 'double' },
  ],
}

export const eventRow = (i: number): StructValue => ({
  name: `user-${i}`,
  user_id: BigInt(i) * 7919n - 5n,
  amount: i / 4,
})

export interface SegmentOptions {
  rows: number
  rowGroupRows?: number
  bloomFilters?: readonly BloomFilterColumn[]
  partitionPath?: string
  schema?: Schema
  row?: (i: number) => StructValue
}

/** Writes a ready segment file into `directory` and describes it as the WAL would. */
export async function writeSegment(directory: string, options: SegmentOptions): Promise<ReadySegment> {
  const uuid = randomUUID()
  const localPath = join(directory, `ready_events_0_0-${options.rows}_${uuid}.parquet`)
  const schema = options.schema ?? eventSchema
  const row = options.row ?? eventRow
  const writer = await openDataFile({
    path: localPath,
    schema,
    rowGroupRows: options.rowGroupRows ?? 10_000,
    bloomFilters: options.bloomFilters ?? [],
  })
  const batch = 10_000
  for (let first = 0; first < options.rows; first += batch) {
    const count = Math.min(batch, options.rows - first)
    await writer.append(Array.from({ length: count }, (_, k) => row(first + k)))
  }
  const metrics = await writer.close()
  const { filePath: _, ...dataFile } = toDataFile(metrics, { filePath: '', schema, specId: 0, partition: {} })
  return {
    uuid,
    localPath,
    topic: 'events',
    partition: 0,
    start: 0n,
    end: BigInt(options.rows),
    partitionPath: options.partitionPath ?? '',
    dataFile,
    bloomFilters: metrics.bloomFilters,
    sizeBytes: (await stat(localPath)).size,
  }
}
