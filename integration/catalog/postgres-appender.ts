// One process of the PostgreSQL compare-and-swap race in postgres-catalog.test.ts: opens the SQL
// catalog on the stack's PostgreSQL, writes the Parquet files of its appends up front, prints
// "ready", waits for "go" on stdin, then commits them one after another through the commit loop
// (a lost compare-and-swap reloads and retries), and prints how many attempts were lost as JSON.
// Usage: node postgres-appender.ts <namespace.table> <warehouse> <first id> <appends> <rows each>
import { once } from 'node:events'
import { parseTableIdentifier, SqlCatalog } from '../../shared/catalog/index.ts'
import { appendFiles } from '../../shared/iceberg/commit/index.ts'
import { LocalFileStorage } from '../../shared/storage/index.ts'
import { endpoints } from '../harness.ts'
import { writeDataFiles } from '../iceberg/table-writer.ts'

const [tableName, warehouse, first, appends, rowsEach] = process.argv.slice(2)
if (!tableName || !warehouse || !first || !appends || !rowsEach)
  throw new Error('usage: postgres-appender.ts <table> <warehouse> <first id> <appends> <rows each>')
const server = endpoints().postgres
if (!server) throw new Error('the stack has no PostgreSQL')
const table = parseTableIdentifier(tableName)
const storage = new LocalFileStorage()
const catalog = await SqlCatalog.open({ name: 'floe', warehouse, storage, postgres: server })
const { metadata } = await catalog.loadTable(table)
const batches = []
for (let a = 0; a < Number(appends); a++) {
  const start = Number(first) + a * Number(rowsEach)
  const rows = Array.from({ length: Number(rowsEach) }, (_, i) => ({ id: `id-${start + i}`, n: BigInt(start + i) }))
  batches.push({ commitId: `pid-${process.pid}-${a}`, files: await writeDataFiles(storage, metadata, rows) })
}

process.stdout.write('ready\n')
process.stdin.setEncoding('utf8')
await once(process.stdin, 'data')

let conflicts = 0
for (const batch of batches) {
  await appendFiles({
    catalog,
    storage,
    table,
    commitId: batch.commitId,
    commitIdKey: 'floe.commit-id',
    content: () => ({ files: batch.files }),
    retry: { retries: 100, minWaitMs: 10, maxWaitMs: 500 },
    onRetry: ({ reason }) => {
      if (reason === 'conflict') conflicts++
    },
  })
}
await catalog.close()
process.stdout.write(`${JSON.stringify({ conflicts, commits: batches.map((b) => b.commitId) })}\n`)
process.exit(0)
