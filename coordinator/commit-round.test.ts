// commitRound against a real catalog (the embedded SQL catalog, a local warehouse), read back by
// pyiceberg: the re-check runs on every attempt, a concurrent coordinator's commit is seen, an
// unknown outcome is not committed twice, and the machine drives a round through it.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { createActor, fromPromise, waitFor } from 'xstate'
import { type Catalog, parseTableIdentifier, type SqlCatalog } from '../shared/catalog/index.ts'
import { appendFiles } from '../shared/iceberg/commit/index.ts'
import { FloeError } from '../shared/index.ts'
import { LocalFileStorage } from '../shared/storage/index.ts'
import type { RoundAck } from './commit-content.ts'
import { type CommitRoundResult, type CommitTarget, commitRound, commitRoundLogic } from './commit-round.ts'
import { coordinatorMachine } from './coordinator.machine.ts'
import type {
  AckRoundInput,
  AckRoundOutput,
  EndRoundInput,
  EndRoundOutput,
  StartRoundInput,
  StartRoundOutput,
} from './machine-types.ts'
import { offsetsKey, readProgress } from './progress.ts'
import { openTestCatalog } from './test-catalog.ts'
import { dataFile, empty, group, sender, topic, written } from './test-fixtures.ts'

const run = promisify(execFile)
const python = join(import.meta.dirname, '..', '.stack', 'venv', 'bin', 'python')
const table = parseTableIdentifier('rounds.events')
const storage = new LocalFileStorage()
let dir: string
let catalog: SqlCatalog
let target: CommitTarget

interface PyTable {
  snapshots: Array<{ id: string; summary: Record<string, string> }>
  properties: Record<string, string>
  files: string[]
}

async function readWithPyiceberg(): Promise<PyTable> {
  const { stdout } = await run(python, [
    join(import.meta.dirname, 'read_table.py'),
    join(dir, 'catalog.db'),
    'floe',
    'rounds.events',
  ])
  return JSON.parse(stdout) as PyTable
}

function file(name: string): string {
  return `file://${dir}/warehouse/rounds/events/data/${name}.parquet`
}

/** The real catalog, with `before` run ahead of the first commitTable call (another writer's move). */
function interleaved(around: (commit: () => Promise<unknown>) => Promise<unknown>): Catalog {
  let first = true
  return new Proxy(catalog, {
    get(real, property) {
      if (property === 'commitTable') {
        return async (...args: Parameters<Catalog['commitTable']>) => {
          if (!first) return real.commitTable(...args)
          first = false
          return around(() => real.commitTable(...args))
        }
      }
      const value = Reflect.get(real, property, real)
      return typeof value === 'function' ? value.bind(real) : value
    },
  }) as Catalog
}

const committed = (result: CommitRoundResult) => {
  assert.equal(result.kind, 'committed')
  return result as Extract<CommitRoundResult, { kind: 'committed' }>
}

before(async () => {
  ;({ dir, catalog } = await openTestCatalog('floe-rounds-', table, storage))
  target = { catalog, storage, table, group, retry: { minWaitMs: 1, maxWaitMs: 2 } }
})
after(async () => {
  await catalog.close()
  await rm(dir, { recursive: true, force: true })
})

