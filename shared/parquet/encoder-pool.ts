// Encoder threads: Parquet encoding and compression of row groups off the main thread, so a worker
// uses a second core while its main thread keeps fetching, decoding and buffering records.
//
// Why row groups and not whole files per thread: measured on the participant benchmark (1 KB
// events, 12 columns, zstd, 2-core box), the main thread spends about 42 % of its CPU on decode,
// 19 % encoding and compressing row groups, 3.5 % buffering rows into columns, the rest in the
// Kafka client and GC (docs/benchmarks.md). Handing a full row group's column arrays over once
// costs a structured clone of its values, far less than posting every batch of rows to a thread
// that buffers them, and it leaves the buffering, the memory estimate, the file's footer and its
// sink on the main thread unchanged.
//
// Tasks run first come, first served on whichever thread is free; a file has at most one group in
// flight (data-file-writer.ts), which keeps its groups in order. A thread that dies takes no data
// with it: its task is encoded on the main thread instead (the same code, the same bytes) and the
// thread is replaced. An idle thread is unref'd: a pool nobody closed does not hold the process open.
import { Worker } from 'node:worker_threads'
import { type ErrorCode, errorCodes, FloeError } from '../errors.ts'
import type { IcebergValue } from '../iceberg/index.ts'
import { type EncodedRowGroup, RowGroupEncoder, type RowGroupEncoding } from './row-group-encoder.ts'

/**
 * Each encoder thread's heap. V8 lets a heap grow with garbage far past what it holds live, while a
 * thread's heap takes a hard limit and collects within it. A task holds one row group (at most
 * 16 MiB as the writer counts it, about three times that as V8 holds it) and its encoded pages:
 * 256 MiB of old space holds that several times over, and a thread that runs out anyway dies, is
 * replaced, and its group is encoded on the main thread. Measured with the scale benchmark
 * (1,000,000 events, 4 partitions, shared layout, alternating): peak RSS 962-1,020 MiB without a
 * limit, 779-782 MiB with this one, events per CPU-second the same within the noise; a 16 MiB young
 * generation instead of 64 MiB kept the RSS (727-729 MiB) but cost about 18 % of the CPU.
 */
const THREAD_HEAP = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 64 }

/** Where a data file writer has its row groups encoded (encoders off: on its own thread). */
export interface RowGroupEncoders {
  encode(encoding: EncodingHandle, columns: IcebergValue[][], rowCount: number): Promise<EncodedRowGroup>
  /**
   * The caller is about to wait for `group`: if no thread has started it yet, it is encoded now
   * with `encoder`, on the calling thread, rather than left waiting in the queue.
   */
  hurry(group: Promise<EncodedRowGroup>, encoder: RowGroupEncoder): void
}

/** A file's encoding settings with their JSON, computed once per file rather than per group. */
export interface EncodingHandle {
  encoding: RowGroupEncoding
  key: string
}

export function encodingHandle(encoding: RowGroupEncoding): EncodingHandle {
  return { encoding, key: JSON.stringify(encoding) }
}

/** @internal the message to a thread */
export interface EncodeTask {
  id: number
  encoding: RowGroupEncoding
  encodingKey: string
  columns: IcebergValue[][]
  rowCount: number
}

/** @internal the thread's answer */
export type EncodeReply =
  | { id: number; group: EncodedRowGroup; failure?: undefined }
  | {
      id: number
      group?: undefined
      failure: { code: string; message: string; details: Readonly<Record<string, unknown>>; cause?: string | undefined }
    }

interface Pending {
  promise: Promise<EncodedRowGroup> | undefined
  task: EncodeTask
  resolve: (group: EncodedRowGroup) => void
  reject: (error: unknown) => void
}

interface Slot {
  worker: Worker
  running: Pending | undefined
}

export interface EncoderPoolOptions {
  /** Encoder threads, at least 1. */
  threads: number
  /** The thread's module; tests hand in one that misbehaves. */
  threadModule?: URL
  /** Told when a thread died and was replaced (for the log). */
  onThreadExit?: (event: { threadId: number; exitCode: number; error?: unknown }) => void
}

export class EncoderPool implements RowGroupEncoders {
  readonly #threadModule: URL
  readonly #onThreadExit: EncoderPoolOptions['onThreadExit']
  readonly #slots: Slot[] = []
  readonly #queue: Pending[] = []
  #nextId = 0
  #closed = false
  #replaced = 0
  #drained: (() => void) | undefined

