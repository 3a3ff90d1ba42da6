// Compaction throughput and memory: a table on the SQL catalog (SQLite) and local storage is filled
// with small files of the 12-column event shape (appended in commits of 100 files, as many rounds
// would), then compacted by `compactTable` in a child process of its own, so its peak RSS is the
// compaction's and not the filling's. Prints rows/s and MiB/s of source files, CPU seconds, peak
// RSS against the workers' default memory cap, and the files and bytes before and after.
//
//   node bench/compaction.bench.ts [totalMiB=1024] [fileKiB=512] [targetMiB=128]
import { execFileSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventPool, schema } from '../participant/wal/bench-rows.ts'
import { parseTableIdentifier, SqlCatalog } from '../shared/catalog/index.ts'
import { appendFiles } from '../shared/iceberg/commit/index.ts'
import type { DataFile } from '../shared/iceberg/index.ts'
import { compactTable } from '../shared/iceberg/maintenance/index.ts'
import { dataDirectory } from '../shared/iceberg/metadata/index.ts'
import { openDataFile, toDataFile } from '../shared/parquet/index.ts'
import { LocalFileStorage, localPath } from '../shared/storage/index.ts'

const MiB = 1024 * 1024
const table = parseTableIdentifier('bench.events')
const storage = new LocalFileStorage()
const memoryCapMiB = 512 // ingestion.wal.maxOpenSegmentMemoryBytes's default

async function openCatalog(dir: string) {
  return SqlCatalog.open({ path: join(dir, 'catalog.db'), name: 'bench', warehouse: `file://${dir}/wh`, storage })
}

async function fill(dir: string, totalMiB: number, fileKiB: number): Promise<void> {
  const catalog = await openCatalog(dir)
  await catalog.createNamespace(['bench'])
  const { metadata } = await catalog.createTable(table, schema, { fields: [] })
  const directory = dataDirectory(metadata)
  await mkdir(localPath(directory), { recursive: true })
  const pool = eventPool(20_000)
  // about 76 bytes a row once compressed: a first file says how many rows make fileKiB
  let rowsPerFile = Math.max(1, Math.round((fileKiB * 1024) / 76))
  let bytes = 0
  let next = 0
  let pending: DataFile[] = []
  const started = performance.now()
  while (bytes < totalMiB * MiB) {
    const location = `${directory}/${randomUUID()}.parquet`
    const writer = await openDataFile({ path: localPath(location), schema })
    for (let written = 0; written < rowsPerFile; written += 5000) {
      const count = Math.min(5000, rowsPerFile - written)
      const rows = Array.from({ length: count }, (_, i) => pool[(next + i) % pool.length] as (typeof pool)[number])
      next += count
      await writer.append(rows)
    }
    const file = toDataFile(await writer.close(), { filePath: location, schema, specId: 0, partition: {} })
    if (bytes === 0)
      rowsPerFile = Math.max(1, Math.round((rowsPerFile * fileKiB * 1024) / Number(file.fileSizeInBytes)))
    bytes += Number(file.fileSizeInBytes)
    pending.push(file)
    if (pending.length === 100 || bytes >= totalMiB * MiB) {
      const files = pending
      pending = []
      await appendFiles({
        catalog,
        storage,
        table,
        commitId: randomUUID(),
        commitIdKey: 'bench.commit-id',
        content: () => ({ files }),
      })
    }
  }
  await catalog.close()
  const seconds = ((performance.now() - started) / 1000).toFixed(0)
  console.log(`filled: ${next} rows in small files, ${(bytes / MiB).toFixed(0)} MiB, in ${seconds} s`)
}

async function compact(dir: string, targetMiB: number): Promise<void> {
  const catalog = await openCatalog(dir)
  let peak = process.memoryUsage.rss()
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss())
  }, 50)
  const cpu = process.cpuUsage()
  const started = performance.now()
  const result = await compactTable({
    catalog,
    storage,
    table,
    policy: { targetFileSizeBytes: targetMiB * MiB, minInputFiles: 5 },
    workDirectory: dir,
  })
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  const used = process.cpuUsage(cpu)
  const { metadata } = await catalog.loadTable(table)
  const head = metadata.snapshots.find((s) => s['snapshot-id'] === metadata['current-snapshot-id'])
  const rows = Number(head?.summary['total-records'] ?? 0)
  const sourceMiB = Number(result.bytesBefore) / MiB
  console.log(
    `compacted ${result.filesRewritten} files (${sourceMiB.toFixed(0)} MiB, ${rows} rows) into ${result.filesWritten} ` +
      `(${(Number(result.bytesAfter) / MiB).toFixed(0)} MiB) in ${seconds.toFixed(1)} s: ` +
      `${Math.round(rows / seconds)} rows/s, ${(sourceMiB / seconds).toFixed(1)} MiB/s of source files, ` +
      `${((used.user + used.system) / 1e6).toFixed(1)} CPU s`,
  )
  console.log(`peak RSS ${(peak / MiB).toFixed(0)} MiB (the workers' default memory cap: ${memoryCapMiB} MiB)`)
  await catalog.close()
}

const [mode, ...rest] = process.argv.slice(2)
if (mode === '--compact') {
  await compact(rest[0] as string, Number(rest[1]))
} else {
  const [totalMiB = 1024, fileKiB = 512, targetMiB = 128] = process.argv.slice(2).map(Number)
  const dir = await mkdtemp(join(tmpdir(), 'floe-compaction-bench-'))
  try {
    console.log(`${totalMiB} MiB of ${fileKiB} KiB files, 12 columns, target ${targetMiB} MiB; node ${process.version}`)
    await fill(dir, totalMiB, fileKiB)
    execFileSync(process.execPath, [import.meta.filename, '--compact', dir, String(targetMiB)], { stdio: 'inherit' })
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
