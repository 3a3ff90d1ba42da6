// A routed round half committed, on the real stack: the routing tests freeze the REST catalog right
// after a round committed one of its tables (seen in the catalog's warehouse) and kill the
// coordinator there, so some tables hold the round and the others and the ledger do not. And what
// the routing tests read of a worker: how many tables it evicted.
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { endpoints } from '../harness.ts'
import { freezeService, thawService } from '../stack/index.ts'
import type { Fleet, WorkerProcess } from './fleet.ts'

/** How many metadata files the route's tables (`events_*`) have in the warehouse: one per commit. */
export async function routedTableCommits(namespace: string): Promise<number> {
  const warehouse = fileURLToPath(endpoints().rest.warehouse)
  let count = 0
  const folder = join(warehouse, namespace)
  for (const table of await readdir(folder).catch(() => [])) {
    if (!table.startsWith('events_')) continue
    const files = await readdir(join(folder, table, 'metadata')).catch(() => [])
    count += files.filter((name) => name.endsWith('.metadata.json')).length
  }
  return count
}

/** Resolves as soon as one of the route's tables has committed since `before` was counted. */
export async function waitForRoutedCommit(namespace: string, before: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while ((await routedTableCommits(namespace)) <= before) {
    if (Date.now() > deadline) throw new Error('no routed table committed')
    await sleep(20)
  }
}

/**
 * Sends `wave`, and as soon as one of its round's tables committed freezes the REST catalog, kills
 * the coordinator (looked up then: a rebalance may have moved it), and thaws the catalog after 2 s.
 * Resolves, once the wave is sent, to the killed worker (not restarted).
 */
export async function killCoordinatorMidRound(
  t: Pick<TestContext, 'after'>,
  fleet: Fleet,
  wave: () => Promise<unknown>,
): Promise<WorkerProcess> {
  const namespace = fleet.table.split('.')[0] as string
  const before = await routedTableCommits(namespace)
  const sent = wave()
  await waitForRoutedCommit(namespace, before, 2 * 60_000)
  const coordinator = await fleet.coordinator()
  freezeService('iceberg-rest')
  t.after(() => thawService('iceberg-rest'))
  coordinator.kill('SIGKILL')
  await coordinator.exited
  await sleep(2000)
  thawService('iceberg-rest')
  await sent
  return coordinator
}

/** The worker's floe_table_evictions_total. */
export async function evictions(fleet: Fleet, worker: WorkerProcess): Promise<number> {
  const metrics = await fleet.metrics(worker)
  return [...metrics].find(([name]) => name.startsWith('floe_table_evictions_total{'))?.[1] ?? 0
}