  constructor(options: EncoderPoolOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1) {
      throw new FloeError('CONFIG_INVALID', 'an encoder pool needs at least one thread', {
        details: { threads: options.threads },
      })
    }
    this.#threadModule = options.threadModule ?? new URL('./encoder-thread.ts', import.meta.url)
    this.#onThreadExit = options.onThreadExit
    for (let i = 0; i < options.threads; i++) this.#slots.push(this.#spawn())
  }

  get threads(): number {
    return this.#slots.length
  }

  /** Threads that died and were replaced since the pool started. */
  get replacedThreads(): number {
    return this.#replaced
  }

  /**
   * Encodes on a free thread. Rejects with the FloeError the main-thread encoder would throw
   * (RECORD_MALFORMED for a value that does not fit its column); after close() it encodes here.
   */
  encode(handle: EncodingHandle, columns: IcebergValue[][], rowCount: number): Promise<EncodedRowGroup> {
    const task: EncodeTask = {
      id: this.#nextId++,
      encoding: handle.encoding,
      encodingKey: handle.key,
      columns,
      rowCount,
    }
    if (this.#closed) return encodeHere(task)
    let pending: Pending | undefined
    const promise = new Promise<EncodedRowGroup>((resolve, reject) => {
      pending = { promise: undefined, task, resolve, reject }
    })
    ;(pending as Pending).promise = promise
    this.#queue.push(pending as Pending)
    this.#dispatch()
    return promise
  }

  /**
   * A file whose next group is full while its previous one still waits for a thread, or that is
   * closing: the threads are behind, and the main thread encoding the group itself beats idling.
   */
  hurry(group: Promise<EncodedRowGroup>, encoder: RowGroupEncoder): void {
    const index = this.#queue.findIndex((pending) => pending.promise === group)
    if (index < 0) return
    const [pending] = this.#queue.splice(index, 1) as [Pending]
    try {
      pending.resolve(encoder.encode(pending.task.columns, pending.task.rowCount))
    } catch (error) {
      pending.reject(error)
    }
    this.#dispatch()
  }

  /** Lets queued and running groups finish, then ends every thread. Later encodes run on this thread. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    if (this.#queue.length > 0 || this.#slots.some((slot) => slot.running)) {
      await new Promise<void>((resolve) => {
        this.#drained = resolve
      })
    }
    await Promise.all(this.#slots.map((slot) => slot.worker.terminate()))
    this.#slots.length = 0
  }

  #spawn(): Slot {
    const worker = new Worker(this.#threadModule, { resourceLimits: THREAD_HEAP })
    worker.unref()
    const slot: Slot = { worker, running: undefined }
    let failure: unknown
    worker.on('message', (reply: EncodeReply) => this.#settle(slot, reply))
    worker.on('error', (error) => {
      failure = error
    })
    worker.on('exit', (exitCode) => this.#lost(slot, exitCode, failure))
    return slot
  }

  #dispatch(): void {
    // every thread died after close(): what is left is encoded here rather than waiting forever
    if (this.#slots.length === 0) {
      for (const left of this.#queue.splice(0)) encodeHere(left.task).then(left.resolve, left.reject)
    }
    for (const slot of this.#slots) {
      if (this.#queue.length === 0) break
      if (slot.running) continue
      const next = this.#queue.shift() as Pending
      slot.running = next
      // a thread holds the process open only while it has a task, as a pending I/O does
      slot.worker.ref()
      slot.worker.postMessage(next.task)
    }
    if (this.#drained && this.#queue.length === 0 && !this.#slots.some((slot) => slot.running)) {
      this.#drained()
      this.#drained = undefined
    }
  }

  #settle(slot: Slot, reply: EncodeReply): void {
    const running = slot.running
    if (running?.task.id !== reply.id) return
    slot.running = undefined
    slot.worker.unref()
    if (reply.group) running.resolve(reply.group)
    else running.reject(rebuilt(reply.failure))
    this.#dispatch()
  }

  /** A thread ended: expected after close(), otherwise it crashed and its task is encoded here. */
  #lost(slot: Slot, exitCode: number, error: unknown): void {
    const index = this.#slots.indexOf(slot)
    if (index < 0) return
    const running = slot.running
    slot.running = undefined
    if (this.#closed && !running) return
    this.#replaced++
    this.#onThreadExit?.({ threadId: slot.worker.threadId, exitCode, error })
    if (this.#closed) this.#slots.splice(index, 1)
    else this.#slots[index] = this.#spawn()
    if (running) encodeHere(running.task).then(running.resolve, running.reject)
    this.#dispatch()
  }
}

/** The fallback when no thread can: the same encoder, on the calling thread. */
async function encodeHere(task: EncodeTask): Promise<EncodedRowGroup> {
  return new RowGroupEncoder(task.encoding).encode(task.columns, task.rowCount)
}

function rebuilt(failure: NonNullable<EncodeReply['failure']>): FloeError {
  const code = (failure.code in errorCodes ? failure.code : 'INTERNAL_ERROR') as ErrorCode
  return new FloeError(code, failure.message, {
    details: { ...failure.details },
    cause: failure.cause === undefined ? undefined : new Error(failure.cause),
  })
}
