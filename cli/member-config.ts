// What each member of a worker with `ingestion.threads` K >= 2 runs with (docs/architecture.md,
// "Members on threads"): the worker's configuration, with a WAL folder of its own and a K-th of
// every per-worker budget, so that the K members together keep the limits the operator set.
import { join } from 'node:path'
import type { FloeConfig } from '../shared/config/index.ts'

/**
 * `<wal.dir>/_member-<k>`: a dataset's folder is named after the dataset, whose name starts with a
 * letter or a digit, so no dataset folder of a one-member worker is ever taken for a member's.
 */
export function memberWalDir(walDir: string, member: number): string {
  return join(walDir, `_member-${member}`)
}

/** The member's number from its folder's name, or undefined for any other folder. */
export function memberOfFolder(name: string): number | undefined {
  const match = /^_member-(\d+)$/.exec(name)
  return match ? Number(match[1]) : undefined
}

/** The worker id a member joins its groups and signs its control messages with. */
export function memberId(workerId: string, member: number): string {
  return `${workerId}-${member}`
}

export function memberConfigOf(config: FloeConfig, member: number, members: number): FloeConfig {
  const { wal } = config.ingestion
  const share = (bytes: number) => Math.max(1, Math.floor(bytes / members))
  return {
    ...config,
    ingestion: {
      ...config.ingestion,
      threads: 1,
      wal: {
        ...wal,
        dir: memberWalDir(wal.dir, member),
        maxOpenSegmentMemoryBytes: share(wal.maxOpenSegmentMemoryBytes),
        maxPendingUploadBytes: share(wal.maxPendingUploadBytes),
        ...(wal.volumeSizeBytes === undefined ? {} : { volumeSizeBytes: share(wal.volumeSizeBytes) }),
      },
    },
    // the worker's main thread serves /metrics and /readyz for every member
    metrics: { port: 0 },
  }
}
