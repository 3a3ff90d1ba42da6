import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { pathToFileURL } from 'node:url'
import type { ControlMessage, PartitionWriteStatus, WriteStatus } from '../protocol/index.ts'
import type { DataFile, StructType } from '../shared/iceberg/index.ts'
import { LocalFileStorage } from '../shared/storage/index.ts'
import { WriteStatusSender } from './write-status-sender.ts'

const unpartitioned: StructType = { type: 'struct', fields: [] }

function file(i: number): DataFile {
  return {
    filePath: `file:///t/data/${i}.parquet`,
    fileFormat: 'PARQUET',
    specId: 0,
    partition: {},
    recordCount: 5n,
    fileSizeInBytes: 100n,
  }
}

function written(partition: number, files: DataFile[]): PartitionWriteStatus {
  return {
    kind: 'written',
    topic: 'events',
    partition,
    range: { start: 0n, end: 10n },
    files,
    origin: 'table',
  }
}

function sender(sent: ControlMessage[], statusSpill?: { tableLocation: string; maxBytes: number }) {
  let generation = 3
  const status = new WriteStatusSender({
    dataset: 'events',
    group: 'floe-events',
    workerId: 'w1',
    membership: () => ({ memberId: 'm-1', generation }),
    partitionTypeOf: () => unpartitioned,
    sidecars: new Map([['file:///t/data/0.parquet', 'file:///t/data/0.bloom']]),
    statusSpill: statusSpill && { storage: new LocalFileStorage(), ...statusSpill },
    send: async (message) => {
      sent.push(message)
    },
  })
  return { status, rejoin: () => generation++ }
}

describe('the WRITE-STATUS sender', () => {
  test('sends every status of the round under the membership of the moment, with bloom sidecars', async () => {
    const sent: ControlMessage[] = []
    const { status, rejoin } = sender(sent)
    rejoin()
    await status.send('c-1', { statuses: [written(0, [file(0)]), { kind: 'empty', topic: 'events', partition: 1 }] })
    const [message] = sent as ControlMessage<WriteStatus>[]
    assert.equal(message?.commitId, 'c-1')
    assert.deepEqual(message?.sender, { workerId: 'w1', memberId: 'm-1', generation: 4 })
    assert.deepEqual(
      message?.body.partitions.map((p) => [p.partition, p.kind, p.files.map((f) => f.bloomFilterLocation)]),
      [
        [0, 'data', ['file:///t/data/0.bloom']],
        [1, 'empty', []],
      ],
    )
  })

  test('a status too large for the control topic sends its file list to storage', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'floe-status-spill-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    const sent: ControlMessage[] = []
    const { status } = sender(sent, { tableLocation: pathToFileURL(dir).href, maxBytes: 200 })
    await status.send('c-2', {
      statuses: [
        written(
          0,
          Array.from({ length: 20 }, (_, i) => file(i)),
        ),
      ],
    })
    const [message] = sent as ControlMessage<WriteStatus>[]
    assert.equal(message?.body.partitions[0]?.files.length, 0)
    assert.equal(message?.body.filesPointer?.fileCount, 20)
  })
})
