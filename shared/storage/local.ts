// Objects as files on the local filesystem. A put is atomic and durable: written to a temporary
// name in the same directory, fsynced, renamed over the target, then the directory fsynced, so a
// reader sees the old object or the whole new one, and a crash loses neither.
import { randomUUID } from 'node:crypto'
import { copyFile, mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { FloeError } from '../errors.ts'
import type { ObjectStorage, StorageCallOptions, StoredObject } from './object-storage.ts'

/**
 * The path of a `file:` location. Accepts `file:///p`, Hadoop's `file:/p`, `file://localhost/p`
 * and a bare `/p`. No percent-decoding: Iceberg's Java and Python file IO take the text as is.
 */
export function localPath(location: string): string {
  const match = /^file:(?:\/\/(?:localhost)?(\/.*)|(\/(?!\/).*))$/i.exec(location)
  if (match) return (match[1] ?? match[2])!
  if (location.startsWith('/')) return location
  throw new FloeError('CONFIG_INVALID', `not a local file location: ${location}`, { details: { location } })
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code
}

function failure(error: unknown, operation: string, location: string): unknown {
  if (error instanceof FloeError || (error as Error | undefined)?.name === 'AbortError') return error
  const code = errnoOf(error)
  if (code === 'ENOENT' && operation === 'get') {
    return new FloeError('STORAGE_NOT_FOUND', `no object at ${location}`, { cause: error, details: { location } })
  }
  return new FloeError('STORAGE_UNAVAILABLE', `local storage ${operation} failed for ${location}: ${code ?? 'error'}`, {
    cause: error,
    details: { location, operation, errno: code },
  })
}

const temporaryName = /^\..+\.[0-9a-f-]{36}\.tmp$/

async function fsyncPath(path: string, flags: string): Promise<void> {
  const handle = await open(path, flags)
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

export class LocalFileStorage implements ObjectStorage {
  async put(location: string, bytes: Uint8Array, options: StorageCallOptions = {}): Promise<void> {
    await this.replace(location, async (temporary) => {
      const handle = await open(temporary, 'wx')
      try {
        await handle.writeFile(bytes, { signal: options.signal })
        await handle.sync()
      } finally {
        await handle.close()
      }
    })
  }

  async putFile(location: string, sourcePath: string, options: StorageCallOptions = {}): Promise<void> {
    await this.replace(location, async (temporary) => {
      options.signal?.throwIfAborted()
      // copyFile copies in the kernel (copy_file_range / sendfile): nothing passes through JS memory.
      await copyFile(sourcePath, temporary)
      await fsyncPath(temporary, 'r+')
    })
  }

  private async replace(location: string, write: (temporary: string) => Promise<void>): Promise<void> {
    const path = localPath(location)
    const directory = dirname(path)
    const temporary = join(directory, `.${basename(path)}.${randomUUID()}.tmp`)
    try {
      await mkdir(directory, { recursive: true })
      await write(temporary)
      await rename(temporary, path)
      await fsyncPath(directory, 'r')
    } catch (error) {
      await rm(temporary, { force: true }).catch(() => {})
      throw failure(error, 'put', location)
    }
  }

  async get(location: string, options: StorageCallOptions = {}): Promise<Uint8Array> {
    try {
      const buffer = await readFile(localPath(location), { signal: options.signal })
      return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
    } catch (error) {
      throw failure(error, 'get', location)
    }
  }

  async exists(location: string): Promise<boolean> {
    try {
      return (await stat(localPath(location))).isFile()
    } catch (error) {
      if (errnoOf(error) === 'ENOENT' || errnoOf(error) === 'ENOTDIR') return false
      throw failure(error, 'exists', location)
    }
  }

  async delete(location: string): Promise<boolean> {
    try {
      await unlink(localPath(location))
      return true
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return false
      throw failure(error, 'delete', location)
    }
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    const prefixPath = localPath(prefix)
    // A prefix is a string prefix, as in object stores: "t/da" matches "t/data/x" and "t/dates".
    const start = prefixPath.endsWith('/') ? prefixPath.slice(0, -1) || '/' : dirname(prefixPath)
    const toLocation = (path: string) => prefix + path.slice(prefixPath.length)
    try {
      for await (const path of walk(start)) {
        if (!path.startsWith(prefixPath)) continue
        const info = await stat(path).catch(() => undefined)
        if (info?.isFile())
          yield { location: toLocation(path), size: info.size, lastModified: Math.floor(info.mtimeMs) }
      }
    } catch (error) {
      throw failure(error, 'list', prefix)
    }
  }
}

async function* walk(directory: string): AsyncGenerator<string> {
  let entries: import('node:fs').Dirent[]
  try {
    entries = await readdir(directory, { withFileTypes: true })
  } catch (error) {
    if (errnoOf(error) === 'ENOENT' || errnoOf(error) === 'ENOTDIR') return
    throw error
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of entries) {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) yield* walk(path)
    else if (entry.isFile() && !temporaryName.test(entry.name)) yield path
  }
}
