// Medians, ratios and markdown tables for the bench's stdout. Internal to this bench.
import type { CapabilitiesReport } from './capabilities.ts'
import { median, type ThroughputResult } from './common.ts'
import type { RebalanceReport } from './rebalance.ts'

export interface SavedResults {
  date: string
  node: string
  runs: number
  produce?: { messages: number; batchSize: number; rows: ThroughputRow[] }
  consume?: { messages: number; filledWith: string; partitionCount: number; rows: ThroughputRow[] }
  rebalance?: RebalanceReport[]
  capabilities?: CapabilitiesReport[]
  broker?: Record<string, string | null | undefined>
}

export function bigintAsString(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value
}

/** Every table of a run, as the markdown the bench prints. */
export function renderAll(results: SavedResults): string {
  const parts = [`Run ${results.date}, Node ${results.node}, ${results.runs} runs per throughput variant.`]
  if (results.produce) {
    const { messages, batchSize, rows } = results.produce
    parts.push(
      `### Produce: ${messages} × 1 KB, acks=all, idempotent, batches of ${batchSize}`,
      throughputTable(rows, false),
    )
  }
  if (results.consume) {
    const { messages, filledWith, rows } = results.consume
    parts.push(
      `### Consume: ${messages} × 1 KB from earliest, 6 partitions, fresh group (topic filled by ${filledWith})`,
      throughputTable(rows, true),
    )
  }
  if (results.rebalance) {
    parts.push(
      '### Rebalance: 3 members, 6 partitions (start 1, 2, 3, stop 2)',
      rebalanceTable(results.rebalance),
      'Assignment callbacks/events delivered (first timing run):',
      rebalanceEvents(results.rebalance),
    )
  }
  if (results.capabilities) {
    parts.push('### Capabilities (each probed against the broker)', capabilitiesTable(results.capabilities))
  }
  if (results.broker) parts.push(`Broker: ${JSON.stringify(results.broker)}`)
  return parts.join('\n\n')
}

export interface ThroughputRow {
  key: string
  runs: number
  /** Messages per second: consume over first-to-last message, produce over the whole run. */
  medianRate: number
  minRate: number
  maxRate: number
  medianMBps: number
  /** Consume only: messages per second including client start and group join. */
  medianRateWithJoin?: number
  medianCpuMs: number
  cpuUsPerMessage: number
  ratio: number
}

export function summarize(samples: Map<string, ThroughputResult[]>, referenceKey: string): ThroughputRow[] {
  const rows: ThroughputRow[] = []
  for (const [key, results] of samples) {
    const rates = results.map((r) => r.messages / ((r.steadyMs ?? r.totalMs) / 1000))
    const withJoin = results.map((r) => r.messages / (r.totalMs / 1000))
    const mbps = results.map((r) => r.bytes / 1e6 / ((r.steadyMs ?? r.totalMs) / 1000))
    const cpu = results.map((r) => r.cpuUserMs + r.cpuSystemMs)
    const messages = median(results.map((r) => r.messages))
    const row: ThroughputRow = {
      key,
      runs: results.length,
      medianRate: median(rates),
      minRate: Math.min(...rates),
      maxRate: Math.max(...rates),
      medianMBps: median(mbps),
      medianCpuMs: median(cpu),
      cpuUsPerMessage: (median(cpu) * 1000) / messages,
      ratio: Number.NaN,
    }
    if (results.some((r) => r.steadyMs !== undefined)) row.medianRateWithJoin = median(withJoin)
    rows.push(row)
  }
  const reference = rows.find((row) => row.key === referenceKey)?.medianRate ?? Number.NaN
  for (const row of rows) row.ratio = row.medianRate / reference
  return rows
}

const integer = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–')
const fixed = (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : '–')

export function throughputTable(rows: ThroughputRow[], consume: boolean): string {
  const header = consume
    ? '| client / API path | runs | median msg/s (first→last) | MB/s | vs platformatic stream | msg/s incl. join | min–max msg/s | CPU s (median) | CPU µs/msg |'
    : '| client / API path | runs | median msg/s | MB/s | vs platformatic send-seq | min–max msg/s | CPU s (median) | CPU µs/msg |'
  const lines = [
    header,
    `|${header
      .split('|')
      .slice(1, -1)
      .map(() => '---')
      .join('|')}|`,
  ]
  for (const row of rows) {
    const cells = [
      row.key,
      String(row.runs),
      integer(row.medianRate),
      fixed(row.medianMBps, 1),
      `${fixed(row.ratio)}×`,
      ...(consume ? [integer(row.medianRateWithJoin ?? Number.NaN)] : []),
      `${integer(row.minRate)}–${integer(row.maxRate)}`,
      fixed(row.medianCpuMs / 1000),
      fixed(row.cpuUsPerMessage, 1),
    ]
    lines.push(`| ${cells.join(' | ')} |`)
  }
  return lines.join('\n')
}

