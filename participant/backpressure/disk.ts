// How full the WAL volume is, in percent: what the disk watermark of the backpressure monitor
// compares. Two ways to measure:
// - the filesystem's own figures (statfs of the WAL directory), as `df` computes them;
// - with a configured volume size, the bytes of the files under the WAL directory against that
//   size: for a WAL on a shared filesystem with a quota of its own, and for tests that need a
//   "full disk" without filling one.
import type { Dirent } from 'node:fs'
import { lstat, readdir, statfs } from 'node:fs/promises'
import { join } from 'node:path'
import { FloeError } from '../../shared/index.ts'

export interface WalVolumeOptions {
  /** Measure against this many bytes instead of the filesystem's size. */
  volumeSizeBytes?: number
}

/** A probe of the WAL volume's used percentage (0-100; above 100 when a configured size is exceeded). */
export type DiskUsageProbe = () => Promise<number>

export function walDiskUsage(walDir: string, options: WalVolumeOptions = {}): DiskUsageProbe {
  const size = options.volumeSizeBytes
  if (size === undefined) return () => filesystemUsedPct(walDir)
  if (!(size > 0))
    throw new FloeError('CONFIG_INVALID', `WAL volume size must be a positive number of bytes, got ${size}`)
  return async () => ((await bytesUnder(walDir)) / size) * 100
}

/**
 * `df`'s Use%: used / (used + available to unprivileged users). Blocks reserved for root count as
 * neither, so a volume at 100% here is full for Floe even though root could still write.
 */
async function filesystemUsedPct(walDir: string): Promise<number> {
  const fs = await statfs(walDir, { bigint: true })
  const used = fs.blocks - fs.bfree
  const usable = used + fs.bavail
  if (usable === 0n) return 100
  // Percent with two decimals, in bigint so huge volumes lose nothing before the division.
  return Number((used * 10_000n) / usable) / 100
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT'
}

/**
 * The apparent size of every file under `dir`, recursively (symbolic links not followed). One
 * readdir per directory and one lstat per file: the WAL holds a few files per open segment, so this
 * stays small. Files and directories that vanish during the walk (a segment renamed at rotation,
 * deleted after an ACK) are skipped; the next measurement sees the new state. A missing `dir`
 * holds 0 bytes.
 */
export async function bytesUnder(dir: string): Promise<number> {
  let entries: Dirent[]
  try {
    entries = await readdir(dir, { withFileTypes: true })
  } catch (error) {
    if (isNotFound(error)) return 0
    throw error
  }
  const sizes = await Promise.all(
    entries.map(async (entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return bytesUnder(path)
      if (!entry.isFile()) return 0
      try {
        return (await lstat(path)).size
      } catch (error) {
        if (isNotFound(error)) return 0
        throw error
      }
    }),
  )
  let total = 0
  for (const size of sizes) total += size
  return total
}
