// The two WAL layouts side by side, at the WAL alone (no Kafka, no upload, no commit): the same
// rows spread over N Kafka partitions in polls of 10,000, four Iceberg partitions (day(ts),
// bucket[4](user_id)), a round's cut every 50,000 rows. `partition`: one PartitionLog per Kafka
// partition, all rotated at the round (today's record path). `shared`: one SharedLog for the
// dataset, cut once. Prints per layout and N the files per round, their mean size, wall time and
// CPU. Not part of `npm test`; the end-to-end numbers come from bench/scale.bench.ts.
//
//   node participant/wal/layout.bench.ts [rows=200000] [partitions=4,256,1000]
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PartitionSpec, StructValue } from '../../shared/iceberg/index.ts'
import { eventPool, schema } from './bench-rows.ts'
import { PartitionLog, SharedLog } from './index.ts'

const totalRows = Number(process.argv[2] ?? 200_000)
const partitionCounts = (process.argv[3] ?? '4,256,1000').split(',').map(Number)
const pollRows = 10_000
const roundRows = 50_000

const spec: PartitionSpec = {
  'spec-id': 0,
  fields: [
    { 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' },
    { 'source-id': 3, 'field-id': 1001, name: 'user_bucket', transform: 'bucket[4]' },
  ],
}

interface Outcome {
  files: number
  bytes: number
  rounds: number
}

/** One poll split over the partitions, as a fetch of many partitions returns it. */
function* polls(pool: StructValue[], partitions: number): Generator<Array<{ partition: number; rows: StructValue[] }>> {
  for (let written = 0; written < totalRows; written += pollRows) {
    const from = written % pool.length
    const poll = pool.slice(from, from + Math.min(pollRows, totalRows - written))
    const share = Math.ceil(poll.length / partitions)
    const parts = []
    for (let p = 0; p < partitions && p * share < poll.length; p++) {
      parts.push({ partition: p, rows: poll.slice(p * share, (p + 1) * share) })
    }
    yield parts
  }
}

async function perPartition(dir: string, pool: StructValue[], partitions: number): Promise<Outcome> {
  const logs = Array.from(
    { length: partitions },
    (_, partition) =>
      new PartitionLog({
        dir: join(dir, `events-${partition}`),
        topic: 'events',
        partition,
        schema,
        spec,
        startOffset: 0n,
      }),
  )
  const outcome: Outcome = { files: 0, bytes: 0, rounds: 0 }
  const round = async () => {
    outcome.rounds++
    for (const log of logs) {
      for (const segment of (await log.rotate('commit'))?.segments ?? []) {
        outcome.files++
        outcome.bytes += segment.sizeBytes
      }
    }
  }
  let since = 0
  for (const poll of polls(pool, partitions)) {
    for (const { partition, rows } of poll) {
      const log = logs[partition] as PartitionLog
      await log.append(rows, log.end + BigInt(rows.length))
      since += rows.length
    }
    if (since >= roundRows) {
      await round()
      since = 0
    }
  }
  if (since > 0) await round()
  for (const log of logs) await log.close()
  return outcome
}

async function shared(dir: string, pool: StructValue[], partitions: number): Promise<Outcome> {
  const log = new SharedLog({ dir: join(dir, 'shared'), topic: 'events', schema, spec })
  for (let partition = 0; partition < partitions; partition++) log.read(partition, 0n)
  const outcome: Outcome = { files: 0, bytes: 0, rounds: 0 }
  const round = async () => {
    outcome.rounds++
    for (const segment of (await log.cut('commit'))?.segments ?? []) {
      outcome.files++
      outcome.bytes += segment.sizeBytes
    }
  }
  let since = 0
  for (const poll of polls(pool, partitions)) {
    for (const { partition, rows } of poll) {
      await log.append(partition, rows, (log.position(partition) as bigint) + BigInt(rows.length))
      since += rows.length
    }
    if (since >= roundRows) {
      await round()
      since = 0
    }
  }
  if (since > 0) await round()
  await log.close()
  return outcome
}

async function main(): Promise<void> {
  const pool = eventPool(50_000)
  console.log(
    `${totalRows} rows, polls of ${pollRows}, a round every ${roundRows} rows, 4 Iceberg partitions, Node ${process.version}`,
  )
  console.log('layout     Kafka partitions  files/round  KB/file   wall s   CPU s')
  for (const partitions of partitionCounts) {
    for (const [name, run] of [
      ['partition', perPartition],
      ['shared', shared],
    ] as const) {
      const dir = await mkdtemp(join(tmpdir(), 'floe-layout-'))
      try {
        const started = performance.now()
        const cpu = process.cpuUsage()
        const outcome = await run(dir, pool, partitions)
        const used = process.cpuUsage(cpu)
        const seconds = (performance.now() - started) / 1000
        console.log(
          [
            name.padEnd(10),
            String(partitions).padStart(16),
            (outcome.files / outcome.rounds).toFixed(1).padStart(12),
            (outcome.bytes / outcome.files / 1024).toFixed(1).padStart(9),
            seconds.toFixed(2).padStart(8),
            ((used.user + used.system) / 1e6).toFixed(2).padStart(7),
          ].join(' '),
        )
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    }
  }
}

await main()
