// One process of the SQL catalog race in sql-catalog.test.ts: loads the table, prints "ready",
// waits for "go" on stdin, commits an append on what it loaded, prints the outcome as JSON.
// Usage: node sql-committer.ts <sqlite path> <catalog name> <warehouse> <namespace.table>
import { once } from 'node:events'
import { parseTableIdentifier, SqlCatalog } from '../../shared/catalog/index.ts'
import { isFloeError } from '../../shared/errors.ts'
import { newSnapshotId } from '../../shared/iceberg/metadata/index.ts'
import { LocalFileStorage } from '../../shared/storage/index.ts'
import { appendUpdates } from './append-updates.ts'

const [path, name, warehouse, tableName] = process.argv.slice(2)
if (!path || !name || !warehouse || !tableName)
  throw new Error('usage: sql-committer.ts <path> <name> <warehouse> <table>')
const table = parseTableIdentifier(tableName)
const catalog = await SqlCatalog.open({ path, name, warehouse, storage: new LocalFileStorage() })
const { metadata } = await catalog.loadTable(table)
const id = newSnapshotId(metadata)

process.stdout.write('ready\n')
process.stdin.setEncoding('utf8')
await once(process.stdin, 'data')

let outcome: string
try {
  await catalog.commitTable(
    table,
    [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': metadata['current-snapshot-id'] }],
    appendUpdates(metadata, id, { operation: 'append', 'floe.commit-id': `pid-${process.pid}` }),
  )
  outcome = 'committed'
} catch (error) {
  outcome = isFloeError(error) ? error.code : String(error)
}
await catalog.close()
process.stdout.write(`${JSON.stringify({ outcome, id: id.toString() })}\n`)
process.exit(0)
