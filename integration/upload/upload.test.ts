// The uploader on both real storages — the local filesystem and the stack's Azurite — with the
// uploaded objects read back by independent code: pyarrow (through adlfs for abfs://) for the
// data file, and a Python reader written from docs/bloom-sidecar.md alone for the sidecar.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { promisify } from 'node:util'
import {
  readBloomSidecar,
  type UploadClock,
  Uploader,
  type UploadLogEvent,
  UploadQueue,
  writeBloomSidecar,
} from '../../participant/upload/index.ts'
import { temporaryDirectory, writeSegment } from '../../participant/upload/test-support.ts'
import { FloeError, isFloeError } from '../../shared/errors.ts'
import {
  AzureBlobStorage,
  LocalFileStorage,
  type ObjectStorage,
  type StorageCallOptions,
  type StoredObject,
} from '../../shared/storage/index.ts'
import { azuriteLocation } from '../catalog/probe.ts'
import { endpoints, uniqueName } from '../harness.ts'

const run = promisify(execFile)

function recordingClock(): UploadClock & { waits: number[] } {
  const waits: number[] = []
  return {
    waits,
    now: () => performance.now(),
    async sleep(ms, signal) {
      waits.push(ms)
      signal?.throwIfAborted()
    },
  }
}

/** Any storage whose data-file puts fail `failures` times first, as an outage would. */
function failingFirst(storage: ObjectStorage, failures: number): ObjectStorage {
  let left = failures
  return {
    put: (l, b, o) => storage.put(l, b, o),
    async putFile(location: string, localPath: string, options?: StorageCallOptions) {
      if (left-- > 0) throw new FloeError('STORAGE_UNAVAILABLE', 'outage', { details: { location } })
      return storage.putFile(location, localPath, options)
    },
    get: (l, o) => storage.get(l, o),
    exists: (l) => storage.exists(l),
    delete: (l) => storage.delete(l),
    list: (p) => storage.list(p),
  }
}

async function listAll(storage: ObjectStorage, prefix: string): Promise<StoredObject[]> {
  const listed: StoredObject[] = []
  for await (const object of storage.list(prefix)) listed.push(object)
  return listed
}

interface PythonView {
  rows: number
  rowGroups: number
  filters: [number, number, number][]
  probes: boolean[]
}

async function readWithPython(data: string, probes: { fieldId: number; type: string; value: string }[]) {
  const request = { data, sidecar: `${data}.bloom`, connectionString: endpoints().azurite.connectionString, probes }
  const script = join(import.meta.dirname, 'sidecar_probe.py')
  const { stdout } = await run(endpoints().python, [script, JSON.stringify(request)], { maxBuffer: 16 * 1024 * 1024 })
  return JSON.parse(stdout) as PythonView
}

const backends = [
  {
    name: 'local filesystem',
    storage: () => new LocalFileStorage(),
    root: (dir: string) => `file://${dir}/warehouse/`,
  },
  {
    name: 'Azurite blob storage',
    storage: () => new AzureBlobStorage({ connectionString: endpoints().azurite.connectionString }),
    root: () => azuriteLocation(`${uniqueName('floe-upload')}/`),
  },
]

