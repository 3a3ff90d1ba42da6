import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../shared/errors.ts'
import { LocalFileStorage, type StorageCallOptions } from '../../shared/storage/index.ts'
import { type ReadySegment, type UploadClock, Uploader, UploadQueue } from './index.ts'
import { temporaryDirectory, writeSegment } from './test-support.ts'

const noWait: UploadClock = { now: () => 0, sleep: async () => {} }

/** Local storage whose data-file puts wait until the test lets them through, one by one. */
class GatedStorage extends LocalFileStorage {
  readonly waiting: (() => void)[] = []
  inFlight = 0
  maxInFlight = 0

  override async putFile(location: string, localPath: string, options?: StorageCallOptions) {
    this.inFlight++
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight)
    try {
      await new Promise<void>((resolve, reject) => {
        this.waiting.push(resolve)
        options?.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true })
      })
      await super.putFile(location, localPath, options)
    } finally {
      this.inFlight--
    }
  }

  /** Lets the oldest waiting put go on, once one is waiting. */
  async releaseOne(): Promise<void> {
    while (this.waiting.length === 0) await new Promise((resolve) => setImmediate(resolve))
    this.waiting.shift()!()
  }
}

async function segments(directory: string, count: number): Promise<ReadySegment[]> {
  const written: ReadySegment[] = []
  for (let i = 0; i < count; i++) written.push(await writeSegment(directory, { rows: 10 + i * 100 }))
  return written
}

describe('UploadQueue', () => {
  test('counts queued and in-flight bytes and files up, and down as uploads finish', async (t) => {
    const directory = await temporaryDirectory(t)
    const storage = new GatedStorage()
    const queue = new UploadQueue({ uploader: new Uploader({ storage, clock: noWait }) })
    const [a, b, c] = await segments(directory, 3)
    const location = `file://${directory}/d`
    const uploads = [a!, b!, c!].map((segment) => queue.enqueue(segment, location))
    assert.equal(queue.pendingCount, 3)
    assert.equal(queue.pendingBytes, a!.sizeBytes + b!.sizeBytes + c!.sizeBytes)

    // the first put to reach storage goes first: a's or b's, whichever read its file sooner
    await storage.releaseOne()
    const first = await Promise.race(uploads)
    const done = [a!, b!].find((segment) => BigInt(segment.sizeBytes) === first.fileSizeInBytes)
    assert.ok(done, `the first upload is a or b (the two in flight), not one of ${first.fileSizeInBytes} bytes`)
    assert.equal(queue.pendingCount, 2)
    assert.equal(queue.pendingBytes, a!.sizeBytes + b!.sizeBytes + c!.sizeBytes - done.sizeBytes)

    await storage.releaseOne()
    await storage.releaseOne()
    await queue.drain()
    assert.equal(queue.pendingCount, 0)
    assert.equal(queue.pendingBytes, 0)
    assert.equal(storage.maxInFlight, 2, 'the default concurrency is 2')
  })

  for (const concurrency of [1, 3]) {
    test(`keeps at most ${concurrency} uploads in flight`, async (t) => {
      const directory = await temporaryDirectory(t)
      const storage = new GatedStorage()
      const queue = new UploadQueue({ uploader: new Uploader({ storage, clock: noWait }), concurrency })
      const all = await segments(directory, 5)
      const uploads = all.map((segment) => queue.enqueue(segment, `file://${directory}/d`))
      for (let i = 0; i < all.length; i++) await storage.releaseOne()
      const files = await Promise.all(uploads)
      assert.deepEqual(
        files.map((f) => f.fileSizeInBytes),
        all.map((s) => BigInt(s.sizeBytes)),
      )
      assert.equal(storage.maxInFlight, concurrency)
    })
  }

  test('uploads a segment enqueued twice while pending only once', async (t) => {
    const directory = await temporaryDirectory(t)
    const storage = new GatedStorage()
    const queue = new UploadQueue({ uploader: new Uploader({ storage, clock: noWait }) })
    const [segment] = await segments(directory, 1)
    const first = queue.enqueue(segment!, `file://${directory}/d`)
    const again = queue.enqueue(segment!, `file://${directory}/d`)
    assert.equal(again, first)
    assert.equal(queue.pendingCount, 1)
    await storage.releaseOne()
    await first
    assert.equal(storage.maxInFlight, 1)
  })

  test('drops an aborted queued upload at once and lets the others finish', async (t) => {
    const directory = await temporaryDirectory(t)
    const storage = new GatedStorage()
    const queue = new UploadQueue({ uploader: new Uploader({ storage, clock: noWait }), concurrency: 1 })
    const [a, b] = await segments(directory, 2)
    const controller = new AbortController()
    const first = queue.enqueue(a!, `file://${directory}/d`)
    const second = queue.enqueue(b!, `file://${directory}/d`, { signal: controller.signal })
    controller.abort()
    await assert.rejects(second, { name: 'AbortError' })
    assert.equal(queue.pendingCount, 1)
    assert.equal(queue.pendingBytes, a!.sizeBytes)
    await storage.releaseOne()
    await first
    await queue.drain()
    assert.equal(queue.pendingBytes, 0)
  })

  test('aborts queued and in-flight uploads when the queue signal aborts (shutdown)', async (t) => {
    const directory = await temporaryDirectory(t)
    const storage = new GatedStorage()
    const controller = new AbortController()
    const queue = new UploadQueue({
      uploader: new Uploader({ storage, clock: noWait }),
      concurrency: 1,
      signal: controller.signal,
    })
    const uploads = (await segments(directory, 3)).map((s) => queue.enqueue(s, `file://${directory}/d`))
    while (storage.waiting.length === 0) await new Promise((resolve) => setImmediate(resolve))
    controller.abort()
    for (const upload of uploads) await assert.rejects(upload, { name: 'AbortError' })
    await queue.drain()
    assert.equal(queue.pendingCount, 0)
    assert.equal(queue.pendingBytes, 0)
    await assert.rejects(queue.enqueue((await segments(directory, 1))[0]!, `file://${directory}/d`), {
      name: 'AbortError',
    })
    assert.equal(queue.pendingCount, 0)
  })

  test('drain resolves at once when nothing is pending, and after failures too', async (t) => {
    const directory = await temporaryDirectory(t)
    const queue = new UploadQueue({ uploader: new Uploader({ storage: new LocalFileStorage(), clock: noWait }) })
    await queue.drain()
    const [segment] = await segments(directory, 1)
    const failing = queue.enqueue({ ...segment!, sizeBytes: 1 }, `file://${directory}/d`)
    await queue.drain()
    await assert.rejects(failing, (e) => isFloeError(e, 'INVARIANT_BROKEN'))
    assert.equal(queue.pendingBytes, 0)
  })

  for (const concurrency of [0, 1.5, -1]) {
    test(`refuses a concurrency of ${concurrency}`, () => {
      assert.throws(
        () => new UploadQueue({ uploader: new Uploader({ storage: new LocalFileStorage() }), concurrency }),
        (e) => isFloeError(e, 'CONFIG_INVALID'),
      )
    })
  }
})
