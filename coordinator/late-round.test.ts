// A round that gave up with its outcome unknown lands while the next round commits: on a real
// catalog (the embedded SQL catalog), the next round commits only what the late one did not, its
// files once, and the late round is found with the ACK it owed.
import assert from 'node:assert/strict'
import { rm } from 'node:fs/promises'
import { after, before, describe, test } from 'node:test'
import { type Catalog, parseTableIdentifier, type SqlCatalog } from '../shared/catalog/index.ts'
import { FloeError, isFloeError } from '../shared/index.ts'
import { LocalFileStorage } from '../shared/storage/index.ts'
import { type CommitRoundResult, type CommitTarget, commitRound } from './commit-round.ts'
import { readProgress } from './progress.ts'
import { openTestCatalog } from './test-catalog.ts'
import { group, topic, written } from './test-fixtures.ts'
import { resolveCommits, type UnresolvedCommit } from './unresolved-commits.ts'

const table = parseTableIdentifier('late.events')
const storage = new LocalFileStorage()
let dir: string
let catalog: SqlCatalog

before(async () => {
  ;({ dir, catalog } = await openTestCatalog('floe-late-round-', table, storage))
})
after(async () => {
  await catalog.close()
  await rm(dir, { recursive: true, force: true })
})

const file = (name: string) => `file://${dir}/warehouse/late/events/data/${name}.parquet`

/** Its first commit request is held (the caller hears nothing); later ones never reach the catalog. */
function hangingCatalog(): { catalog: Catalog; release: () => Promise<unknown> } {
  let held: (() => Promise<unknown>) | undefined
  const proxy = new Proxy(catalog, {
    get(real, property) {
      if (property === 'commitTable') {
        return async (...args: Parameters<Catalog['commitTable']>) => {
          if (held) throw new FloeError('CATALOG_UNAVAILABLE', 'connection refused')
          held = () => real.commitTable(...args)
          throw new FloeError('COMMIT_STATE_UNKNOWN', 'request timed out after it was sent')
        }
      }
      const value = Reflect.get(real, property, real)
      return typeof value === 'function' ? value.bind(real) : value
    },
  }) as Catalog
  return { catalog: proxy, release: () => (held ? held() : Promise.resolve()) }
}

describe('a round whose commit lands while the next round commits', () => {
  test('the next round commits the rest of each range, and every file once', async () => {
    const hanging = hangingCatalog()
    const first = { commitId: 'r1', statuses: [written(0, 0n, 10n, { origin: 'offset-reset', files: [file('a')] })] }
    let unresolved: UnresolvedCommit | undefined
    await assert.rejects(
      commitRound(
        { catalog: hanging.catalog, storage, table, group, retry: { minWaitMs: 1, maxWaitMs: 2, retries: 1 } },
        { ...first, partial: false },
      ),
      (error: unknown) => {
        if (!isFloeError(error, 'COMMIT_STATE_UNKNOWN')) return false
        const asserted = error.details.assertedSnapshotIds as (string | null)[]
        unresolved = { ...first, partial: false, asserted, since: 0 }
        return true
      },
    )
    assert.ok(unresolved)
    const late = unresolved

    // The participant reports its whole chain again, with what it read since.
    let released = false
    const target: CommitTarget = {
      catalog,
      storage,
      table,
      group,
      retry: { minWaitMs: 1, maxWaitMs: 2 },
      unresolved: () => [late],
    }
    const racing: Catalog = new Proxy(catalog, {
      get(real, property) {
        if (property === 'commitTable') {
          return async (...args: Parameters<Catalog['commitTable']>) => {
            if (!released) {
              released = true
              await hanging.release()
            }
            return real.commitTable(...args)
          }
        }
        const value = Reflect.get(real, property, real)
        return typeof value === 'function' ? value.bind(real) : value
      },
    }) as Catalog
    const result: CommitRoundResult = await commitRound(
      { ...target, catalog: racing },
      {
        commitId: 'r2',
        statuses: [written(0, 0n, 25n, { origin: 'offset-reset', files: [file('a'), file('b')] })],
        partial: false,
      },
    )
    assert.equal(result.kind, 'committed')
    assert.deepEqual(
      result.plan.check.accepted.map((a) => [a.range.start, a.range.end, a.files.map((f) => f.filePath)]),
      [[10n, 25n, [file('b')]]],
    )
    const { metadata } = await catalog.loadTable(table)
    assert.deepEqual(readProgress(metadata, group).get(topic), new Map([[0, 25n]]))
    assert.deepEqual(
      metadata.snapshots.map((s) => [s.summary['floe.commit-id'], s.summary['added-data-files']]),
      [
        ['r1', '1'],
        ['r2', '1'],
      ],
    )
    const [found] = resolveCommits(metadata, group, [late]).resolved
    assert.equal(found?.kind, 'landed')
  })
})
