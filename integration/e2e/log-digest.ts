// What a failed end-to-end test prints about its workers. The fleet's folder (and every log in it)
// is deleted when the test ends, so on a CI machine this digest is all that is left to read: per
// worker, whether it runs, the partitions it holds, its rounds, its last warnings and errors, and
// its last lines of any level (the periodic perf line left out), enough to tell a partition no one
// reads from a coordinator that stopped running rounds. Of a worker that exited, also the last
// lines that are not JSON: what it said on stderr (`floe run: ...`, or Node's own crash report).
import { readFileSync } from 'node:fs'
import type { WorkerProcess } from './fleet.ts'

const WARN = 40
const tailLength = 15
const recentLength = 25

type Line = Record<string, unknown>

function brief(line: Line): string {
  const { level: _level, time, pid: _pid, hostname: _host, worker: _worker, msg, ...rest } = line
  const details = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : ''
  return `${String(time)} ${String(msg)}${details}`.slice(0, 400)
}

/** The partitions a worker's log says it ingests now: assigned minus revoked (one log per incarnation). */
export function heldPartitions(lines: readonly Line[]): number[] {
  const held = new Set<number>()
  for (const line of lines) {
    if (line.msg === 'partition assigned') held.add(Number(line.partition))
    if (line.msg === 'partition revoked') held.delete(Number(line.partition))
  }
  return [...held].sort((a, b) => a - b)
}

const isRound = (line: Line) =>
  typeof line.msg === 'string' && /^round (committed|empty|rejected|failed)$/.test(line.msg)
const isPerf = (line: Line) => line.perf !== undefined

/** A few lines per worker: its state, partitions, round counts, troubles and last lines. */
export function digestOf(workers: readonly WorkerProcess[]): string {
  const out: string[] = []
  for (const worker of workers) {
    const lines = worker.lines()
    const count = (msg: string) => lines.filter((l) => l.msg === msg).length
    const state = worker.running ? 'running' : `exited ${String(worker.child.exitCode ?? worker.child.signalCode)}`
    const lastRound = lines.filter(isRound).at(-1)
    out.push(
      `-- ${worker.id} (${state}): ${lines.length} log lines, partitions [${heldPartitions(lines).join(',')}], ` +
        `rounds committed ${count('round committed')}, empty ${count('round empty')}, ` +
        `failed ${count('round failed')}, coordinating ${worker.coordinating}, ` +
        `last round ${lastRound ? String(lastRound.time) : 'none'}`,
    )
    const troubles = lines.filter((l) => typeof l.level === 'number' && l.level >= WARN).slice(-tailLength)
    for (const line of troubles) out.push(`   ! ${brief(line)}`)
    for (const line of lines.filter((l) => !isPerf(l)).slice(-recentLength)) out.push(`   ${brief(line)}`)
    const last = lines.at(-1)
    if (last) out.push(`   last: ${brief(last)}`)
    if (!worker.running) for (const line of plainLines(worker).slice(-tailLength)) out.push(`   stderr: ${line}`)
  }
  return out.join('\n')
}

function plainLines(worker: WorkerProcess): string[] {
  try {
    const text = readFileSync(worker.logFile, 'utf8')
    return text
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('{'))
      .map((l) => l.slice(0, 400))
  } catch (error) {
    return [`(no log file: ${String(error)})`]
  }
}