for (const backend of backends) {
  describe(`Uploader on the ${backend.name}`, () => {
    test('uploads a segment and its sidecar that independent readers open, and replaces them on a repeat', async (t) => {
      const directory = await temporaryDirectory(t, 'floe-upload-it-')
      const storage = backend.storage()
      const tableData = `${backend.root(directory)}ns/events/data`
      const segment = await writeSegment(directory, {
        rows: 30_000,
        rowGroupRows: 10_000,
        partitionPath: 'ts_day=2025-11-30',
        bloomFilters: [{ fieldId: 1 }, { fieldId: 2 }],
      })
      const uploader = new Uploader({ storage, clock: recordingClock() })
      const dataFile = await uploader.upload(segment, tableData)
      assert.equal(dataFile.filePath, `${tableData}/ts_day=2025-11-30/${segment.uuid}.parquet`)
      assert.equal(dataFile.fileSizeInBytes, BigInt(segment.sizeBytes))
      assert.ok(Buffer.from(await storage.get(dataFile.filePath)).equals(await readFile(segment.localPath)))
      const sidecar = await storage.get(`${dataFile.filePath}.bloom`)
      assert.deepEqual(sidecar, await writeBloomSidecar(segment.localPath, segment.bloomFilters))

      const again = await uploader.upload(segment, tableData)
      assert.deepEqual(again, dataFile)
      const listed = await listAll(storage, `${tableData}/`)
      assert.deepEqual(listed.map((o) => o.location).sort(), [dataFile.filePath, `${dataFile.filePath}.bloom`])

      const python = await readWithPython(dataFile.filePath, [
        { fieldId: 2, type: 'long', value: String(7919n * 12_345n - 5n) },
        { fieldId: 1, type: 'string', value: 'user-29999' },
        { fieldId: 2, type: 'long', value: '4' },
        { fieldId: 1, type: 'string', value: 'nobody' },
      ])
      assert.equal(python.rows, 30_000)
      assert.equal(python.rowGroups, 3)
      assert.deepEqual(
        python.filters.map(([fieldId, rowGroup]) => [fieldId, rowGroup]),
        readBloomSidecar(sidecar).filters.map((f) => [f.fieldId, f.rowGroup]),
      )
      assert.deepEqual(python.probes, [true, true, false, false])
    })

    test('retries through an outage with growing waits and lands the object once', async (t) => {
      const directory = await temporaryDirectory(t, 'floe-upload-it-')
      const storage = backend.storage()
      const tableData = `${backend.root(directory)}retry/data`
      const segment = await writeSegment(directory, { rows: 1_000 })
      const clock = recordingClock()
      const events: UploadLogEvent[] = []
      const uploader = new Uploader({
        storage: failingFirst(storage, 4),
        clock,
        random: () => 1,
        log: (e) => events.push(e),
      })
      const dataFile = await uploader.upload(segment, tableData)
      assert.deepEqual(clock.waits, [200, 400, 800, 1_600])
      assert.deepEqual(
        events.map((e) => e.kind),
        ['retrying', 'retrying', 'retrying', 'retrying', 'uploaded'],
      )
      assert.deepEqual(
        (await listAll(storage, `${tableData}/`)).map(({ location, size }) => ({ location, size })),
        [{ location: dataFile.filePath, size: segment.sizeBytes }],
      )
    })

    test('a queue uploads several segments two at a time and counts them down to zero', async (t) => {
      const directory = await temporaryDirectory(t, 'floe-upload-it-')
      const storage = backend.storage()
      const tableData = `${backend.root(directory)}queue/data`
      const queue = new UploadQueue({ uploader: new Uploader({ storage, clock: recordingClock() }) })
      const segments = []
      for (let i = 0; i < 4; i++) segments.push(await writeSegment(directory, { rows: 2_000 + i }))
      const uploads = segments.map((segment) => queue.enqueue(segment, tableData))
      assert.equal(
        queue.pendingBytes,
        segments.reduce((sum, s) => sum + s.sizeBytes, 0),
      )
      const files = await Promise.all(uploads)
      assert.equal(queue.pendingBytes, 0)
      assert.equal(queue.pendingCount, 0)
      const listed = await listAll(storage, `${tableData}/`)
      assert.deepEqual(listed.map((o) => o.location).sort(), files.map((f) => f.filePath).sort())
    })
  })
}

test('an upload to Azurite stops with the abort reason when its signal aborts during the upload', async (t) => {
  const directory = await temporaryDirectory(t, 'floe-upload-it-')
  const storage = new AzureBlobStorage({ connectionString: endpoints().azurite.connectionString })
  const segment = await writeSegment(directory, { rows: 400_000, rowGroupRows: 100_000 })
  const controller = new AbortController()
  const uploading = new Uploader({ storage }).upload(segment, azuriteLocation(`${uniqueName('floe-abort')}/data`), {
    signal: controller.signal,
  })
  setImmediate(() => controller.abort())
  await assert.rejects(uploading, (e) => (e as Error).name === 'AbortError' && !isFloeError(e))
})
