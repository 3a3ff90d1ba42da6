import assert from 'node:assert/strict'
import { readdir, readFile, rm } from 'node:fs/promises'
import { describe, test } from 'node:test'
import { FloeError, isFloeError } from '../../shared/errors.ts'
import {
  LocalFileStorage,
  type ObjectStorage,
  RoutedStorage,
  type StorageCallOptions,
  type StoredObject,
} from '../../shared/storage/index.ts'
import {
  bloomSidecarLocation,
  dataObjectLocation,
  probeBloomSidecar,
  type UploadClock,
  Uploader,
  type UploadLogEvent,
  writeBloomSidecar,
} from './index.ts'
import { temporaryDirectory, writeSegment } from './test-support.ts'

/** Records every wait instead of sleeping; `onSleep` may abort the caller, as a shutdown would. */
function fakeClock(onSleep: (waits: number[]) => unknown = () => {}): UploadClock & { waits: number[] } {
  const waits: number[] = []
  return {
    waits,
    now: () => waits.reduce((sum, ms) => sum + ms, 0),
    async sleep(ms, signal) {
      waits.push(ms)
      await onSleep(waits)
      signal?.throwIfAborted()
    },
  }
}

/** Local storage whose chosen operations fail a number of times (STORAGE_UNAVAILABLE), then work. */
class FlakyStorage implements ObjectStorage {
  readonly inner = new LocalFileStorage()
  readonly calls: string[] = []
  failures: Partial<Record<'put' | 'putFile' | 'list', number>>
  /** putFile writes a truncated object this many times (a torn upload the size check must catch). */
  tornPuts = 0

  constructor(failures: FlakyStorage['failures'] = {}) {
    this.failures = failures
  }

  #maybeFail(operation: 'put' | 'putFile' | 'list', location: string) {
    this.calls.push(`${operation} ${location.slice(location.lastIndexOf('/') + 1)}`)
    const left = this.failures[operation] ?? 0
    if (left > 0) {
      this.failures[operation] = left - 1
      throw new FloeError('STORAGE_UNAVAILABLE', `${operation} failed on purpose`, { details: { location } })
    }
  }

  async put(location: string, bytes: Uint8Array, options?: StorageCallOptions) {
    this.#maybeFail('put', location)
    return this.inner.put(location, bytes, options)
  }
  async putFile(location: string, localPath: string, options?: StorageCallOptions) {
    this.#maybeFail('putFile', location)
    if (this.tornPuts > 0) {
      this.tornPuts--
      return this.inner.put(location, (await readFile(localPath)).subarray(0, 100), options)
    }
    return this.inner.putFile(location, localPath, options)
  }
  get(location: string, options?: StorageCallOptions) {
    return this.inner.get(location, options)
  }
  exists(location: string) {
    return this.inner.exists(location)
  }
  delete(location: string) {
    return this.inner.delete(location)
  }
  async *list(prefix: string): AsyncIterable<StoredObject> {
    this.#maybeFail('list', prefix)
    yield* this.inner.list(prefix)
  }
}

const uuid = '0190a3c2-7e1f-7b5a-9c3d-2f4e5a6b7c8d'

describe('object names', () => {
  const cases = [
    {
      base: 'file:///w/ns/t/data',
      partitionPath: 'ts_day=2025-11-30',
      name: `file:///w/ns/t/data/ts_day=2025-11-30/${uuid}.parquet`,
    },
    { base: 'file:///w/ns/t/data/', partitionPath: '', name: `file:///w/ns/t/data/${uuid}.parquet` },
    {
      base: 'abfs://warehouse@acct.dfs.core.windows.net/ns/t/data',
      partitionPath: 'kind=a/ts_hour=2025-11-30-10',
      name: `abfs://warehouse@acct.dfs.core.windows.net/ns/t/data/kind=a/ts_hour=2025-11-30-10/${uuid}.parquet`,
    },
  ]
  for (const { base, partitionPath, name } of cases) {
    test(`puts a segment of partition "${partitionPath}" under ${base} at ${name}`, () => {
      assert.equal(dataObjectLocation(base, { uuid, partitionPath }), name)
      assert.equal(bloomSidecarLocation(name), `${name}.bloom`)
    })
  }

  const refused = [
    { uuid: '../../etc/passwd', partitionPath: '' },
    { uuid: 'not-a-uuid', partitionPath: '' },
    { uuid, partitionPath: 'a=1/../../b' },
    { uuid, partitionPath: 'a=1//b=2' },
  ]
  for (const segment of refused) {
    test(`refuses the object name of segment ${segment.uuid} in "${segment.partitionPath}"`, () => {
      assert.throws(
        () => dataObjectLocation('file:///w/t/data', segment),
        (e) => isFloeError(e, 'INVARIANT_BROKEN'),
      )
    })
  }
})

