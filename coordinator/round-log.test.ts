import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createMetrics } from '../shared/telemetry/index.ts'
import { RoundLog } from './round-log.ts'

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
})
