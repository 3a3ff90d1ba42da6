// A worker's shared WAL under kill -9, for shared-crash.test.ts: recovers the folder against the
// table offsets it is given, then reads four Kafka partitions for ever, one row per offset except
// every seventh (dead-lettered), and cuts every few batches, until it is killed. `routed` sends
// each row to table `ns.t<offset % 6>` with at most two tables open, evicting after every batch.
// Usage: shared-writer.ts DIR TABLE_OFFSETS_JSON ASSIGNED_JSON [routed]
import { SharedLog } from '../shared-log.ts'
import { recoverSharedLog } from '../shared-recovery.ts'
import { daysAndCountries, event, eventSchema } from '../test-support.ts'

const [dir, tableJson, assignedJson, mode] = process.argv.slice(2) as [string, string, string, string?]
const names = ['ns.t0', 'ns.t1', 'ns.t2', 'ns.t3', 'ns.t4', 'ns.t5']
const routed = mode === 'routed'
const topic = 'orders'
const tableOffsets = new Map(
  Object.entries(JSON.parse(tableJson) as Record<string, string>).map(([p, o]) => [Number(p), BigInt(o)]),
)
const assigned = JSON.parse(assignedJson) as number[]

const recovered = await recoverSharedLog(dir, { topic, tableOffsets, assigned })
const log = new SharedLog({
  dir,
  topic,
  schema: eventSchema,
  spec: daysAndCountries,
  recovered: recovered.rotations,
  nextSequence: recovered.nextSequence,
  rowGroupRows: 16,
  ...(routed ? { route: { names, maxOpenTables: 2 } } : {}),
})
for (const partition of assigned) log.read(partition, recovered.next.get(partition) as bigint)
process.stdout.write('ready\n')

for (let batch = 0; ; batch++) {
  for (const partition of assigned) {
    const from = log.position(partition) as bigint
    const count = 1 + ((batch * 7 + partition * 3) % 11)
    const rows = []
    for (let offset = from; offset < from + BigInt(count); offset++) {
      if (offset % 7n === 6n) continue
      rows.push({ ...event(Number(offset)), event_id: BigInt(partition) * 1_000_000n + offset })
    }
    const tables = routed ? rows.map((row) => Number((row.event_id as bigint) % 1_000_000n) % names.length) : undefined
    await log.append(partition, rows, from + BigInt(count), tables)
  }
  if (batch % 3 === 2) {
    await log.cut('commit')
    if (batch === 2) process.stdout.write('cut\n')
  }
}
