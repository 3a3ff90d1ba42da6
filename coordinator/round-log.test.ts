import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createMetrics } from '../shared/telemetry/index.ts'
import { planCommit } from './commit-content.ts'
import { RoundLog } from './round-log.ts'
import { group, tableWith, written } from './test-fixtures.ts'

function harness() {
  const metrics = createMetrics({ defaultMetrics: false })
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = []
  const at = (level: string) => (fields: Record<string, unknown>, message: string) =>
    lines.push({ level, message, fields })
  const logger = { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') }
  const log = new RoundLog({ dataset: 'events', logger, metrics, now: () => 10_000 })
  const rounds = async () => (await metrics.rounds.get()).values.map((v) => [v.labels.outcome, v.value])
  return { log, lines, rounds }
}

const silent = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} }

describe("a coordinator's round log", () => {
  test('a commit whose outcome is unknown is a warning counted as unknown, not a failure', async () => {
    const { log, lines, rounds } = harness()
    log.emitted({
      type: 'round.failed',
      commitId: 'c1',
      phase: 'committing',
      error: { code: 'COMMIT_STATE_UNKNOWN', retryable: true, message: 'no answer' },
      consecutiveFailures: 1,
    })
    assert.deepEqual(await rounds(), [['unknown', 1]])
    assert.deepEqual(
      lines.map((l) => [l.level, l.message]),
      [['warn', 'round outcome unknown; later rounds look for its commit']],
    )
  })

  test('any other failure is an error line counted as failed', async () => {
    const { log, lines, rounds } = harness()
    log.emitted({
      type: 'round.failed',
      commitId: 'c1',
      phase: 'starting',
      error: { code: 'CATALOG_UNAVAILABLE', retryable: true, message: 'down' },
      consecutiveFailures: 2,
    })
    assert.deepEqual(await rounds(), [['failed', 1]])
    assert.equal(lines[0]?.level, 'error')
    assert.equal(lines[0]?.fields['dataset'], 'events')
  })

  test('the stop of a coordinator is one line with its reason', () => {
    const { log, lines } = harness()
    log.emitted({ type: 'coordinator.stopped', reason: 'partition 0 moved', commitId: undefined })
    assert.deepEqual(lines[0]?.fields, { dataset: 'events', reason: 'partition 0 moved', commitId: undefined })
  })

  test('a committed round counts its records, data files and their bytes, once', async () => {
    const metrics = createMetrics({ defaultMetrics: false })
    const log = new RoundLog({ dataset: 'events', logger: silent, metrics, now: () => 10_000 })
    const statuses = [
      written(0, 0n, 10n, { files: ['a', 'b'], origin: 'offset-reset' }),
      written(1, 0n, 10n, { origin: 'offset-reset' }),
    ]
    const plan = planCommit(tableWith([]), { group, commitId: 'c1', statuses, partial: false })
    const output = {
      kind: 'committed' as const,
      snapshotId: 1n,
      plan,
      attempts: 1,
      foundAfterUnknownOutcome: false,
      committedAt: 0,
    }
    log.commitOutput(output)
    log.commitOutput(output)
    const value = async (counter: { get(): Promise<{ values: { value: number }[] }> }) =>
      (await counter.get()).values[0]?.value
    // dataFile(): 10 records, 1010 bytes each
    assert.equal(await value(metrics.recordsCommitted), 30)
    assert.equal(await value(metrics.dataFilesCommitted), 3)
    assert.equal(await value(metrics.dataBytesCommitted), 3030)
  })
})
