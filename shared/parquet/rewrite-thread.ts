// The body of a rewrite thread (file-rewriter.ts): reads each source file it is handed as rows of
// the schema, one row group at a time, into the file being written, and closes that file once it
// reaches the target. A failure goes back as the FloeError's parts, which the caller rebuilds.
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { parentPort } from 'node:worker_threads'
import { FloeError, isFloeError } from '../errors.ts'
import type { DataFileWriter } from './data-file.ts'
import { openDataFileReader } from './data-file-reader.ts'
import { openDataFile } from './data-file-writer.ts'
import type { FileRewriterOptions, RewriteReply, RewriteTask, RewrittenFile } from './file-rewriter.ts'

let options: Omit<FileRewriterOptions, 'heapLimitBytes'> | undefined
let open: { writer: DataFileWriter; localPath: string } | undefined

async function closeOpen(closed: RewrittenFile[]): Promise<void> {
  if (!open) return
  const { writer, localPath } = open
  open = undefined
  closed.push({ localPath, metrics: await writer.close() })
}

async function handle(task: RewriteTask): Promise<RewrittenFile[]> {
  if (task.kind === 'open') {
    options = task.options
    return []
  }
  if (!options) throw new FloeError('INVARIANT_BROKEN', 'rewrite thread used before it was opened')
  const closed: RewrittenFile[] = []
  if (task.kind === 'finish') {
    await closeOpen(closed)
    return closed
  }
  const reader = openDataFileReader(
    new Uint8Array(task.bytes, task.byteOffset, task.byteLength),
    options.schema,
    task.where,
  )
  if (BigInt(reader.recordCount) !== task.expectedRows) {
    throw new FloeError(
      'CONVERSION_FAILED',
      `${task.where} holds ${reader.recordCount} rows, its manifest says ${task.expectedRows}`,
      { details: { where: task.where } },
    )
  }
  for (let i = 0; i < reader.rowGroupCount; i++) {
    if (!open) {
      const localPath = join(options.directory, `${randomUUID()}.parquet`)
      const { schema, codec, rowGroupRows } = options
      const writer = await openDataFile({ path: localPath, schema, codec, ...(rowGroupRows ? { rowGroupRows } : {}) })
      open = { writer, localPath }
    }
    await open.writer.append(await reader.readRowGroup(i))
    if (open.writer.writtenBytes >= options.targetBytes) await closeOpen(closed)
  }
  return closed
}

// tasks come one at a time: the caller waits for each answer before it sends the next
parentPort?.on('message', (task: RewriteTask) => {
  handle(task).then(
    (closed) => parentPort?.postMessage({ ok: true, closed } satisfies RewriteReply),
    (error: unknown) => {
      const floe = isFloeError(error) ? error : new FloeError('INTERNAL_ERROR', 'rewrite failed', { cause: error })
      const message = floe.cause instanceof Error ? `${floe.message}: ${floe.cause.message}` : floe.message
      const reply: RewriteReply = { ok: false, failure: { code: floe.code, message, details: floe.details } }
      parentPort?.postMessage(reply)
    },
  )
})
