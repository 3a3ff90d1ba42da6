import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { describe, test } from 'node:test'
import { serveEndpoints } from './http.ts'
import { createLogger } from './logger.ts'
import { createMetrics, visibilityBuckets } from './metrics.ts'
import { PhaseClock } from './phases.ts'

describe('the perf line', () => {
  test('charges wall time to the running phase and adds up to the window', () => {
    let t = 0
    const clock = new PhaseClock(() => t)
    clock.switchTo('poll')
    t += 4400
    clock.switchTo('decode')
    t += 900
    clock.switchTo('encode')
    t += 2100
    clock.switchTo('write')
    t += 300
    clock.switchTo('paused')
    t += 2300
    clock.counts = { in: 157_000, written: 156_990, dlq: 10 }
    const { line, shares } = clock.report()
    assert.equal(
      line,
      'perf 10s: 157000 in, 156990 written, 10 dlq | poll 44% decode 9% encode 21% write 3% dlq 0% dlq-wait 0% upload-wait 0% report 0% paused 23%',
    )
    const total = Object.values(shares).reduce((a, b) => a + b, 0)
    assert.ok(Math.abs(total - 1) < 1e-9)
  })

  test('starts a fresh window after each report', () => {
    let t = 0
    const clock = new PhaseClock(() => t)
    clock.switchTo('poll')
    t += 1000
    clock.report()
    t += 1000
    const { shares, counts } = clock.report()
    assert.equal(shares.poll, 1)
    assert.deepEqual(counts, { in: 0, written: 0, dlq: 0 })
  })
})

describe('structured logs', () => {
  test('are JSON lines with the worker identity and no secrets', async () => {
    const out = new PassThrough()
    const lines: string[] = []
    out.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)))
    const log = createLogger({ base: { worker: 'w-1' }, destination: out })
    log.info(
      { kafka: { sasl: { password: 's3cret' } }, storage: { connectionString: 'AccountKey=abc' } },
      'config loaded',
    )
    log.flush()
    await new Promise((resolve) => setImmediate(resolve))
    const line = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>
    assert.equal(line.worker, 'w-1')
    assert.equal(line.level, 'info')
    assert.equal(line.msg, 'config loaded')
    assert.doesNotMatch(lines[0] ?? '', /s3cret|AccountKey=abc/)
  })
})

describe('the HTTP endpoints', () => {
  test('serve metrics, liveness and readiness', async () => {
    const metrics = createMetrics({ defaultMetrics: false })
    metrics.recordsReceived.inc({ dataset: 'events' }, 3)
    let ready = false
    const endpoints = await serveEndpoints({
      port: 0,
      host: '127.0.0.1',
      registry: metrics.registry,
      ready: () => ({ ready, reason: 'syncing' }),
    })
    try {
      const base = `http://127.0.0.1:${endpoints.port}`
      const text = await (await fetch(`${base}/metrics`)).text()
      assert.match(text, /floe_records_received_total\{dataset="events"\} 3/)
      assert.equal((await fetch(`${base}/livez`)).status, 200)
      const notReady = await fetch(`${base}/readyz`)
      assert.equal(notReady.status, 503)
      assert.match(await notReady.text(), /syncing/)
      ready = true
      assert.equal((await fetch(`${base}/readyz`)).status, 200)
      assert.equal((await fetch(`${base}/nothing`)).status, 404)
    } finally {
      await endpoints.close()
    }
  })
})

describe('the visibility histogram', () => {
  test('has buckets at the commit interval and a few seconds past it', async () => {
    assert.deepEqual(visibilityBuckets(), [1, 2, 5, 10, 20, 30, 60, 120, 300, 600])
    assert.deepEqual(visibilityBuckets(20), [1, 2, 5, 10, 20, 21, 22, 25, 30, 40, 60, 120, 300, 600])
    const metrics = createMetrics({ defaultMetrics: false, commitIntervalSeconds: 10 })
    metrics.commitVisibilitySeconds.observe({ dataset: 'events' }, 11.5)
    const text = await metrics.registry.metrics()
    assert.match(text, /floe_commit_visibility_seconds_bucket\{le="11",dataset="events"\} 0/)
    assert.match(text, /floe_commit_visibility_seconds_bucket\{le="12",dataset="events"\} 1/)
  })
})