describe('Uploader on a local warehouse', () => {
  test('streams the segment to its object, with the stored size, and its bloom sidecar beside it', async (t) => {
    const directory = await temporaryDirectory(t)
    const segment = await writeSegment(directory, {
      rows: 5_000,
      rowGroupRows: 2_000,
      partitionPath: 'ts_day=2025-11-30',
      bloomFilters: [{ fieldId: 2 }],
    })
    const events: UploadLogEvent[] = []
    const storage = new LocalFileStorage()
    const uploader = new Uploader({ storage, clock: fakeClock(), log: (e) => events.push(e) })
    const data = `file://${directory}/warehouse/ns/events/data`
    const dataFile = await uploader.upload(segment, data)

    const location = `${data}/ts_day=2025-11-30/${segment.uuid}.parquet`
    assert.equal(dataFile.filePath, location)
    assert.equal(dataFile.fileSizeInBytes, BigInt(segment.sizeBytes))
    assert.deepEqual({ ...dataFile, filePath: undefined }, { ...segment.dataFile, filePath: undefined })
    assert.deepEqual(Buffer.from(await storage.get(location)), await readFile(segment.localPath))
    const sidecar = await storage.get(`${location}.bloom`)
    assert.deepEqual(sidecar, await writeBloomSidecar(segment.localPath, segment.bloomFilters))
    assert.equal(probeBloomSidecar(sidecar, 2, 7919n * 4_321n - 5n, 'long'), true)
    assert.deepEqual(
      events.map((e) => [e.kind, e.object]),
      [
        ['uploaded', 'data file'],
        ['uploaded', 'bloom sidecar'],
      ],
    )
  })

  test('replaces the same objects on a repeated upload and leaves no second copy', async (t) => {
    const directory = await temporaryDirectory(t)
    const segment = await writeSegment(directory, { rows: 1_000, bloomFilters: [{ fieldId: 1 }] })
    const storage = new LocalFileStorage()
    const uploader = new Uploader({ storage, clock: fakeClock() })
    const data = `file://${directory}/warehouse/t/data`
    const first = await uploader.upload(segment, data)
    const second = await uploader.upload(segment, `${data}/`)
    assert.deepEqual(second, first)
    const listed: StoredObject[] = []
    for await (const object of storage.list(`${data}/`)) listed.push(object)
    assert.deepEqual(
      listed.map((o) => o.location),
      [first.filePath, `${first.filePath}.bloom`],
    )
    assert.equal(listed[0]!.size, segment.sizeBytes)
  })

  test('writes no sidecar for a segment without bloom filters', async (t) => {
    const directory = await temporaryDirectory(t)
    const segment = await writeSegment(directory, { rows: 10 })
    const storage = new LocalFileStorage()
    const dataFile = await new Uploader({ storage, clock: fakeClock() }).upload(segment, `file://${directory}/d`)
    assert.equal(await storage.exists(dataFile.filePath), true)
    assert.equal(await storage.exists(`${dataFile.filePath}.bloom`), false)
  })
})

