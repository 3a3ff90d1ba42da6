// kill -9 of a process writing a shared WAL, at moments that fall anywhere in appends and cuts,
// then recovery against table offsets that move between restarts as commits, a stale range and
// a revocation would move them. After every restart the kept rotations must hold exactly the rows
// of the positions from the table's offset to where each partition reads on: no row twice, none
// missing (S1 and S6), read back with pyarrow.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { SharedRotation } from './rotation-manifest.ts'
import { recoverSharedLog } from './shared-recovery.ts'
import { needsPyarrow, readWithPyarrow, temporaryDirectory } from './test-support.ts'

const topic = 'orders'
const writer = join(import.meta.dirname, 'testdata', 'shared-writer.ts')

async function runUntilKilled(
  dir: string,
  table: Map<number, bigint>,
  assigned: number[],
  ms: number,
  mode: 'plain' | 'routed',
  /** Start the delay at the writer's first cut rather than when it is ready. */
  afterFirstCut: boolean,
): Promise<void> {
  const tableJson = JSON.stringify(Object.fromEntries([...table].map(([p, o]) => [p, String(o)])))
  const child = spawn(process.execPath, [writer, dir, tableJson, JSON.stringify(assigned), mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = once(child, 'exit')
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes(afterFirstCut ? 'cut' : 'ready')) resolve()
      })
      child.once('exit', (code) => reject(new Error(`the writer exited (${code}) before it was ready`)))
    })
    await sleep(ms)
  } finally {
    child.kill('SIGKILL')
    await exited
  }
}

/** Every row the kept rotations must hold: one per offset in [table, next), except every seventh. */
function expectedIds(table: Map<number, bigint>, next: Map<number, bigint | undefined>): string[] {
  const ids: string[] = []
  for (const [partition, end] of next) {
    for (let offset = table.get(partition) as bigint; offset < (end as bigint); offset++) {
      if (offset % 7n !== 6n) ids.push(String(BigInt(partition) * 1_000_000n + offset))
    }
  }
  return ids.sort()
}

function assertChains(
  rotations: readonly SharedRotation[],
  table: Map<number, bigint>,
  next: Map<number, bigint | undefined>,
) {
  const at = new Map(table)
  for (const rotation of rotations) {
    for (const range of rotation.ranges) {
      assert.equal(range.start, at.get(range.partition), `rotation ${rotation.sequence} chains for ${range.partition}`)
      at.set(range.partition, range.end)
    }
  }
  for (const [partition, end] of next) assert.equal(end, at.get(partition))
}

describe('a shared WAL killed with -9 at random moments', () => {
  for (const mode of ['plain', 'routed'] as const) {
    test(
      `recovery keeps exactly the rows from the table offsets to where each partition reads on, restart after restart${mode === 'routed' ? ' (routed into six tables, two open, evicting)' : ''}`,
      needsPyarrow,
      async (t) => {
        const dir = join(await temporaryDirectory(t), 'orders', 'shared')
        const table = new Map([0, 1, 2, 3].map((partition) => [partition, 0n]))
        let assigned = [0, 1, 2, 3]
        // fixed delays: the kills fall at different points of appends and cuts without making the test flaky
        const delays = [60, 250, 120, 400, 30, 180, 320, 90]
        let keptSomething = false
        for (const [restart, delay] of delays.entries()) {
          // every other kill falls after a cut however slow the machine is, so some restarts keep rotations
          await runUntilKilled(dir, table, assigned, delay, mode, restart % 2 === 1)
          const recovered = await recoverSharedLog(dir, { topic, tableOffsets: table, assigned })
          assertChains(recovered.rotations, table, recovered.next)
          const paths = recovered.rotations.flatMap((rotation) => rotation.segments.map((segment) => segment.localPath))
          const read = paths.length === 0 ? [] : await readWithPyarrow('event_id', paths)
          const ids = read.flatMap((file) => file.values as string[]).sort()
          assert.deepEqual(ids, expectedIds(table, recovered.next), `restart ${restart}: rows equal the kept ranges`)
          const owner = new Map(recovered.rotations.flatMap((r) => r.segments.map((s) => [s.localPath, r.id])))
          for (const file of read) assert.equal(file.floeMetadata['floe.rotation'], owner.get(file.path))
          if (mode === 'routed') {
            // each file holds its own table's rows only, and each rotation claims exactly its files' tables
            for (const file of read) {
              const tables = new Set((file.values as string[]).map((id) => `ns.t${(BigInt(id) % 1_000_000n) % 6n}`))
              assert.deepEqual([...tables], [file.floeMetadata['floe.table']], `${file.path} holds one table`)
            }
            for (const rotation of recovered.rotations) {
              const claimed = (rotation.tables ?? []).map(({ table: name }) => name).sort()
              const held = [...new Set(rotation.segments.map((segment) => segment.table))].sort()
              assert.deepEqual(held, claimed, `rotation ${rotation.sequence}: files and claims name the same tables`)
            }
          }
          if (recovered.rotations.length > 0) keptSomething = true

          // move the table as the fleet would between two restarts
          const [first] = recovered.rotations
          if (restart % 3 === 0 && first) {
            // a commit that landed before the kill: the oldest rotation is now behind the table
            for (const range of first.ranges) table.set(range.partition, range.end)
          } else if (restart % 3 === 1 && first?.ranges[0]) {
            // one stale range: its partition was committed elsewhere to inside it
            const range = first.ranges[0]
            if (range.end - range.start > 1n) table.set(range.partition, range.start + 1n)
          } else if (restart % 3 === 2) {
            // partition 3 moves away (what it read is dropped), or comes back at the table's offset
            assigned = assigned.includes(3) ? [0, 1, 2] : [0, 1, 2, 3]
          }
        }
        assert.ok(keptSomething, 'at least one restart found rotations to keep')
      },
    )
  }
})
