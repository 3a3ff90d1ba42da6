import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { isFloeError } from '../shared/index.ts'
import { LocalFileStorage } from '../shared/storage/index.ts'
import { DEFAULT_MAX_CONTROL_MESSAGE_BYTES, fileListLocation, resolveFiles, spillFiles } from './file-list.ts'
import { decodeEnvelope, encodeEnvelope, type WriteStatus } from './messages.ts'
import { message, rotationWriteStatus, routedWriteStatus, writeStatus } from './test-fixtures.ts'

describe('large WRITE-STATUS file lists', () => {
  const storage = new LocalFileStorage()
  let dir: string
  let table: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'floe-protocol-'))
    table = `file://${dir}/db/events`
  })
  after(() => rm(dir, { recursive: true, force: true }))

  async function storedFiles(): Promise<string[]> {
    return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name)
  }

  test('the file-list location sits under the table metadata, per round and worker', () => {
    assert.equal(
      fileListLocation('file:///w/db/t/', 'c-1', 'worker-a', 'u-1'),
      'file:///w/db/t/metadata/floe-control/c-1/worker-a-u-1.pb',
    )
    assert.notEqual(fileListLocation('file:///t', 'c', 'w'), fileListLocation('file:///t', 'c', 'w'))
  })

  test('a status under the threshold stays in the message and writes nothing', async () => {
    const sent = message(writeStatus(100))
    const location = fileListLocation(table, sent.commitId, 'worker-a')
    const kept = await spillFiles(sent, { storage, location })
    assert.equal(kept, sent)
    assert.ok(encodeEnvelope(sent).length <= DEFAULT_MAX_CONTROL_MESSAGE_BYTES)
    assert.deepStrictEqual(await storedFiles(), [])
    assert.equal(await resolveFiles(kept.body, storage), kept.body)
  })

  test('a status over the threshold goes to storage and resolves to the same files', async () => {
    const sent = message(writeStatus(2000))
    const full = encodeEnvelope(sent).length
    assert.ok(full > DEFAULT_MAX_CONTROL_MESSAGE_BYTES, `${full} bytes`)
    const location = fileListLocation(table, sent.commitId, 'worker-a')
    const small = await spillFiles(sent, { storage, location })

    const bytes = encodeEnvelope(small)
    assert.ok(bytes.length < 1024, `${bytes.length} bytes on the control topic instead of ${full}`)
    const received = decodeEnvelope(bytes).body as WriteStatus
    assert.deepStrictEqual(received.filesPointer, { location, fileCount: 2000 })
    assert.ok(received.partitions.every((p) => p.files.length === 0))
    assert.ok(await storage.exists(location))

    const resolved = await resolveFiles(received, storage, { commitId: sent.commitId })
    assert.deepStrictEqual(resolved, sent.body)
  })

  test('the threshold can be set lower', async () => {
    const sent = message(writeStatus(3))
    const location = fileListLocation(table, sent.commitId, 'worker-b')
    const small = await spillFiles(sent, { storage, location, maxBytes: 512 })
    assert.equal(small.body.filesPointer?.fileCount, 3)
    assert.deepStrictEqual(await resolveFiles(small.body, storage), sent.body)
  })

  test('a file list of another round is refused', async () => {
    const sent = message(writeStatus(3), 'round-1')
    const small = await spillFiles(sent, { storage, location: fileListLocation(table, 'round-1', 'w'), maxBytes: 1 })
    await assert.rejects(
      resolveFiles(small.body, storage, { commitId: 'round-2' }),
      (error) => isFloeError(error, 'PROTOCOL_UNDECODABLE') && error.details['reason'] === 'file-list-mismatch',
    )
  })

  test('a file list that does not hold the files the status counts is refused', async () => {
    const sent = message(writeStatus(3))
    const small = await spillFiles(sent, { storage, location: fileListLocation(table, 'c', 'w'), maxBytes: 1 })
    const pointer = small.body.filesPointer!
    const miscounted: WriteStatus = { ...small.body, filesPointer: { ...pointer, fileCount: 4 } }
    await assert.rejects(resolveFiles(miscounted, storage), (error) => isFloeError(error, 'PROTOCOL_UNDECODABLE'))
    // Files of a partition the status does not name would be lost: refused too.
    const partial: WriteStatus = { ...small.body, partitions: small.body.partitions.slice(1) }
    await assert.rejects(resolveFiles(partial, storage), (error) => isFloeError(error, 'PROTOCOL_UNDECODABLE'))
  })

  test('a pointer to an object that is not a file list is undecodable, and to none, not found', async () => {
    const location = `${table}/metadata/floe-control/x/garbage.pb`
    await storage.put(location, new Uint8Array(16).fill(0xff))
    const status: WriteStatus = { type: 'WriteStatus', partitions: [], filesPointer: { location, fileCount: 1 } }
    await assert.rejects(
      resolveFiles(status, storage),
      (error) => isFloeError(error, 'PROTOCOL_UNDECODABLE') && error.details['reason'] === 'file-list-malformed',
    )
    const missing: WriteStatus = { ...status, filesPointer: { location: `${location}.absent`, fileCount: 1 } }
    await assert.rejects(resolveFiles(missing, storage), (error) => isFloeError(error, 'STORAGE_NOT_FOUND'))
  })

  test("a shared-segment status spills its rotations' files and resolves to the same rotations", async () => {
    const sent = message(rotationWriteStatus(3))
    const location = fileListLocation(table, sent.commitId, 'worker-c')
    const small = await spillFiles(sent, { storage, location, maxBytes: 1 })
    const received = decodeEnvelope(encodeEnvelope(small)).body as WriteStatus
    assert.deepStrictEqual(received.filesPointer, { location, fileCount: 5 })
    // The ranges stay in the message: only the files move.
    assert.deepStrictEqual(
      received.rotations?.map((r) => [r.id, r.ranges.length, r.files.length]),
      sent.body.rotations?.map((r) => [r.id, r.ranges.length, 0]),
    )
    assert.deepStrictEqual(await resolveFiles(received, storage, { commitId: sent.commitId }), sent.body)
  })

  test("a routed rotation's claims, its topic and route stay in the message and its files keep their tables behind the pointer", async () => {
    const sent = message({ ...routedWriteStatus(), topic: 'events', route: 'ab3101bb0fbb2fe0' })
    const location = fileListLocation(table, sent.commitId, 'worker-r')
    const small = await spillFiles(sent, { storage, location, maxBytes: 1 })
    const received = decodeEnvelope(encodeEnvelope(small)).body as WriteStatus
    // the coordinator counts a status only from its route and for its topic
    assert.equal(received.route, 'ab3101bb0fbb2fe0')
    assert.equal(received.topic, 'events')
    assert.deepStrictEqual(received.rotations?.[0]?.tableClaims, sent.body.rotations?.[0]?.tableClaims)
    assert.deepStrictEqual(received.rotations?.[0]?.files, [])
    assert.deepStrictEqual(await resolveFiles(received, storage, { commitId: sent.commitId }), sent.body)
  })

  test('a file list whose rotations do not match the status is refused', async () => {
    const sent = message(rotationWriteStatus(3))
    const small = await spillFiles(sent, { storage, location: fileListLocation(table, 'c', 'w'), maxBytes: 1 })
    // A rotation the list does not hold would commit without its files.
    const renamed: WriteStatus = {
      ...small.body,
      rotations: small.body.rotations!.map((r, i) => (i === 0 ? { ...r, id: 'another' } : r)),
    }
    await assert.rejects(
      resolveFiles(renamed, storage),
      (error) => isFloeError(error, 'PROTOCOL_UNDECODABLE') && error.details['reason'] === 'file-list-mismatch',
    )
    const dropped: WriteStatus = { ...small.body, rotations: small.body.rotations!.slice(1) }
    await assert.rejects(resolveFiles(dropped, storage), (error) => isFloeError(error, 'PROTOCOL_UNDECODABLE'))
  })
})
