// A routed batch that names more tables than may be open at once is written one table at a time
// (open-segments.ts), so that each table's rows of the batch go into one file however many tables
// the bound closes meanwhile: grouped here, tables in the order they first appear, each table's
// rows and partition keys in batch order. Only that case pays for a map lookup per row.
import type { StructValue } from '../../shared/iceberg/index.ts'

/** One table's rows of a batch, with each row's Iceberg partition key. */
export interface TableRun {
  readonly table: number
  readonly rows: StructValue[]
  readonly keys: string[]
}

/** `keys` and `tables` are parallel to `rows` (`keys` may be longer: a reused array). */
export function groupByTable(
  rows: readonly StructValue[],
  keys: readonly string[],
  tables: readonly number[],
): TableRun[] {
  const runs: TableRun[] = []
  const runOf = new Map<number, TableRun>()
  let last: TableRun | undefined
  for (let i = 0; i < rows.length; i++) {
    const table = tables[i] as number
    let run = last?.table === table ? last : runOf.get(table)
    if (run === undefined) {
      run = { table, rows: [], keys: [] }
      runOf.set(table, run)
      runs.push(run)
    }
    run.rows.push(rows[i] as StructValue)
    run.keys.push(keys[i] as string)
    last = run
  }
  return runs
}
