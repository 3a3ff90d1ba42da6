// Durable file operations of the WAL. A rename or unlink is durable only once the directory that
// holds the entry is fsynced, and a file's content only once the file is; every step that
// recovery relies on goes through here.
import { type FileHandle, open, readdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { FloeError, isFloeError } from '../../shared/index.ts'

export function storageError(message: string, path: string, cause: unknown): FloeError {
  if (isFloeError(cause)) return cause
  const code = (cause as { code?: unknown } | null)?.code
  return new FloeError('STORAGE_UNAVAILABLE', `${message} ${path}`, {
    cause,
    details: { path, code: typeof code === 'string' ? code : undefined },
  })
}

/** The names in a WAL directory; one that does not exist (nothing written yet) holds none. */
export async function listWalDirectory(dir: string): Promise<string[]> {
  try {
    return await readdir(dir)
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return []
    throw storageError('cannot list WAL directory', dir, error)
  }
}

export async function fsyncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined
  try {
    handle = await open(dir, 'r')
    await handle.sync()
  } catch (error) {
    throw storageError('cannot fsync WAL directory', dir, error)
  } finally {
    await handle?.close().catch(() => {})
  }
}

/** Writes a new file (or truncates one) and fsyncs it; the directory entry is the caller's to fsync. */
export async function writeFileDurably(path: string, bytes: Uint8Array): Promise<void> {
  let handle: FileHandle | undefined
  try {
    handle = await open(path, 'w')
    let done = 0
    while (done < bytes.byteLength) {
      const { bytesWritten } = await handle.write(bytes, done, bytes.byteLength - done)
      done += bytesWritten
    }
    await handle.sync()
  } catch (error) {
    throw storageError('cannot write WAL file', path, error)
  } finally {
    await handle?.close().catch(() => {})
  }
}

/** Replaces a file atomically: a crash leaves the old content or the new, never a mix. */
export async function replaceFileDurably(dir: string, name: string, temporaryName: string, bytes: Uint8Array) {
  const temporary = join(dir, temporaryName)
  await writeFileDurably(temporary, bytes)
  try {
    await rename(temporary, join(dir, name))
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {})
    throw storageError('cannot rename WAL file', join(dir, name), error)
  }
  await fsyncDirectory(dir)
}

export async function renameDurably(from: string, to: string): Promise<void> {
  try {
    await rename(from, to)
  } catch (error) {
    throw storageError('cannot rename WAL file', from, error)
  }
}

/**
 * Deletes WAL files, every `.json` (and staged `.json.tmp`) first and durably, then the rest.
 * That order is what lets recovery tell a rotation whose deletion was cut short from a whole
 * one: a half-deleted rotation always leaves a `.parquet` without its `.json`.
 */
export async function deleteWalFiles(dir: string, names: readonly string[]): Promise<void> {
  if (names.length === 0) return
  const sidecars = names.filter((name) => name.endsWith('.json') || name.endsWith('.json.tmp'))
  const others = names.filter((name) => !(name.endsWith('.json') || name.endsWith('.json.tmp')))
  for (const group of [sidecars, others]) {
    if (group.length === 0) continue
    await Promise.all(
      group.map(async (name) => {
        try {
          await rm(join(dir, name), { force: true })
        } catch (error) {
          throw storageError('cannot delete WAL file', join(dir, name), error)
        }
      }),
    )
    await fsyncDirectory(dir)
  }
}
