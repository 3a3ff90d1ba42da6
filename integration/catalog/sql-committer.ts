// One process of the SQL catalog race in sql-catalog.test.ts: loads the table, prints "ready",
// waits for "go" on stdin, commits an append on what it loaded, prints the outcome as JSON.
// Usage: node sql-committer.ts <sqlite path> <catalog name> <warehouse> <namespace.table>
import { once } from 'node:events'
import { parseTableIdentifier, SqlCatalog } from '../../shared/catalog/index.ts'
import { isFloeError } from '../../shared/errors.ts'
import { newSnapshotId, nextSequenceNumber } from '../../shared/iceberg/metadata/index.ts'
import { LocalFileStorage } from '../../shared/storage/index.ts'

const [path, name, warehouse, tableName] = process.argv.slice(2)
if (!path || !name || !warehouse || !tableName)
  throw new Error('usage: sql-committer.ts <path> <name> <warehouse> <table>')
const table = parseTableIdentifier(tableName)
const catalog = await SqlCatalog.open({ path, name, warehouse, storage: new LocalFileStorage() })
const { metadata } = await catalog.loadTable(table)
const id = newSnapshotId(metadata)
const parent = metadata['current-snapshot-id']

process.stdout.write('ready\n')
process.stdin.setEncoding('utf8')
await once(process.stdin, 'data')

let outcome: string
try {
  await catalog.commitTable(
    table,
    [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': parent }],
    [
      {
        action: 'add-snapshot',
        snapshot: {
          'snapshot-id': id,
          ...(parent === null ? {} : { 'parent-snapshot-id': parent }),
          'sequence-number': nextSequenceNumber(metadata),
          'timestamp-ms': Date.now(),
          'manifest-list': `${metadata.location}/metadata/snap-${id}.avro`,
          summary: { operation: 'append', 'floe.commit-id': `pid-${process.pid}` },
        },
      },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id },
    ],
  )
  outcome = 'committed'
} catch (error) {
  outcome = isFloeError(error) ? error.code : String(error)
}
await catalog.close()
process.stdout.write(`${JSON.stringify({ outcome, id: id.toString() })}\n`)
process.exit(0)
