import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { isFloeError } from '../errors.ts'
import { LocalFileStorage, localPath, locationKey, RoutedStorage, schemeOf, storageFor } from './index.ts'

let root: string
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'floe-storage-'))
})
after(async () => {
  await rm(root, { recursive: true, force: true })
})

const bytes = (text: string) => new TextEncoder().encode(text)
const text = (data: Uint8Array) => new TextDecoder().decode(data)

describe('localPath', () => {
  const cases = [
    { location: 'file:///w/t/data/a.parquet', path: '/w/t/data/a.parquet' },
    { location: 'file:/w/t/metadata/00000-x.metadata.json', path: '/w/t/metadata/00000-x.metadata.json' },
    { location: 'file://localhost/w/t', path: '/w/t' },
    { location: '/w/t', path: '/w/t' },
    { location: 'file:///w/with space/%20', path: '/w/with space/%20' },
  ]
  for (const { location, path } of cases) {
    test(`maps ${location} to ${path}`, () => assert.equal(localPath(location), path))
  }

  for (const location of ['abfs://c@a.dfs.core.windows.net/x', 'file://otherhost/x', 'file:relative/x', 'relative/x']) {
    test(`refuses ${location}`, () => {
      assert.throws(
        () => localPath(location),
        (e) => isFloeError(e, 'CONFIG_INVALID'),
      )
    })
  }
})

describe('LocalFileStorage', () => {
  const storage = new LocalFileStorage()

  test('puts an object under missing directories and gets it back', async () => {
    const location = `file://${root}/a/b/c/one.json`
    await storage.put(location, bytes('{"v":1}'))
    assert.equal(text(await storage.get(location)), '{"v":1}')
    assert.equal(await storage.exists(location), true)
  })

  test('replaces an object on a repeated put and leaves no temporary file', async () => {
    const location = `file://${root}/replace/x.bin`
    await storage.put(location, bytes('first, longer content'))
    await storage.put(location, bytes('second'))
    assert.equal(text(await storage.get(location)), 'second')
    assert.deepEqual(await readdir(join(root, 'replace')), ['x.bin'])
  })

  test('streams a local file in with putFile', async () => {
    const source = join(root, 'source.parquet')
    const content = Buffer.alloc(3 * 1024 * 1024, 7)
    await writeFile(source, content)
    const location = `file:${root}/upload/data/f.parquet`
    await storage.putFile(location, source)
    assert.deepEqual(Buffer.from(await storage.get(location)), content)
  })

  test('says STORAGE_NOT_FOUND for a missing object and false for exists', async () => {
    await assert.rejects(storage.get(`file://${root}/nothing`), (e) => isFloeError(e, 'STORAGE_NOT_FOUND'))
    assert.equal(await storage.exists(`file://${root}/nothing`), false)
    assert.equal(await storage.exists(`file://${root}/a`), false, 'a directory is not an object')
  })

  test('deletes an object and says whether there was one', async () => {
    const location = `file://${root}/delete/me`
    await storage.put(location, bytes('x'))
    assert.equal(await storage.delete(location), true)
    assert.equal(await storage.delete(location), false)
    assert.equal(await storage.exists(location), false)
  })

  test('lists every object under a prefix, in the prefix URI form, with sizes and times', async () => {
    const prefix = `file://${root}/list/t/`
    const written = Date.now()
    await storage.put(`${prefix}data/b.parquet`, bytes('bb'))
    await storage.put(`${prefix}data/a.parquet`, bytes('a'))
    await storage.put(`${prefix}metadata/v.json`, bytes('vvv'))
    await storage.put(`file://${root}/list/tother/x`, bytes('x'))
    // The file's modification time, not the listing's: a day back is listed a day back (whole
    // seconds, which a file system's time holds exactly).
    const dayAgo = new Date(Math.floor(written / 1000) * 1000 - 86_400_000)
    await utimes(`${root}/list/t/metadata/v.json`, dayAgo, dayAgo)
    const listed = []
    for await (const object of storage.list(prefix)) listed.push(object)
    assert.deepEqual(
      listed.map(({ location, size }) => ({ location, size })),
      [
        { location: `${prefix}data/a.parquet`, size: 1 },
        { location: `${prefix}data/b.parquet`, size: 2 },
        { location: `${prefix}metadata/v.json`, size: 3 },
      ],
    )
    for (const object of listed.slice(0, 2)) {
      assert.ok(Math.abs(object.lastModified - written) < 60_000, `${object.location} was just written`)
    }
    assert.equal(listed[2]!.lastModified, dayAgo.getTime())
    const partial = []
    for await (const object of storage.list(`file:${root}/list/t`)) partial.push(object.location)
    assert.equal(partial.length, 4, 'a prefix without a slash also matches its siblings')
    assert.ok(partial.every((l) => l.startsWith(`file:${root}/list/t`)))
  })

  test('lists nothing under a prefix that does not exist', async () => {
    const listed = []
    for await (const object of storage.list(`file://${root}/none/`)) listed.push(object)
    assert.deepEqual(listed, [])
  })

  test('rejects with the AbortError when the caller aborts', async () => {
    const controller = new AbortController()
    controller.abort()
    await assert.rejects(storage.put(`file://${root}/aborted`, bytes('x'), { signal: controller.signal }), {
      name: 'AbortError',
    })
    assert.equal(await storage.exists(`file://${root}/aborted`), false)
  })
})

