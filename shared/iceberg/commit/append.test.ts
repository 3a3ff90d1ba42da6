// appendFiles on a real catalog (the embedded SQL catalog, a local warehouse) whose commit request
// is delayed the way a slow network or a hung catalog delays it: the client hears nothing
// (COMMIT_STATE_UNKNOWN) and the request reaches the catalog later. However late it lands, the
// append finds it by its commit id and never commits the same files a second time.
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type Catalog, parseTableIdentifier, SqlCatalog, type TableIdentifier } from '../../catalog/index.ts'
import { FloeError, isFloeError } from '../../errors.ts'
import { LocalFileStorage } from '../../storage/index.ts'
import { readManifestList } from '../manifests/index.ts'
import { mainBranch, refSnapshotId, type TableMetadata } from '../metadata/index.ts'
import type { DataFile } from '../types.ts'
import { type AppendRequest, appendFiles } from './append.ts'

const storage = new LocalFileStorage()
let dir: string
let catalog: SqlCatalog
let serial = 0

function dataFile(name: string): DataFile {
  return {
    filePath: `file://${dir}/warehouse/data/${name}.parquet`,
    fileFormat: 'PARQUET',
    specId: 0,
    partition: {},
    recordCount: 10n,
    fileSizeInBytes: 1010n,
  }
}

async function newTable(): Promise<TableIdentifier> {
  const table = parseTableIdentifier(`late.t${++serial}`)
  await catalog.createTable(
    table,
    { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'id', required: false, type: 'long' }] },
    { fields: [] },
  )
  return table
}

/**
 * The real catalog, except that the first commit request "hangs": the caller gets
 * COMMIT_STATE_UNKNOWN at once, and the request itself is applied by the catalog only when
 * `release` is called (or dropped, if main moved meanwhile: the catalog's compare-and-set).
 */
function heldFirstCommit(): { catalog: Catalog; release: () => Promise<unknown>; loads: () => number } {
  let held: (() => Promise<unknown>) | undefined
  let first = true
  let loads = 0
  const proxy = new Proxy(catalog, {
    get(real, property) {
      if (property === 'commitTable') {
        return async (...args: Parameters<Catalog['commitTable']>) => {
          if (!first) return real.commitTable(...args)
          first = false
          held = () => real.commitTable(...args)
          throw new FloeError('COMMIT_STATE_UNKNOWN', 'request timed out after it was sent')
        }
      }
      if (property === 'loadTable') {
        return (...args: Parameters<Catalog['loadTable']>) => {
          loads++
          return real.loadTable(...args)
        }
      }
      const value = Reflect.get(real, property, real)
      return typeof value === 'function' ? value.bind(real) : value
    },
  }) as Catalog
  return {
    catalog: proxy,
    release: () => (held ? held().catch((error: unknown) => error) : Promise.resolve(undefined)),
    loads: () => loads,
  }
}

function commitsOf(metadata: TableMetadata, commitId: string): number {
  return metadata.snapshots.filter((s) => s.summary['test.commit-id'] === commitId).length
}

function request(over: Partial<AppendRequest> & Pick<AppendRequest, 'catalog' | 'table' | 'commitId'>): AppendRequest {
  return {
    storage,
    commitIdKey: 'test.commit-id',
    content: () => ({ files: [dataFile(over.commitId)] }),
    retry: { minWaitMs: 1, maxWaitMs: 2, retries: 6 },
    ...over,
  }
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-append-'))
  catalog = await SqlCatalog.open({
    path: join(dir, 'catalog.db'),
    name: 'floe',
    warehouse: `file://${dir}/warehouse`,
    storage,
  })
  await catalog.createNamespace(['late'])
})
after(async () => {
  await catalog.close()
  await rm(dir, { recursive: true, force: true })
})

