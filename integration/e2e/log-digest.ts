// What a failed end-to-end test prints about its workers. The fleet's folder (and every log in it)
// is deleted when the test ends, so on a CI machine this digest is all that is left to read: per
// worker, whether it runs, how many rounds it committed, and its last warnings and errors.
import type { WorkerProcess } from './fleet.ts'

const WARN = 40
const tailLength = 15

function brief(line: Record<string, unknown>): string {
  const { level: _level, time, pid: _pid, hostname: _host, worker: _worker, msg, ...rest } = line
  const details = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : ''
  return `${String(time)} ${String(msg)}${details}`.slice(0, 400)
}

/** A few lines per worker: its state, round counts, and the last warnings and errors of its log. */
export function digestOf(workers: readonly WorkerProcess[]): string {
  const out: string[] = []
  for (const worker of workers) {
    const lines = worker.lines()
    const count = (msg: string) => lines.filter((l) => l.msg === msg).length
    const state = worker.running ? 'running' : `exited ${String(worker.child.exitCode ?? worker.child.signalCode)}`
    out.push(
      `-- ${worker.id} (${state}): ${lines.length} log lines, rounds committed ${count('round committed')}, ` +
        `rounds failed ${count('round failed')}, coordinating ${worker.coordinating}`,
    )
    const troubles = lines.filter((l) => typeof l.level === 'number' && l.level >= WARN).slice(-tailLength)
    for (const line of troubles) out.push(`   ${brief(line)}`)
    const last = lines.at(-1)
    if (last) out.push(`   last: ${brief(last)}`)
  }
  return out.join('\n')
}
