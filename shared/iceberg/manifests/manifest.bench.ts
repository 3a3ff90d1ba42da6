// Throughput of writing and reading manifests: 100k entries partitioned by day and category, once
// with full statistics for 10 columns (every map filled, what Floe writes) and once lean (no
// statistics, like the first measurement in docs/decisions.md, "Avro"). Not part of `npm test`; run with
// `node shared/iceberg/manifests/manifest.bench.ts [entries]`. Belongs in bench/ once that
// folder's runner takes benchmarks from shared/.
import { ManifestEntryStatus, type ManifestEntryToWrite, readManifest, writeManifest } from './index.ts'
import { daySpec, serializeBoundForTests, tableSchema } from './testing.ts'

const count = Number(process.argv[2] ?? 100_000)
const columns = Array.from({ length: 10 }, (_, i) => i + 1)
const bound = Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8)
const full: ManifestEntryToWrite[] = Array.from({ length: count }, (_, n) => ({
  status: ManifestEntryStatus.ADDED,
  dataFile: {
    filePath: `abfss://warehouse@account.dfs.core.windows.net/db/events/data/ts_day=2024-01-01/${n}-0f8fad5b-d9cb-469f-a165-70867728950e.parquet`,
    fileFormat: 'PARQUET',
    specId: 0,
    partition: { ts_day: 19_700 + (n % 30), category: `category-${n % 17}` },
    recordCount: 50_000n,
    fileSizeInBytes: 67_108_864n,
    columnSizes: new Map(columns.map((c) => [c, 6_000_000n])),
    valueCounts: new Map(columns.map((c) => [c, 50_000n])),
    nullValueCounts: new Map(columns.map((c) => [c, 0n])),
    nanValueCounts: new Map(),
    lowerBounds: new Map(columns.map((c) => [c, bound])),
    upperBounds: new Map(columns.map((c) => [c, bound])),
    splitOffsets: [4n],
    sortOrderId: 0,
  },
}))

function measure<T>(what: string, run: () => T): T {
  const runs: number[] = []
  let result: T | undefined
  for (let i = 0; i < 5; i += 1) {
    const start = process.hrtime.bigint()
    result = run()
    runs.push(Number(process.hrtime.bigint() - start) / 1e9)
  }
  runs.sort((a, b) => a - b)
  const median = runs[2] as number
  console.log(
    `${what}: median ${median.toFixed(3)} s of 5 runs, ${Math.round(count / median).toLocaleString('en')} entries/s`,
  )
  return result as T
}

const lean: ManifestEntryToWrite[] = full.map((entry) => ({
  status: entry.status,
  dataFile: {
    filePath: entry.dataFile.filePath,
    fileFormat: 'PARQUET',
    specId: 0,
    partition: entry.dataFile.partition,
    recordCount: entry.dataFile.recordCount,
    fileSizeInBytes: entry.dataFile.fileSizeInBytes,
  },
}))

for (const [profile, entries] of [
  ['full statistics', full],
  ['lean', lean],
] as const) {
  for (const codec of ['deflate', 'null'] as const) {
    const written = measure(`${profile}: write ${count} entries (${codec})`, () =>
      writeManifest({
        schema: tableSchema,
        spec: daySpec,
        formatVersion: 2,
        content: 'data',
        snapshotId: 3051729675574597004n,
        entries,
        serializeBound: serializeBoundForTests,
        codec,
      }),
    )
    console.log(`  manifest size ${(written.bytes.length / 1024 / 1024).toFixed(2)} MiB`)
    measure(`${profile}: read ${count} entries (${codec})`, () => readManifest(written.bytes))
  }
}
