// Where a worker's wall clock goes, by phase, for the perf line logged every 10 s:
//   perf 10s: 157000 in, 156990 written, 10 dlq | poll 44% decode 13% encode 21% write 3% dlq 0% dlq-wait 0% upload-wait 2% report 0% paused 0%
// (decode is JSON parsing, the JMESPath mapping and the typed conversion, measured together per batch;
// dlq is producing refused records to the dead-letter topic, dlq-wait waiting for that topic while
// it is unavailable, when the record loop holds rather than buffer; report is the loop letting a
// commit round's work go first (shared/round-first.ts); schema is a dataset that infers
// its columns widening its table and rotating its WAL to the new schema; it and idle are shown
// only when they took some of the window)
// The record loop is single-threaded, so one clock is enough: `switchTo(phase)` charges the time
// since the last switch to the phase that was running. Phases of one loop add up within the line.
// Counting is two performance.now() reads per switch, cheap enough per batch (not per record).

export const phases = [
  'poll',
  'decode',
  'encode',
  'write',
  'dlq',
  'dlq-wait',
  'upload-wait',
  'report',
  'paused',
  'schema',
  'idle',
] as const
export type Phase = (typeof phases)[number]

export class PhaseClock {
  readonly #spent = new Map<Phase, number>(phases.map((p) => [p, 0]))
  #current: Phase = 'idle'
  #since: number
  #windowStart: number
  readonly #now: () => number
  counts = { in: 0, written: 0, dlq: 0 }

  constructor(now: () => number = () => performance.now()) {
    this.#now = now
    this.#since = now()
    this.#windowStart = this.#since
  }

  /** Charges the time since the last switch to the running phase, then runs `phase`. */
  switchTo(phase: Phase): void {
    const t = this.#now()
    this.#spent.set(this.#current, (this.#spent.get(this.#current) ?? 0) + (t - this.#since))
    this.#current = phase
    this.#since = t
  }

  /** Adds time measured elsewhere (e.g. inside a library call) to a phase, taking it from the running one. */
  attribute(phase: Phase, ms: number): void {
    this.#spent.set(phase, (this.#spent.get(phase) ?? 0) + ms)
    this.#since += ms
  }

  /** The line for the window since the last call, and a fresh window. */
  report(): {
    line: string
    seconds: number
    shares: Record<Phase, number>
    counts: { in: number; written: number; dlq: number }
  } {
    this.switchTo(this.#current)
    const t = this.#now()
    const windowMs = Math.max(1, t - this.#windowStart)
    const shares = Object.fromEntries(phases.map((p) => [p, (this.#spent.get(p) ?? 0) / windowMs])) as Record<
      Phase,
      number
    >
    const counts = this.counts
    const seconds = Math.round(windowMs / 1000)
    const parts = phases
      .filter((p) => (p !== 'idle' && p !== 'schema') || shares[p] >= 0.005)
      .map((p) => `${p} ${Math.round(shares[p] * 100)}%`)
      .join(' ')
    const line = `perf ${seconds}s: ${counts.in} in, ${counts.written} written, ${counts.dlq} dlq | ${parts}`
    for (const p of phases) this.#spent.set(p, 0)
    this.counts = { in: 0, written: 0, dlq: 0 }
    this.#windowStart = t
    return { line, seconds, shares, counts }
  }
}
