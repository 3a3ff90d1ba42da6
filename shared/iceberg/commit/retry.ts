// How often and how patiently an append retries, from the table's `commit.retry.*` properties
// (the names and defaults Java's SnapshotProducer reads), and the backoff between attempts.

export interface RetryPolicy {
  /** Attempts after the first. */
  retries: number
  minWaitMs: number
  maxWaitMs: number
  totalTimeoutMs: number
}

function intProperty(properties: Readonly<Record<string, string>>, key: string, fallback: number): number {
  const value = Number(properties[key])
  return properties[key] !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback
}

export function retryPolicy(
  properties: Readonly<Record<string, string>>,
  override: Partial<RetryPolicy> = {},
): RetryPolicy {
  return {
    retries: override.retries ?? intProperty(properties, 'commit.retry.num-retries', 4),
    minWaitMs: override.minWaitMs ?? intProperty(properties, 'commit.retry.min-wait-ms', 100),
    maxWaitMs: override.maxWaitMs ?? intProperty(properties, 'commit.retry.max-wait-ms', 60_000),
    totalTimeoutMs: override.totalTimeoutMs ?? intProperty(properties, 'commit.retry.total-timeout-ms', 1_800_000),
  }
}

/**
 * Exponential backoff with full jitter: the wait before attempt `attempt` (1 = the first retry)
 * is uniform in [min, min * 2^(attempt-1)], capped at max. Jitter keeps two coordinators that
 * collided from colliding again in lockstep.
 */
export function backoffMs(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxWaitMs, policy.minWaitMs * 2 ** Math.max(0, attempt - 1))
  return Math.round(policy.minWaitMs + random() * Math.max(0, ceiling - policy.minWaitMs))
}