describe('Uploader retries', () => {
  test('retries a failing storage with growing waits until it works, logging every attempt', async (t) => {
    const directory = await temporaryDirectory(t)
    const segment = await writeSegment(directory, { rows: 100, bloomFilters: [{ fieldId: 2 }] })
    const storage = new FlakyStorage({ putFile: 6, put: 2 })
    const clock = fakeClock()
    const events: UploadLogEvent[] = []
    // random() = 1 takes the top of each jitter range: the ceiling itself
    const uploader = new Uploader({ storage, clock, random: () => 1, log: (e) => events.push(e) })
    const dataFile = await uploader.upload(segment, `file://${directory}/d`)

    assert.deepEqual(clock.waits, [200, 400, 800, 1_600, 3_200, 6_400, 200, 400])
    assert.equal(await storage.inner.exists(dataFile.filePath), true)
    assert.deepEqual(
      events.map((e) => `${e.kind} ${e.object} ${e.kind === 'uploaded' ? e.attempts : e.attempt}`),
      [
        ...[1, 2, 3, 4, 5, 6].map((n) => `retrying data file ${n}`),
        'uploaded data file 7',
        'retrying bloom sidecar 1',
        'retrying bloom sidecar 2',
        'uploaded bloom sidecar 3',
      ],
    )
    const retrying = events.find((e) => e.kind === 'retrying')
    assert.ok(retrying?.kind === 'retrying' && isFloeError(retrying.error, 'STORAGE_UNAVAILABLE'))
  })

  const jitter = [
    { name: 'the floor with random() = 0', random: () => 0, waits: [50, 50, 50, 50, 50, 50] },
    {
      name: 'the ceiling, capped at maxWaitMs, with random() = 1',
      random: () => 1,
      waits: [50, 100, 200, 400, 500, 500],
    },
    { name: 'half way with random() = 0.5', random: () => 0.5, waits: [50, 75, 125, 225, 275, 275] },
  ]
  for (const { name, random, waits } of jitter) {
    test(`waits ${name} of each configured range`, async (t) => {
      const directory = await temporaryDirectory(t)
      const segment = await writeSegment(directory, { rows: 10 })
      const clock = fakeClock()
      const uploader = new Uploader({
        storage: new FlakyStorage({ list: 6 }),
        clock,
        random,
        retry: { minWaitMs: 50, maxWaitMs: 500 },
      })
      await uploader.upload(segment, `file://${directory}/d`)
      assert.deepEqual(clock.waits, waits)
    })
  }

  test('puts the object again when the stored size is not the local size', async (t) => {
    const directory = await temporaryDirectory(t)
    const segment = await writeSegment(directory, { rows: 1_000 })
    const storage = new FlakyStorage()
    storage.tornPuts = 2
    const clock = fakeClock()
    const dataFile = await new Uploader({ storage, clock }).upload(segment, `file://${directory}/d`)
    assert.equal(clock.waits.length, 2)
    assert.deepEqual(Buffer.from(await storage.get(dataFile.filePath)), await readFile(segment.localPath))
  })

  test('stops retrying when the signal aborts, with the abort reason', async (t) => {
    const directory = await temporaryDirectory(t)
    const segment = await writeSegment(directory, { rows: 10 })
    const controller = new AbortController()
    const clock = fakeClock((waits) => {
      if (waits.length === 3) controller.abort()
    })
    const storage = new FlakyStorage({ putFile: Number.POSITIVE_INFINITY })
    await assert.rejects(
      new Uploader({ storage, clock }).upload(segment, `file://${directory}/d`, { signal: controller.signal }),
      { name: 'AbortError' },
    )
    assert.equal(clock.waits.length, 3)
    assert.equal(storage.calls.length, 3)
  })

  test('does not start when the signal is already aborted', async (t) => {
    const directory = await temporaryDirectory(t)
    const segment = await writeSegment(directory, { rows: 10 })
    const storage = new FlakyStorage()
    await assert.rejects(
      new Uploader({ storage, clock: fakeClock() }).upload(segment, `file://${directory}/d`, {
        signal: AbortSignal.abort(),
      }),
      { name: 'AbortError' },
    )
    assert.deepEqual(storage.calls, [])
  })

  const fatal = [
    {
      name: 'a location no storage serves (CONFIG_INVALID)',
      code: 'CONFIG_INVALID',
      storage: () => new RoutedStorage(),
      location: () => 's3://bucket/t/data',
    },
    {
      name: 'an error that is not a FloeError',
      code: undefined,
      storage: () =>
        Object.assign(new LocalFileStorage(), {
          putFile: async () => {
            throw new TypeError('a bug')
          },
        }),
      location: (directory: string) => `file://${directory}/d`,
    },
  ]
  for (const { name, code, storage, location } of fatal) {
    test(`throws at once on ${name}`, async (t) => {
      const directory = await temporaryDirectory(t)
      const segment = await writeSegment(directory, { rows: 10 })
      const clock = fakeClock()
      const events: UploadLogEvent[] = []
      await assert.rejects(
        new Uploader({ storage: storage(), clock, log: (e) => events.push(e) }).upload(segment, location(directory)),
        (e) => (code === undefined ? e instanceof TypeError : isFloeError(e) && e.code === code),
      )
      assert.deepEqual(clock.waits, [])
      assert.deepEqual(
        events.map((e) => e.kind),
        ['failed'],
      )
    })
  }

  test('throws STORAGE_NOT_FOUND at once for a segment file that is gone', async (t) => {
    const directory = await temporaryDirectory(t)
    const segment = await writeSegment(directory, { rows: 10, bloomFilters: [{ fieldId: 1 }] })
    await rm(segment.localPath)
    const storage = new FlakyStorage()
    await assert.rejects(new Uploader({ storage, clock: fakeClock() }).upload(segment, `file://${directory}/d`), (e) =>
      isFloeError(e, 'STORAGE_NOT_FOUND'),
    )
    assert.deepEqual(storage.calls, [])
  })

  test('stops retrying when the segment file disappears between attempts', async (t) => {
    const directory = await temporaryDirectory(t)
    const segment = await writeSegment(directory, { rows: 10 })
    const storage = new FlakyStorage({ putFile: Number.POSITIVE_INFINITY })
    const clock = fakeClock((waits) => {
      if (waits.length === 2) return rm(segment.localPath)
    })
    await assert.rejects(new Uploader({ storage, clock }).upload(segment, `file://${directory}/d`), (e) =>
      isFloeError(e, 'STORAGE_NOT_FOUND'),
    )
    assert.equal(clock.waits.length, 2)
    assert.equal(storage.calls.length, 3)
  })

  test('refuses a segment whose file is not the size its metadata records', async (t) => {
    const directory = await temporaryDirectory(t)
    const segment = await writeSegment(directory, { rows: 10 })
    const storage = new FlakyStorage()
    await assert.rejects(
      new Uploader({ storage, clock: fakeClock() }).upload(
        { ...segment, sizeBytes: segment.sizeBytes + 1 },
        `file://${directory}/d`,
      ),
      (e) => isFloeError(e, 'INVARIANT_BROKEN'),
    )
    assert.deepEqual(storage.calls, [])
    assert.deepEqual(await readdir(directory), [segment.localPath.slice(directory.length + 1)])
  })

  for (const retry of [{ minWaitMs: 0 }, { minWaitMs: 500, maxWaitMs: 100 }, { maxWaitMs: Number.NaN }]) {
    test(`refuses the retry waits ${JSON.stringify(retry)}`, () => {
      assert.throws(
        () => new Uploader({ storage: new LocalFileStorage(), retry }),
        (e) => isFloeError(e, 'CONFIG_INVALID'),
      )
    })
  }
})

test('the default clock sleeps and wakes early with the abort reason', async () => {
  const { systemClock } = await import('./index.ts')
  const controller = new AbortController()
  const sleeping = systemClock.sleep(60_000, controller.signal)
  controller.abort()
  await assert.rejects(sleeping, { name: 'AbortError' })
  assert.equal(typeof systemClock.now(), 'number')
})
