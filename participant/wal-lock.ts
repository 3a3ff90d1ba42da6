// One WAL directory, one worker. Two workers on one directory would take each other's segments
// for their own (recovery deletes the other's open files, reuses or sweeps its ready files), so a
// worker locks the directory before anything else and a second one refuses to start, naming the
// directory and the owner. The lock is a file holding the owner's pid, host and worker id; it is
// made whole under a temporary name and then linked into place, which fails atomically when a
// lock exists, so a lock is never seen half written. A lock whose pid is dead on this host is
// stale (the owner crashed or was killed) and is taken over, with a log line.
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { FloeError } from '../shared/index.ts'

export const WAL_LOCK_FILE = 'floe.lock'

export interface WalLockOwner {
  pid: number
  host: string
  workerId: string
  since: string
}

export interface WalLockOptions {
  workerId: string
  logger: { warn(details: Record<string, unknown>, message: string): void }
  pid?: number
  host?: string
  /** Whether a pid on this host is alive; default: signal 0. */
  alive?: (pid: number) => boolean
}

export interface WalLock {
  readonly path: string
  readonly owner: WalLockOwner
  /** Removes the lock if it is still this worker's. */
  release(): Promise<void>
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export async function lockWalDir(dir: string, options: WalLockOptions): Promise<WalLock> {
  await mkdir(dir, { recursive: true })
  const path = join(dir, WAL_LOCK_FILE)
  const owner: WalLockOwner = {
    pid: options.pid ?? process.pid,
    host: options.host ?? hostname(),
    workerId: options.workerId,
    since: new Date().toISOString(),
  }
  const alive = options.alive ?? processAlive
  const staging = `${path}.${owner.pid}.${Date.now()}.tmp`
  await writeFile(staging, `${JSON.stringify(owner)}\n`, { flush: true })
  try {
    // Twice at most: once more after taking over a stale lock.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await link(staging, path)
        return lockOf(path, owner)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      const holder = await readOwner(path)
      if (holder === undefined) continue // released meanwhile
      if (holder === 'unreadable') {
        throw new FloeError(
          'WAL_IN_USE',
          `WAL directory ${dir} has a lock file ${path} that is not Floe's; remove it if no worker uses the directory`,
          { details: { dir, lock: path } },
        )
      }
      if (holder.host !== owner.host || alive(holder.pid)) {
        throw new FloeError(
          'WAL_IN_USE',
          `WAL directory ${dir} is in use by worker ${holder.workerId} (pid ${holder.pid} on ${holder.host}, since ${holder.since})`,
          { details: { dir, owner: holder } },
        )
      }
      options.logger.warn(
        { dir, stale: holder },
        `taking over the WAL lock of worker ${holder.workerId}: pid ${holder.pid} is not running on this host`,
      )
      await unlink(path).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
    }
    throw new FloeError('WAL_IN_USE', `WAL directory ${dir}: another worker took its lock at the same moment`, {
      details: { dir },
    })
  } finally {
    await unlink(staging).catch(() => {})
  }
}

async function readOwner(path: string): Promise<WalLockOwner | 'unreadable' | undefined> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const parsed = JSON.parse(text) as Partial<WalLockOwner>
    if (typeof parsed.pid === 'number' && typeof parsed.host === 'string') {
      return {
        pid: parsed.pid,
        host: parsed.host,
        workerId: String(parsed.workerId ?? 'unknown'),
        since: String(parsed.since ?? 'unknown'),
      }
    }
  } catch {
    // falls through
  }
  return 'unreadable'
}

function lockOf(path: string, owner: WalLockOwner): WalLock {
  return {
    path,
    owner,
    release: async () => {
      const holder = await readOwner(path).catch(() => undefined)
      if (typeof holder === 'object' && holder.pid === owner.pid && holder.host === owner.host) {
        await unlink(path).catch(() => {})
      }
    },
  }
}
