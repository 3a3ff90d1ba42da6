// Parquet files rewritten into others of about a target size, on a thread of its own: the rows of
// each source file are read back as rows of a schema (data-file-reader.ts) and written through
// Floe's data-file writer, a new file starting once the one being written reaches the target.
//
// Why a thread: a rewrite is CPU-bound decoding and encoding for minutes, which on the main thread
// would hold up a worker's record loop beside it; and V8 lets a heap grow with garbage far past
// what a rewrite holds live (a gigabyte of small files rewritten in-process peaked at 627 MiB
// RSS), while a thread's heap takes a hard limit (`resourceLimits`) and collects within it. The
// caller hands each source file's bytes over (transferred, not copied) and gets the closed files
// back as local paths and metrics, to upload.
import { rm } from 'node:fs/promises'
import { Worker } from 'node:worker_threads'
import { type ErrorCode, errorCodes, FloeError } from '../errors.ts'
import type { Schema } from '../iceberg/index.ts'
import type { DataFileCodec } from './codecs.ts'
import type { DataFileMetrics } from './metrics.ts'

export interface FileRewriterOptions {
  schema: Schema
  codec: DataFileCodec
  /** A file is closed once this many bytes of it are written. */
  targetBytes: number
  /** Where the new files are written. */
  directory: string
  /** The thread's heap (old generation) limit; 192 MiB by default. */
  heapLimitBytes?: number
  /** Rows of a row group at the most (the data-file writer's default otherwise). */
  rowGroupRows?: number
}

export interface RewrittenFile {
  localPath: string
  metrics: DataFileMetrics
}

/** @internal messages to the thread */
export type RewriteTask =
  | { kind: 'open'; options: Omit<FileRewriterOptions, 'heapLimitBytes'> }
  | { kind: 'add'; bytes: ArrayBuffer; byteOffset: number; byteLength: number; where: string; expectedRows: bigint }
  | { kind: 'finish' }

/** @internal the thread's answer to each task */
export type RewriteReply =
  | { ok: true; closed: RewrittenFile[] }
  | { ok: false; failure: { code: string; message: string; details: Readonly<Record<string, unknown>> } }

const threadModule = new URL('./rewrite-thread.ts', import.meta.url)
const MiB = 1024 * 1024

export class FileRewriter {
  readonly #worker: Worker
  readonly #written: string[] = []
  #pending: { resolve: (reply: RewriteReply) => void; reject: (error: unknown) => void } | undefined
  #exit: FloeError | undefined

  private constructor(worker: Worker) {
    this.#worker = worker
    worker.on('message', (reply: RewriteReply) => {
      const pending = this.#pending
      this.#pending = undefined
      pending?.resolve(reply)
    })
    const fail = (error: unknown) => {
      this.#exit ??= new FloeError('INTERNAL_ERROR', `the rewrite thread stopped: ${String(error)}`, { cause: error })
      this.#pending?.reject(this.#exit)
      this.#pending = undefined
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(`exit code ${code}`))
  }

  static async start(options: FileRewriterOptions): Promise<FileRewriter> {
    const heap = Math.max(32, Math.round((options.heapLimitBytes ?? 192 * MiB) / MiB))
    const worker = new Worker(threadModule, {
      resourceLimits: { maxOldGenerationSizeMb: heap, maxYoungGenerationSizeMb: 16 },
    })
    const rewriter = new FileRewriter(worker)
    const { heapLimitBytes: _, ...open } = options
    await rewriter.#send({ kind: 'open', options: open })
    return rewriter
  }

  /** Passes on the rows of one source file; its bytes move to the thread. Answers the files closed meanwhile. */
  add(bytes: Uint8Array, where: string, expectedRows: bigint): Promise<RewrittenFile[]> {
    // a Buffer's slice() is a view: Uint8Array's own copies, so only these bytes move
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    const owned = whole ? bytes : Uint8Array.prototype.slice.call(bytes)
    const buffer = owned.buffer as ArrayBuffer
    return this.#send(
      { kind: 'add', bytes: buffer, byteOffset: 0, byteLength: owned.byteLength, where, expectedRows },
      [buffer],
    )
  }

  /** Closes the file being written; answers it, if it holds rows. */
  finish(): Promise<RewrittenFile[]> {
    return this.#send({ kind: 'finish' })
  }

  /** Stops the thread. With `discard`, every file it wrote is deleted. */
  async close(discard = false): Promise<void> {
    await this.#worker.terminate()
    if (discard) await Promise.all(this.#written.map((path) => rm(path, { force: true })))
  }

  async #send(task: RewriteTask, transfer: ArrayBuffer[] = []): Promise<RewrittenFile[]> {
    if (this.#exit) throw this.#exit
    const reply = await new Promise<RewriteReply>((resolve, reject) => {
      this.#pending = { resolve, reject }
      this.#worker.postMessage(task, transfer)
    })
    if (!reply.ok) {
      const { code, message, details } = reply.failure
      throw new FloeError((code in errorCodes ? code : 'INTERNAL_ERROR') as ErrorCode, message, { details })
    }
    for (const file of reply.closed) this.#written.push(file.localPath)
    return reply.closed
  }
}
