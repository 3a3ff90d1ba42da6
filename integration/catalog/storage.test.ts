// One contract for every ObjectStorage, run on the local filesystem and on the stack's Azurite;
// pyiceberg (fsspec/adlfs, pyarrow) then reads what Floe put, by the same location URI.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { isFloeError } from '../../shared/errors.ts'
import {
  AzureAccountsStorage,
  AzureBlobStorage,
  LocalFileStorage,
  type ObjectStorage,
  storageFor,
} from '../../shared/storage/index.ts'
import { endpoints, uniqueName } from '../harness.ts'
import { azuriteFileIo, azuriteLocation, pyiceberg } from './probe.ts'

const dir = mkdtempSync(join(tmpdir(), 'floe-storage-it-'))
after(async () => {
  await rm(dir, { recursive: true, force: true })
})

const bytes = (text: string) => new TextEncoder().encode(text)
const text = (data: Uint8Array) => new TextDecoder().decode(data)

const backends: {
  name: string
  storage: () => ObjectStorage
  root: () => string
  readProperties: () => Record<string, string>
}[] = [
  {
    name: 'local filesystem',
    storage: () => new LocalFileStorage(),
    root: () => `file://${dir}/${uniqueName('contract')}/`,
    readProperties: () => ({}),
  },
  {
    name: 'Azurite blob storage',
    storage: () => new AzureBlobStorage({ connectionString: endpoints().azurite.connectionString }),
    root: () => azuriteLocation(`${uniqueName('floe-contract')}/`),
    readProperties: azuriteFileIo,
  },
]

/** What the listing and delete tests put under a root of their own, by key: nested at two depths. */
const objects: Record<string, Uint8Array> = {
  'a/one.json': bytes('{"n":1}'),
  'a/replace.bin': bytes('second'),
  'a/for-pyiceberg.json': bytes('{"written-by":"floe"}'),
  'data/big.parquet': randomBytes(1024 * 1024),
}

async function putObjects(storage: ObjectStorage, root: string): Promise<void> {
  for (const [key, data] of Object.entries(objects)) await storage.put(`${root}${key}`, data)
}

for (const backend of backends) {
  describe(`object storage on the ${backend.name}`, () => {
    const storage = backend.storage()

    test('puts, gets and finds an object', async () => {
      const root = backend.root()
      await storage.put(`${root}a/one.json`, bytes('{"n":1}'))
      assert.equal(text(await storage.get(`${root}a/one.json`)), '{"n":1}')
      assert.equal(await storage.exists(`${root}a/one.json`), true)
      assert.equal(await storage.exists(`${root}a/none.json`), false)
    })

    test('replaces an object on a repeated put', async () => {
      const root = backend.root()
      await storage.put(`${root}a/replace.bin`, bytes('the first, longer version'))
      await storage.put(`${root}a/replace.bin`, bytes('second'))
      assert.equal(text(await storage.get(`${root}a/replace.bin`)), 'second')
    })

    test('streams a 20 MiB file in with putFile', async () => {
      const root = backend.root()
      const source = join(dir, `${uniqueName('source')}.parquet`)
      const content = randomBytes(20 * 1024 * 1024)
      await writeFile(source, content)
      await storage.putFile(`${root}data/big.parquet`, source)
      assert.ok(Buffer.from(await storage.get(`${root}data/big.parquet`)).equals(content))
    })

    test('says STORAGE_NOT_FOUND for a missing object', async () => {
      const root = backend.root()
      await assert.rejects(storage.get(`${root}missing`), (e) => isFloeError(e, 'STORAGE_NOT_FOUND'))
    })

    test('lists every object under the prefix with its size and time, in the same URI form', async () => {
      const root = backend.root()
      const started = Date.now()
      await putObjects(storage, root)
      const listed = new Map<string, number>()
      const times: number[] = []
      for await (const object of storage.list(root)) {
        listed.set(object.location, object.size)
        times.push(object.lastModified)
      }
      // Written just now, by the store's clock (Azurite's, to the second: this machine's).
      for (const time of times) assert.ok(Math.abs(time - started) < 5 * 60_000, `last modified at ${time}`)
      assert.deepEqual(
        [...listed.keys()].sort(),
        Object.keys(objects)
          .map((key) => `${root}${key}`)
          .sort(),
      )
      assert.equal(listed.get(`${root}a/replace.bin`), 6)
      assert.equal(listed.get(`${root}data/big.parquet`), 1024 * 1024)
    })

    test('is read by pyiceberg at the same location', async () => {
      const root = backend.root()
      const location = `${root}a/for-pyiceberg.json`
      await storage.put(location, bytes('{"written-by":"floe"}'))
      const read = await pyiceberg<{ exists: boolean; text: string }>('read', {
        properties: backend.readProperties(),
        location,
      })
      assert.deepEqual(read, { exists: true, text: '{"written-by":"floe"}' })
    })

    test('deletes objects and says whether each was there', async () => {
      const root = backend.root()
      await putObjects(storage, root)
      const deleted: boolean[] = []
      for await (const object of storage.list(root)) deleted.push(await storage.delete(object.location))
      assert.equal(deleted.length, Object.keys(objects).length)
      assert.ok(deleted.every(Boolean))
      assert.equal(await storage.delete(`${root}a/one.json`), false)
      const left = []
      for await (const object of storage.list(root)) left.push(object)
      assert.deepEqual(left, [])
    })
  })
}

describe('storage by location', () => {
  test('picks Azure for an abfs location and refuses another account', async () => {
    const { connectionString } = endpoints().azurite
    const storage = storageFor(azuriteLocation('x'), { azure: { connectionString } })
    // Accounts whose SAS a catalog vends sit beside the configured one.
    assert.ok(storage instanceof AzureAccountsStorage)
    await assert.rejects(storage.get('abfs://warehouse@otheraccount.dfs.core.windows.net/x'), (e) =>
      isFloeError(e, 'CONFIG_INVALID'),
    )
  })

  test('says STORAGE_UNAVAILABLE when the blob service cannot be reached', async () => {
    const { account, accountKey } = endpoints().azurite
    const storage = new AzureBlobStorage({
      accountName: account,
      accountKey,
      blobEndpoint: `http://127.0.0.1:1/${account}`,
      maxTries: 1,
    })
    await assert.rejects(storage.put(azuriteLocation('x'), bytes('x')), (e) => isFloeError(e, 'STORAGE_UNAVAILABLE'))
  })
})
