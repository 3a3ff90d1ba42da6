// Support for the operator-command tests of this folder: running a floe command, counting how
// often pyiceberg finds each id in a table, waiting for the counts a test expects (then settling),
// and stopping a worker as Kubernetes stops a pod.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { KafkaAdmin } from '../../shared/kafka/index.ts'
import type { Fleet, WorkerProcess } from '../e2e/fleet.ts'
import { endpoints } from '../harness.ts'

const run = promisify(execFile)
const floe = join(import.meta.dirname, '..', '..', 'bin', 'floe')
const readRows = join(import.meta.dirname, '..', 'iceberg', 'read_rows.py')

/** `bin/floe <args>`: its exit code and what it printed. */
export async function floeCommand(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(floe, args)
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

/** How often pyiceberg finds each id in the table. */
export async function idCounts(table: string): Promise<Map<string, number>> {
  const { stdout } = await run(endpoints().python, [readRows, '--uri', endpoints().rest.uri, table], {
    maxBuffer: 64 * 1024 * 1024,
  })
  const counts = new Map<string, number>()
  for (const row of JSON.parse(stdout) as { id: string }[]) counts.set(row.id, (counts.get(row.id) ?? 0) + 1)
  return counts
}

/** Ids whose count differs from the expected one, for the failure message. */
function mismatches(counts: ReadonlyMap<string, number>, expected: ReadonlyMap<string, number>): string[] {
  const ids = new Set([...counts.keys(), ...expected.keys()])
  return [...ids].filter((id) => (counts.get(id) ?? 0) !== (expected.get(id) ?? 0))
}

/**
 * Waits until the table holds each id as often as `expected` says, then lets three commit
 * intervals pass and reads again: a late duplicate lands in that time and is seen.
 */
export async function assertCounts(
  fleet: Fleet,
  expected: ReadonlyMap<string, number>,
  timeoutMs: number,
  table = fleet.table,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let wrong: string[] = ['not read yet']
  while (Date.now() < deadline) {
    // The first worker creates the table: until then there is nothing to read.
    const counts = await idCounts(table).catch(() => undefined)
    wrong = counts ? mismatches(counts, expected) : ['the table is not there yet']
    if (wrong.length === 0) break
    await sleep(2000)
  }
  assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} id(s) not as often as expected`)
  await sleep(3 * fleet.commitIntervalMs)
  const settled = mismatches(await idCounts(table), expected)
  assert.deepEqual(settled.slice(0, 10), [], `after settling, ${settled.length} id(s) not as often as expected`)
}

/** A worker stopped as Kubernetes stops a pod (SIGTERM, drain), and its group membership gone. */
export async function stop(worker: WorkerProcess, group: string): Promise<void> {
  worker.kill('SIGTERM')
  assert.equal(await worker.exited, 0, `worker ${worker.id} drained and exited cleanly`)
  const admin = new KafkaAdmin({ brokers: endpoints().kafka.brokers, clientId: 'it-rewind' })
  try {
    for (let i = 0; i < 60 && (await admin.groupMembers(group)).length > 0; i++) await sleep(1000)
  } finally {
    await admin.close()
  }
}
