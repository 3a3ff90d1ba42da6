// The command line of `floe rewind`, as a pure function: which dataset, to which offsets or to
// which point in time, and whether to write or only show. Strict, unlike parseInvocation: a
// mistyped option of a command that rewrites a table's progress must stop it, not be ignored.
import { parseArgs } from 'node:util'

export interface PartitionTarget {
  topic: string
  partition: number
  /** The next offset the table is to hold: the first record read again. */
  offset: bigint
}

export type RewindTarget =
  | { kind: 'offsets'; partitions: PartitionTarget[] }
  /** Every partition to the first record at or after `ms` (the broker's ListOffsets by timestamp). */
  | { kind: 'timestamp'; ms: number; iso: string }

export interface RewindArguments {
  configPath: string | undefined
  dataset: string
  target: RewindTarget
  dryRun: boolean
}

export const rewindUsage = `usage: floe rewind --config FILE --dataset NAME
                   (--to-offset TOPIC:PARTITION=OFFSET[,...] | --to-timestamp ISO-8601) [--dry-run]`

// Kafka topic names are [a-zA-Z0-9._-]: no colon, so the last colon separates the partition.
const offsetTarget = /^([a-zA-Z0-9._-]+):(0|[1-9]\d{0,9})=(0|[1-9]\d{0,18})$/
// A date with a time and a zone: a time without a zone would be read in the machine's own.
const isoInstant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

/** Parses `--to-offset t:0=120,t:3=900`. Throws a TypeError naming the bad item. */
export function parseOffsetTargets(text: string): PartitionTarget[] {
  const seen = new Set<string>()
  return text.split(',').map((item) => {
    const match = offsetTarget.exec(item.trim())
    if (!match) throw new TypeError(`--to-offset: '${item}' is not TOPIC:PARTITION=OFFSET`)
    const [, topic, partition, offset] = match as unknown as [string, string, string, string]
    const key = `${topic}:${partition}`
    if (seen.has(key)) throw new TypeError(`--to-offset: ${key} is given twice`)
    seen.add(key)
    const value = BigInt(offset)
    if (value > 2n ** 63n - 1n) throw new TypeError(`--to-offset: ${offset} is past the largest Kafka offset`)
    if (Number(partition) > 2 ** 31 - 1) throw new TypeError(`--to-offset: ${partition} is not a Kafka partition`)
    return { topic, partition: Number(partition), offset: value }
  })
}

/** Parses an ISO-8601 instant with its zone. Throws a TypeError saying what is wrong. */
export function parseInstant(text: string): { ms: number; iso: string } {
  const ms = Date.parse(text)
  if (!isoInstant.test(text) || Number.isNaN(ms)) {
    throw new TypeError(`--to-timestamp: '${text}' is not an ISO-8601 time with a zone (2026-11-28T14:00:00Z)`)
  }
  return { ms, iso: new Date(ms).toISOString() }
}

/** The arguments after `rewind`, or the one line that says what is wrong with them. */
export function parseRewindArguments(argv: readonly string[]): RewindArguments | { error: string } {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        config: { type: 'string', short: 'c' },
        dataset: { type: 'string' },
        'to-offset': { type: 'string' },
        'to-timestamp': { type: 'string' },
        'dry-run': { type: 'boolean' },
      },
    })
    const extra = positionals.filter((p) => p !== 'rewind')
    if (extra.length > 0) return { error: `unexpected argument '${extra[0]}'` }
    if (!values.dataset) return { error: '--dataset is required' }
    const offsets = values['to-offset']
    const timestamp = values['to-timestamp']
    if ((offsets === undefined) === (timestamp === undefined)) {
      return { error: 'give exactly one of --to-offset and --to-timestamp' }
    }
    const target: RewindTarget =
      offsets !== undefined
        ? { kind: 'offsets', partitions: parseOffsetTargets(offsets) }
        : { kind: 'timestamp', ...parseInstant(timestamp as string) }
    return { configPath: values.config, dataset: values.dataset, target, dryRun: values['dry-run'] === true }
  } catch (error) {
    // parseArgs names the unknown option or the missing value itself.
    return { error: error instanceof Error ? error.message : String(error) }
  }
}