describe('appendFiles after an unknown outcome', () => {
  test('finds a request that lands after a reload found nothing, and commits nothing twice', async () => {
    const table = await newTable()
    const held = heldFirstCommit()
    const reasons: string[] = []
    const result = await appendFiles(
      request({
        catalog: held.catalog,
        table,
        commitId: 'c1',
        // The held request lands right after the second reload, which saw nothing of it.
        content: async () => {
          if (held.loads() === 2) await held.release()
          return { files: [dataFile('c1')] }
        },
        onRetry: ({ reason }) => reasons.push(reason),
      }),
    )
    assert.equal(result.foundAfterUnknownOutcome, true)
    // attempt 2 was made against the table without the late request; attempt 3 lost the
    // compare-and-set to it, and the next reload found it
    assert.deepEqual(reasons, ['unknown', 'conflict'])
    const { metadata } = await catalog.loadTable(table)
    assert.equal(commitsOf(metadata, 'c1'), 1)
    assert.equal(metadata.snapshots.length, 1)
  })

  test('a later attempt that wins makes the held request fail when it arrives', async () => {
    const table = await newTable()
    const held = heldFirstCommit()
    const result = await appendFiles(request({ catalog: held.catalog, table, commitId: 'c2' }))
    assert.equal(result.foundAfterUnknownOutcome, false)
    const late = await held.release()
    assert.ok(isFloeError(late, 'COMMIT_CONFLICT'), `the held request is refused: ${String(late)}`)
    const { metadata } = await catalog.loadTable(table)
    assert.equal(commitsOf(metadata, 'c2'), 1)
  })

  test('gives up with COMMIT_STATE_UNKNOWN, naming the asserted snapshot, while the request may still land', async () => {
    const table = await newTable()
    // Every attempt times out; only the first is held, the others are never sent.
    let first = true
    const hung = new Proxy(catalog, {
      get(real, property) {
        if (property === 'commitTable') {
          return async () => {
            const code = first ? 'COMMIT_STATE_UNKNOWN' : 'CATALOG_UNAVAILABLE'
            first = false
            throw new FloeError(code, 'no answer')
          }
        }
        const value = Reflect.get(real, property, real)
        return typeof value === 'function' ? value.bind(real) : value
      },
    }) as Catalog
    await assert.rejects(
      appendFiles(request({ catalog: hung, table, commitId: 'c3', retry: { minWaitMs: 1, maxWaitMs: 2, retries: 2 } })),
      (error: unknown) =>
        isFloeError(error, 'COMMIT_STATE_UNKNOWN') &&
        error.details.commitId === 'c3' &&
        JSON.stringify(error.details.assertedSnapshotIds) === '[null]',
    )
  })

  test('a re-check refusing after main moved past the unknown request is a plain rejection, not unknown', async () => {
    const table = await newTable()
    let commits = 0
    const other = new Proxy(catalog, {
      get(real, property) {
        if (property === 'commitTable') {
          return async (...args: Parameters<Catalog['commitTable']>) => {
            commits++
            if (commits === 1) {
              // another writer commits first; our request, had it arrived, would be refused
              await appendFiles(request({ catalog, table, commitId: `other-${commits}` }))
              throw new FloeError('COMMIT_STATE_UNKNOWN', 'no answer')
            }
            return real.commitTable(...args)
          }
        }
        const value = Reflect.get(real, property, real)
        return typeof value === 'function' ? value.bind(real) : value
      },
    }) as Catalog
    // After the unknown attempt the re-check refuses: the outcome is known (not committed).
    await assert.rejects(
      appendFiles(
        request({
          catalog: other,
          table,
          commitId: 'c4',
          content: (metadata) => {
            if (refSnapshotId(metadata) !== null) throw new FloeError('COMMIT_REJECTED', 'moved on')
            return { files: [dataFile('c4')] }
          },
        }),
      ),
      (error: unknown) => isFloeError(error, 'COMMIT_REJECTED'),
    )
    const { metadata } = await catalog.loadTable(table)
    assert.equal(commitsOf(metadata, 'c4'), 0)
    assert.ok(metadata.refs[mainBranch])
  })
})

describe('appendFiles after another engine evolved the partition spec', () => {
  test('files of the old spec and of the new default go into one manifest per spec', async () => {
    const table = await newTable()
    await catalog.commitTable(
      table,
      [],
      [
        { action: 'add-spec', spec: { fields: [{ name: 'id_bucket', transform: 'bucket[4]', 'source-id': 1 }] } },
        { action: 'set-default-spec', 'spec-id': -1 },
      ],
    )
    const old = dataFile('old-spec')
    const current: DataFile = { ...dataFile('new-spec'), specId: 1, partition: { id_bucket: 2 } }
    const result = await appendFiles(
      request({ catalog, table, commitId: 'c5', content: () => ({ files: [old, current] }) }),
    )
    const { manifests } = readManifestList(await storage.get(result.snapshot['manifest-list']))
    assert.deepEqual(
      manifests.map((m) => [m.partitionSpecId, m.addedFilesCount]),
      [
        [1, 1],
        [0, 1],
      ],
    )
  })
})