describe('locationKey', () => {
  const same: [string, string][] = [
    ['s3://lake/t/data/a.parquet', 's3a://lake/t/data/a.parquet'],
    ['s3://lake/t/data/a.parquet', 'S3N://LAKE/t//data/a.parquet'],
    ['abfss://c@acct.dfs.core.windows.net/t/a', 'abfs://c@acct.dfs.core.windows.net/t/a'],
    ['abfss://c@acct.dfs.core.windows.net/t/a', 'wasbs://c@acct.blob.core.windows.net/t/a'],
    ['file:///w/t/a', 'file:/w/t/a'],
    ['file:///w/t/a', 'file://localhost/w/t/a'],
    ['file:///w/t/a', '/w/t/a'],
    ['file:///w/t/', 'file:/w/t'],
    ['s3://lake/t/kind=a b/x', 's3://lake/t/kind=a%20b/x'],
  ]
  for (const [a, b] of same) {
    test(`${a} and ${b} name one object`, () => assert.equal(locationKey(a), locationKey(b)))
  }
  const different: [string, string][] = [
    ['s3://lake/t/a', 's3://other/t/a'],
    ['abfss://c@acct.dfs.core.windows.net/t/a', 'abfss://c@other.dfs.core.windows.net/t/a'],
    ['abfss://c@acct.dfs.core.windows.net/t/a', 'abfss://d@acct.dfs.core.windows.net/t/a'],
    ['file:///w/t/A', 'file:///w/t/a'],
    ['s3://lake/t/a', 'file:///lake/t/a'],
  ]
  for (const [a, b] of different) {
    test(`${a} and ${b} do not`, () => assert.notEqual(locationKey(a), locationKey(b)))
  }
  test('keeps a lone percent sign as a character of the name', () => {
    assert.equal(locationKey('s3://lake/t/100%.parquet'), 's3://lake/t/100%.parquet')
  })
})

describe('storage routing', () => {
  const schemes = [
    { location: 'file:///x', scheme: 'file' },
    { location: '/x', scheme: 'file' },
    { location: 'ABFSS://c@a.dfs.core.windows.net/x', scheme: 'abfss' },
    { location: 's3://b/x', scheme: 's3' },
  ]
  for (const { location, scheme } of schemes) {
    test(`reads the scheme of ${location} as ${scheme}`, () => assert.equal(schemeOf(location), scheme))
  }

  test('picks local storage for file locations', () => {
    assert.ok(storageFor('file:///x') instanceof LocalFileStorage)
  })

  test('refuses an Azure or S3 location without its configuration', () => {
    assert.throws(
      () => storageFor('abfs://c@a.dfs.core.windows.net/x'),
      (e) => isFloeError(e, 'CONFIG_INVALID'),
    )
    assert.throws(
      () => storageFor('s3://bucket/x'),
      (e) => isFloeError(e, 'CONFIG_INVALID'),
    )
  })

  test('routes each call by its location', async () => {
    const routed = new RoutedStorage()
    await routed.put(`file://${root}/routed/x`, bytes('r'))
    assert.equal(text(await routed.get(`${root}/routed/x`)), 'r')
  })
})
