// deploy/prometheus and deploy/grafana checked offline: `promtool check rules` and
// `promtool test rules` (the commands docs/operations.md gives), every metric the rules and the
// dashboard name is one a Floe worker exports, every alert has a unit test and a section in the
// operator's guide, and the dashboard is well formed (its PromQL parsed by promtool too).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { parse, stringify } from 'yaml'
import { createMetrics } from '../../shared/telemetry/index.ts'

const run = promisify(execFile)
const root = join(import.meta.dirname, '..', '..')
const rulesFile = 'deploy/prometheus/floe-alerts.yml'
const rulesTest = 'deploy/prometheus/floe-alerts.test.yml'
const dashboardFile = 'deploy/grafana/floe-fleet.json'

interface Rule {
  alert?: string
  record?: string
  expr: string
}
interface Panel {
  id: number
  type: string
  title: string
  gridPos: { x: number; y: number; w: number; h: number }
  datasource?: { type: string; uid: string }
  targets?: { refId: string; expr: string; legendFormat?: string }[]
}

async function promtool(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd: root })
    return { code: 0, out: stdout + stderr }
  } catch (error) {
    const e = error as { code: number | string; stdout?: string; stderr?: string }
    if (e.code === 'ENOENT') throw new Error('promtool is not installed: ./dev setup installs it (apt-get prometheus)')
    return { code: Number(e.code), out: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
}

const rules = async (): Promise<Rule[]> =>
  (parse(await readFile(join(root, rulesFile), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
    (g) => g.rules,
  )
const dashboard = async () =>
  JSON.parse(await readFile(join(root, dashboardFile), 'utf8')) as {
    uid: string
    title: string
    panels: Panel[]
    templating: { list: { name: string }[] }
  }
const exprsOf = (panels: Panel[]) => panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr))
/** Grafana's variables, as a dashboard would fill them in. */
const filled = (expr: string) => expr.replaceAll('$__rate_interval', '5m').replaceAll('$dataset', '.*')

/** The metric names an expression uses (recording rules' `floe:...` names aside). */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\bfloe_[a-z0-9_]+/g)].map((m) => m[0])
}

test('promtool checks the rules and their unit tests pass', async () => {
  const check = await promtool(['check', 'rules', rulesFile])
  assert.equal(check.code, 0, check.out)
  assert.match(check.out, /SUCCESS: \d+ rules found/)
  const unit = await promtool(['test', 'rules', rulesTest])
  assert.equal(unit.code, 0, unit.out)
  assert.match(unit.out, /SUCCESS/)
})

test('every metric the rules and the dashboard use is one Floe exports', async () => {
  const metrics = createMetrics()
  const exported = new Set<string>()
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    exported.add(metric.name)
    if (String(metric.type) === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) exported.add(metric.name + suffix)
  }
  const used = new Set([
    ...(await rules()).flatMap((r) => metricNames(r.expr)),
    ...exprsOf((await dashboard()).panels).flatMap(metricNames),
  ])
  assert.ok(used.size >= 15, `the rules and the dashboard use ${used.size} metrics`)
  assert.deepEqual(
    [...used].filter((name) => !exported.has(name)),
    [],
    'metrics Floe does not export',
  )
})

test('every alert has a unit test and a section in docs/operations.md', async () => {
  const alerts = (await rules()).flatMap((r) => (r.alert ? [r.alert] : []))
  const tests = parse(await readFile(join(root, rulesTest), 'utf8')) as {
    tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[]
  }
  const firing = new Set(
    tests.tests.flatMap((t) =>
      (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname),
    ),
  )
  assert.deepEqual(
    alerts.filter((a) => !firing.has(a)),
    [],
    'alerts no test sees fire',
  )
  const guide = await readFile(join(root, 'docs', 'operations.md'), 'utf8')
  assert.deepEqual(
    alerts.filter((a) => !guide.includes(`#### ${a}`)),
    [],
    'alerts the guide does not explain',
  )
  for (const command of [`promtool check rules ${rulesFile}`, `promtool test rules ${rulesTest}`]) {
    assert.ok(guide.includes(command), `the guide gives \`${command}\``)
  }
})

test('the dashboard is well formed and its queries parse', async () => {
  const board = await dashboard()
  assert.equal(board.uid, 'floe-fleet')
  assert.deepEqual(
    board.templating.list.map((v) => v.name),
    ['datasource', 'dataset'],
  )
  const ids = board.panels.map((p) => p.id)
  assert.equal(new Set(ids).size, ids.length, 'panel ids are unique')
  for (const panel of board.panels) {
    const { x, y, w, h } = panel.gridPos
    assert.ok(x >= 0 && w > 0 && x + w <= 24 && y >= 0 && h > 0, `${panel.title}: inside the 24-column grid`)
    if (panel.type === 'row') continue
    assert.ok(['timeseries', 'stat'].includes(panel.type), `${panel.title}: ${panel.type}`)
    assert.deepEqual(
      panel.datasource,
      // Grafana's datasource variable, not a template string
      { type: 'prometheus', uid: '$' + '{datasource}' },
      `${panel.title}: the datasource variable`,
    )
    const refIds = (panel.targets ?? []).map((t) => t.refId)
    assert.ok(refIds.length > 0, `${panel.title}: has a query`)
    assert.equal(new Set(refIds).size, refIds.length, `${panel.title}: refIds are unique`)
  }
  for (const title of [
    'Throughput',
    'Consumer lag by partition',
    'Commit visibility latency',
    'Round phases (p99)',
    'Data files per commit',
    'Bytes per commit',
    'WAL bytes',
    'Paused (backpressure)',
  ]) {
    assert.ok(
      board.panels.some((p) => p.title === title),
      `a panel '${title}'`,
    )
  }
  // promtool parses PromQL when it checks rules: each query, as a recording rule.
  const scratch = await mkdtemp(join(tmpdir(), 'floe-dashboard-'))
  try {
    const file = join(scratch, 'queries.yml')
    const exprs = exprsOf(board.panels).map(filled)
    await writeFile(
      file,
      stringify({
        groups: [{ name: 'dashboard', rules: exprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }],
      }),
    )
    const check = await promtool(['check', 'rules', file])
    assert.equal(check.code, 0, check.out)
    assert.match(check.out, new RegExp(`SUCCESS: ${exprs.length} rules found`))
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
})
