// Where a data file's bytes go as each row group is encoded: a local file (the WAL segment) or
// any async byte sink (a Node Writable, a block-staging upload). hyparquet-writer encodes a row
// group into its in-memory buffer and then awaits `flush()`; the buffer is handed to the sink and
// then let go (SinkByteWriter), so at most one encoded row group is held at a time, and only
// while it is written.
import { type FileHandle, open, rm } from 'node:fs/promises'
import type { Writable } from 'node:stream'
import { finished } from 'node:stream/promises'
import { ByteWriter } from 'hyparquet-writer'
import { FloeError, isFloeError } from '../errors.ts'

export interface ByteSink {
  /**
   * Appends bytes. The view is valid only until the returned promise settles (the writer reuses
   * its buffer afterwards), so a sink that keeps a reference must copy.
   */
  write(bytes: Uint8Array): Promise<void>
  /** Makes everything written durable (fsync for a file), then releases the sink. */
  close(): Promise<void>
  /** Releases the sink and discards what was written, as far as the sink can. */
  abort(): Promise<void>
}

/** Creates the file (failing if it exists); close() fsyncs it, abort() deletes it. */
export async function fileSink(path: string): Promise<ByteSink> {
  let handle: FileHandle
  try {
    handle = await open(path, 'wx')
  } catch (error) {
    throw storageError('cannot create data file', path, error)
  }
  return {
    async write(bytes) {
      try {
        let done = 0
        while (done < bytes.byteLength) {
          const { bytesWritten } = await handle.write(bytes, done, bytes.byteLength - done)
          done += bytesWritten
        }
      } catch (error) {
        throw storageError('cannot write data file', path, error)
      }
    },
    async close() {
      try {
        await handle.sync()
        await handle.close()
      } catch (error) {
        await handle.close().catch(() => {})
        throw storageError('cannot fsync data file', path, error)
      }
    },
    async abort() {
      await handle.close().catch(() => {})
      await rm(path, { force: true })
    },
  }
}

/** Writes to a Node Writable, waiting for each chunk to be taken (backpressure); close() ends it. */
export function writableSink(stream: Writable): ByteSink {
  // a stream error reaches the pending write's callback or finished(); this listener only keeps
  // an 'error' event from becoming an uncaught exception
  stream.on('error', () => {})
  return {
    write(bytes) {
      // copied: a Writable may hold on to the chunk (a PassThrough hands it on) after its callback
      const chunk = Buffer.from(bytes)
      return new Promise((resolve, reject) => {
        stream.write(chunk, (error) => (error ? reject(storageError('cannot write to stream', '', error)) : resolve()))
      })
    },
    async close() {
      stream.end()
      try {
        await finished(stream)
      } catch (error) {
        throw storageError('cannot end stream', '', error)
      }
    },
    async abort() {
      stream.destroy()
    },
  }
}

function storageError(message: string, path: string, cause: unknown): FloeError {
  if (isFloeError(cause)) return cause
  const code = (cause as { code?: unknown } | null)?.code
  return new FloeError('STORAGE_UNAVAILABLE', path ? `${message} ${path}` : message, {
    cause,
    details: { path, code: typeof code === 'string' ? code : undefined },
  })
}

/** What an encode buffer starts at, and goes back to after a row group larger than it. */
export const IDLE_ENCODE_BUFFER_BYTES = 8 * 1024

/**
 * hyparquet-writer's Writer over a ByteSink: each flush (one per row group) and the footer go to
 * the sink, and `offset` keeps counting file positions across flushes.
 *
 * Between row groups the buffer is small. A worker holds one writer per open segment (thousands
 * at 1,000 Kafka partitions); a buffer kept at its largest row group's size, or started at a few
 * MiB, is that much resident memory per open file for nothing (measured: 4 MiB per file once
 * its first row group was written). Growing it again costs about one copy of an encoded row
 * group, next to encoding and compressing it.
 */
export class SinkByteWriter extends ByteWriter {
  readonly #sink: ByteSink

  constructor(sink: ByteSink) {
    super(IDLE_ENCODE_BUFFER_BYTES)
    this.#sink = sink
  }

  async flush(): Promise<void> {
    if (this.index === 0) return
    await this.#sink.write(new Uint8Array(this.buffer, 0, this.index))
    this.index = 0
    if (this.buffer.byteLength > IDLE_ENCODE_BUFFER_BYTES) {
      this.buffer = new ArrayBuffer(IDLE_ENCODE_BUFFER_BYTES)
      this.view = new DataView(this.buffer)
    }
  }

  override finish(): Promise<void> {
    return this.flush()
  }

  /** Bytes encoded so far and not yet handed to the sink. */
  get pendingBytes(): number {
    return this.index
  }

  /** The encode buffer's capacity: small between row groups, an encoded row group's size while one is written. */
  get capacity(): number {
    return this.buffer.byteLength
  }
}
