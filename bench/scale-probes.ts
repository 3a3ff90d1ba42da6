// What bench/scale.bench.ts reads about a worker and its table, from outside the worker: its CPU
// time and peak RSS from /proc, its rounds from its log lines, its commits from the table's
// snapshots (REST catalog) and manifests (a local warehouse). The parsing is pure and tested in
// scale-probes.test.ts; the readers around it do the I/O.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { ManifestEntryStatus, readManifest, readManifestList } from '../shared/iceberg/manifests/index.ts'

/** The value at quantile `q` (0..1) of `values`, nearest-rank; NaN when there are none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.ceil(q * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] ?? Number.NaN
}

/** User + system clock ticks of a process, from the text of /proc/<pid>/stat (fields 14 and 15). */
export function cpuTicksOfStat(stat: string): number {
  // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // rest[0] is field 3 (state), so field 14 (utime) is rest[11] and 15 (stime) rest[12].
  return Number(rest[11]) + Number(rest[12])
}

/** VmHWM (peak resident set) in bytes, from the text of /proc/<pid>/status; 0 when absent. */
export function peakRssOfStatus(status: string): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1]
  return kb ? Number(kb) * 1024 : 0
}

let ticksPerSecond: number | undefined
function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  return ticksPerSecond
}

/** CPU seconds (user + system) a live process has used; undefined once it is gone. */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    return cpuTicksOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8')) / clockTicks()
  } catch {
    return undefined
  }
}

export function peakRssOf(pid: number): number {
  try {
    return peakRssOfStatus(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return 0
  }
}

/** One committed round, from the coordinator's `round committed` log line. */
export interface RoundTimes {
  /** When the line was logged (ms since the epoch). */
  at: number
  records: number
  collectingMs: number
  committingMs: number
  partial: boolean
  /** Every partition answered: the fleet held and read them all. */
  complete: boolean
}

/** The committed rounds among a worker's log lines (JSON objects), in order. */
export function roundsOfLog(lines: readonly Record<string, unknown>[]): RoundTimes[] {
  const rounds: RoundTimes[] = []
  for (const line of lines) {
    if (line.msg !== 'round committed') continue
    const phases = (line.phasesMs ?? {}) as Record<string, unknown>
    rounds.push({
      at: Date.parse(String(line.time)),
      records: Number(line.records ?? 0),
      collectingMs: Number(phases.collecting ?? Number.NaN),
      committingMs: Number(phases.committing ?? Number.NaN),
      partial: line.partial === true,
      complete: Array.isArray(line.missing) && line.missing.length === 0,
    })
  }
  return rounds
}

/** Sum of a Prometheus counter over its label sets, from /metrics text. */
export function counterTotal(text: string, name: string): number {
  let total = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{')) continue
    total += Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return total
}

/**
 * A Prometheus histogram's cumulative buckets (upper bound -> count), summed over the label sets
 * of every text (one per worker).
 */
export function histogramBuckets(texts: readonly string[], name: string): Map<number, number> {
  const buckets = new Map<number, number>()
  const prefix = `${name}_bucket{`
  for (const text of texts) {
    for (const line of text.split('\n')) {
      if (!line.startsWith(prefix)) continue
      const le = /le="([^"]+)"/.exec(line)?.[1]
      if (le === undefined) continue
      const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le)
      buckets.set(bound, (buckets.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)))
    }
  }
  return buckets
}

/** What a histogram counted after `earlier` was taken: bucket by bucket, `later` minus `earlier`. */
export function bucketsSince(later: ReadonlyMap<number, number>, earlier: ReadonlyMap<number, number>) {
  return new Map([...later].map(([bound, count]) => [bound, count - (earlier.get(bound) ?? 0)]))
}

/**
 * The upper bound (`le`) of the first bucket whose cumulative count reaches quantile `q`;
 * Infinity when only +Inf does, NaN when the histogram has no observations.
 */
export function bucketQuantile(buckets: ReadonlyMap<number, number>, q: number): number {
  const bounds = [...buckets.keys()].sort((a, b) => a - b)
  const total = buckets.get(Number.POSITIVE_INFINITY) ?? 0
  if (total === 0) return Number.NaN
  return bounds.find((bound) => (buckets.get(bound) ?? 0) >= q * total) ?? Number.POSITIVE_INFINITY
}

/** One snapshot Floe committed: its summary's counts. */
export interface FloeCommit {
  snapshotId: string
  manifestList: string
  addedFiles: number
  addedBytes: number
  addedRecords: number
}

interface TableMetadata {
  'current-snapshot-id'?: number | string | null
  snapshots?: { 'snapshot-id': number | string; 'manifest-list': string; summary?: Record<string, string> }[]
}

/** The table's current record count and Floe's commits so far, from the REST catalog. */
export async function readTable(
  restUri: string,
  table: string,
): Promise<{ totalRecords: number; commits: FloeCommit[] } | undefined> {
  const [namespace, name] = table.split('.')
  const response = await fetch(`${restUri}/v1/namespaces/${namespace}/tables/${name}`).catch(() => undefined)
  if (!response?.ok) return undefined
  // Snapshot ids are longs: keep them as text (JSON.parse would round them).
  const text = (await response.text()).replace(/("(?:current-)?snapshot-id"\s*:\s*)(-?\d+)/g, '$1"$2"')
  const { metadata } = JSON.parse(text) as { metadata: TableMetadata }
  const current = metadata.snapshots?.find((s) => String(s['snapshot-id']) === String(metadata['current-snapshot-id']))
  const commits = (metadata.snapshots ?? [])
    .filter((s) => s.summary?.['floe.commit-id'] !== undefined)
    .map((s) => ({
      snapshotId: String(s['snapshot-id']),
      manifestList: s['manifest-list'],
      addedFiles: Number(s.summary?.['added-data-files'] ?? 0),
      addedBytes: Number(s.summary?.['added-files-size'] ?? 0),
      addedRecords: Number(s.summary?.['added-records'] ?? 0),
    }))
  return { totalRecords: Number(current?.summary?.['total-records'] ?? 0), commits }
}

/** Sizes in bytes of the data files a snapshot added, from its manifests (file:// warehouse only). */
export async function addedFileSizes(commit: FloeCommit): Promise<number[]> {
  const list = readManifestList(await readFile(fileURLToPath(commit.manifestList)))
  const sizes: number[] = []
  const id = BigInt(commit.snapshotId)
  for (const manifest of list.manifests) {
    if (manifest.addedSnapshotId !== id) continue
    const read = readManifest(await readFile(fileURLToPath(manifest.manifestPath)), { inheritFrom: manifest })
    for (const entry of read.entries) {
      if (entry.status === ManifestEntryStatus.ADDED && entry.snapshotId === id) {
        sizes.push(Number(entry.dataFile.fileSizeInBytes))
      }
    }
  }
  return sizes
}