const phaseNames = ['start m1', 'start m2', 'start m3', 'stop m2']

/** Per client and protocol: median settle times of the instant-callback runs, then the 2 s revoke run. */
export function rebalanceTable(reports: RebalanceReport[]): string {
  const keys = [...new Set(reports.map((r) => `${r.client}/${r.protocol}`))]
  const header =
    '| client / protocol | timing runs | settled after start m1 / m2 / m3 / stop m2 (median ms) | resumed on all 6 (median ms, same changes) | with a 2 s revoke handler: settled (ms) | handler awaited | records of revoked partitions to the revoking member during the handler (of them, partitions it lost) | records of moved partitions to their new owner during the handler | committed past delivered | missing / duplicated records (all runs) |'
  const lines = [
    header,
    `|${header
      .split('|')
      .slice(1, -1)
      .map(() => '---')
      .join('|')}|`,
  ]
  for (const key of keys) {
    const runs = reports.filter((r) => `${r.client}/${r.protocol}` === key)
    const timing = runs.filter((r) => r.revokeDelayMs === 0 && !r.failed)
    const slow = runs.find((r) => r.revokeDelayMs > 0)
    const medianOf = (field: 'settledMs' | 'flowingMs'): string =>
      phaseNames
        .map((name) => {
          const values = timing
            .map((r) => r.phases.find((p) => p.change === name)?.[field])
            .filter((v): v is number => typeof v === 'number')
          return values.length ? integer(median(values)) : '–'
        })
        .join(' / ')
    const windows = slow?.windows ?? []
    const sum = (pick: (w: NonNullable<RebalanceReport['windows']>[number]) => number): number =>
      windows.reduce((total, w) => total + pick(w), 0)
    const awaited = windows.length === 0 ? '–' : windows.every((w) => w.awaited) ? 'yes' : 'no'
    const missing = runs.reduce((total, r) => total + (r.missing ?? 0), 0)
    const duplicates = runs.reduce((total, r) => total + (r.duplicates ?? 0), 0)
    const failed = runs.filter((r) => r.failed).length
    lines.push(
      `| ${[
        key,
        `${timing.length}${failed ? ` (+${failed} failed)` : ''}`,
        medianOf('settledMs'),
        medianOf('flowingMs'),
        slow?.failed
          ? `failed: ${slow.failed}`
          : phaseNames.map((n) => slow?.phases.find((p) => p.change === n)?.settledMs ?? '–').join(' / '),
        awaited,
        `${sum((w) => w.deliveredToRevoker)} (${sum((w) => w.movedDeliveredToRevoker)})`,
        String(sum((w) => w.deliveredToNewOwners)),
        String(sum((w) => w.committedPastDelivered.length)),
        `${missing} / ${duplicates}`,
      ].join(' | ')} |`,
    )
  }
  return lines.join('\n')
}

/** The assignment callbacks each client delivered in its first timing run, phase by phase. */
export function rebalanceEvents(reports: RebalanceReport[]): string {
  const lines: string[] = []
  for (const report of reports.filter((r) => r.run === 1)) {
    lines.push(`- **${report.client}/${report.protocol}**`)
    for (const phase of report.phases) {
      const events = Object.entries(phase.events).map(
        ([member, list]) => `${member}: ${list.map((e) => e.replace(/^\d+ms /, '')).join('; ')}`,
      )
      // A member whose assignment changed while no callback or event carried a partition list.
      const unannounced = Object.keys(phase.observed).filter(
        (member) => !(phase.events[member] ?? []).some((event) => event.includes('[')),
      )
      const note = unannounced.length ? ` — new assignment of ${unannounced.join(', ')} visible only by polling` : ''
      lines.push(`  - ${phase.change}: ${events.join(' | ') || 'no callbacks or events'}${note}`)
    }
  }
  return lines.join('\n')
}

export function capabilitiesTable(reports: CapabilitiesReport[]): string {
  const names = [...new Set(reports.flatMap((r) => r.checks.map((c) => c.name)))]
  const header = `| check | ${reports.map((r) => r.client).join(' | ')} |`
  const lines = [
    header,
    `|${header
      .split('|')
      .slice(1, -1)
      .map(() => '---')
      .join('|')}|`,
  ]
  for (const name of names) {
    const cells = reports.map((r) => {
      const check = r.checks.find((c) => c.name === name)
      return check === undefined ? 'n/a' : check.ok ? 'yes' : 'no'
    })
    lines.push(`| ${name} | ${cells.join(' | ')} |`)
  }
  lines.push('')
  for (const report of reports) {
    for (const check of report.checks) lines.push(`- ${report.client} — ${check.name}: ${check.detail}`)
  }
  return lines.join('\n')
}