describe('commitRound', () => {
  test("commits partitions' first-ever ranges with the marker in the summary and the properties", async () => {
    const result = committed(
      await commitRound(target, {
        commitId: 'round-1',
        statuses: [
          written(0, 0n, 10n, { origin: 'offset-reset', files: [file('p0-a')] }),
          written(1, 100n, 120n, { origin: 'group-offset', files: [file('p1-a')] }),
        ],
        partial: false,
      }),
    )
    assert.equal(result.attempts, 1)
    const { metadata } = await catalog.loadTable(table)
    assert.deepEqual(
      readProgress(metadata, group).get(topic),
      new Map([
        [0, 10n],
        [1, 120n],
      ]),
    )
  })

  test("skips another writer's snapshot and rejects a replay while committing what is contiguous", async () => {
    await appendFiles({
      catalog,
      storage,
      table,
      commitId: 'compaction-1',
      commitIdKey: 'other.job-id',
      content: () => ({ files: [dataFile(file('foreign'))] }),
    })
    const result = committed(
      await commitRound(target, {
        commitId: 'round-2',
        statuses: [
          written(0, 10n, 25n, { files: [file('p0-b')] }),
          written(1, 100n, 120n, { origin: 'group-offset', files: [file('p1-a-again')] }),
        ],
        partial: true,
      }),
    )
    assert.deepEqual(
      result.plan.check.accepted.map((a) => a.partition),
      [0],
    )
    assert.deepEqual(
      result.plan.check.rejected.map((r) => [r.partition, r.reason, r.tableOffset]),
      [[1, 'behind-table', 120n]],
    )
  })

  test('gives a rejected outcome, and no snapshot, when every partition with data is out of line', async () => {
    const before = await catalog.loadTable(table)
    const result = await commitRound(target, {
      commitId: 'round-3',
      statuses: [written(0, 0n, 10n, { files: [file('p0-a-replayed')] })],
      partial: false,
    })
    assert.equal(result.kind, 'rejected')
    assert.deepEqual(
      result.plan.check.rejected.map((r) => r.reason),
      ['behind-table'],
    )
    const after = await catalog.loadTable(table)
    assert.equal(after.metadata['current-snapshot-id'], before.metadata['current-snapshot-id'])
  })

  test('re-checks after a conflict: a second coordinator that committed first wins the partitions it took', async () => {
    const zombie: CommitTarget = { ...target }
    const racing = interleaved(async (commit) => {
      // Another coordinator commits partition 1's next range between our load and our commit.
      await commitRound(zombie, {
        commitId: 'round-4-other',
        statuses: [written(1, 120n, 140n, { files: [file('p1-b-other')] })],
        partial: false,
      })
      return commit()
    })
    const retries: string[] = []
    const result = committed(
      await commitRound(
        { ...target, catalog: racing },
        {
          commitId: 'round-4',
          statuses: [
            written(0, 25n, 30n, { files: [file('p0-c')] }),
            written(1, 120n, 140n, { files: [file('p1-b')] }),
          ],
          partial: false,
          onRetry: ({ reason }) => retries.push(reason),
        },
      ),
    )
    assert.deepEqual(retries, ['conflict'])
    assert.equal(result.attempts, 2)
    assert.deepEqual(
      result.plan.check.accepted.map((a) => a.partition),
      [0],
    )
    assert.deepEqual(
      result.plan.check.rejected.map((r) => [r.partition, r.reason, r.tableOffset]),
      [[1, 'behind-table', 140n]],
    )
  })

  test('after an unknown outcome finds its own commit instead of committing again, and reports what it committed', async () => {
    const lostAnswer = interleaved(async (commit) => {
      await commit()
      throw new FloeError('COMMIT_STATE_UNKNOWN', 'connection reset after the request was sent')
    })
    const result = committed(
      await commitRound(
        { ...target, catalog: lostAnswer },
        { commitId: 'round-5', statuses: [written(0, 30n, 45n, { files: [file('p0-d')] })], partial: false },
      ),
    )
    assert.equal(result.foundAfterUnknownOutcome, true)
    assert.deepEqual(
      result.plan.check.accepted.map((a) => [a.partition, a.range.end]),
      [[0, 45n]],
    )
    const { metadata } = await catalog.loadTable(table)
    const rounds = metadata.snapshots.filter((s) => s.summary['floe.commit-id'] === 'round-5')
    assert.equal(rounds.length, 1)
  })

  test('the coordinator machine runs a round on the table through commitRoundLogic', async () => {
    const acks: RoundAck[] = []
    let starts = 0
    const machine = coordinatorMachine.provide({
      actors: {
        startRound: fromPromise<StartRoundOutput, StartRoundInput>(async ({ signal }) => {
          // One round only: the next START waits until the test stops the machine.
          if (starts++ > 0) await new Promise((resolve) => signal.addEventListener('abort', resolve))
          const { metadata } = await catalog.loadTable(table)
          return {
            commitId: 'round-6',
            expected: new Map([[topic, 2]]),
            tableOffsets: readProgress(metadata, group),
            startedAt: 0,
          }
        }),
        endRound: fromPromise<EndRoundOutput, EndRoundInput>(async () => ({ endedAt: 1 })),
        commitRound: commitRoundLogic(target, () => 2),
        ackRound: fromPromise<AckRoundOutput, AckRoundInput>(async ({ input }) => {
          acks.push(input.ack)
          return { ackedAt: 3 }
        }),
      },
    })
    const actor = createActor(machine, {
      input: { dataset: 'events', group, commitIntervalMs: 0, commitTimeoutMs: 60_000 },
    })
    actor.start()
    await waitFor(actor, (snapshot) => snapshot.value === 'collecting')
    actor.send({
      type: 'control.write-status',
      report: {
        commitId: 'round-6',
        sender: sender(),
        statuses: [written(0, 45n, 50n, { files: [file('p0-e')] }), empty(1)],
      },
      receivedAt: 1,
    })
    await waitFor(actor, (snapshot) => snapshot.context.roundsCompleted === 1)
    actor.stop()
    assert.deepEqual(
      acks[0]?.committed.map((c) => [c.partition, c.offset, c.filePaths]),
      [[0, 50n, [file('p0-e')]]],
    )
    const { metadata } = await catalog.loadTable(table)
    assert.equal(acks[0]?.snapshotId, metadata['current-snapshot-id'])
  })

  test('pyiceberg reads the rounds: each snapshot carries its commit id and the cumulative marker', async () => {
    const read = await readWithPyiceberg()
    const marker = offsetsKey(group)
    const floe = read.snapshots.filter((s) => s.summary['floe.commit-id'])
    assert.deepEqual(
      floe.map((s) => [s.summary['floe.commit-id'], s.summary[marker]]),
      [
        ['round-6', '{"events":{"0":50,"1":140}}'],
        ['round-5', '{"events":{"0":45,"1":140}}'],
        ['round-4', '{"events":{"0":30,"1":140}}'],
        ['round-4-other', '{"events":{"0":25,"1":140}}'],
        ['round-2', '{"events":{"0":25,"1":120}}'],
        ['round-1', '{"events":{"0":10,"1":120}}'],
      ],
    )
    assert.equal(floe.find((s) => s.summary['floe.commit-id'] === 'round-2')?.summary['floe.round.partial'], 'true')
    assert.equal(floe.find((s) => s.summary['floe.commit-id'] === 'round-2')?.summary['floe.round.rejected'], '1')
    assert.equal(read.properties[marker], '{"events":{"0":50,"1":140}}')
    assert.deepEqual(
      read.files,
      ['foreign', 'p0-a', 'p0-b', 'p0-c', 'p0-d', 'p0-e', 'p1-a', 'p1-b-other'].map(file).sort(),
    )
  })
})
