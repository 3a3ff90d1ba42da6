import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { DataFile } from '../shared/iceberg/index.ts'
import type { FlushInput } from './machine/index.ts'
import { SharedRounds } from './shared-rounds.ts'
import type { SharedRotation, SharedSegment } from './wal/index.ts'
import { sharedRotation } from './wal/test-support.ts'

const topic = 't'

function rotation(sequence: number, ranges: Record<number, [number, number]>, files: string[]): SharedRotation {
  return sharedRotation(topic, sequence, ranges, files)
}

function flushInput(commitId: string, chainStart: number): FlushInput {
  return { commitId, topic, chainStart: BigInt(chainStart), origin: 'table' } as FlushInput
}

/** Uploads that finish when the test says so (storage frozen, then woken). */
class HeldUploads {
  readonly #held = new Map<string, { promise: Promise<DataFile>; resolve: (file: DataFile) => void }>()
  upload = (segment: SharedSegment): Promise<DataFile> => this.#of(segment.uuid).promise
  finish(uuid: string): void {
    this.#of(uuid).resolve({ filePath: `s3://b/${uuid}.parquet` } as DataFile)
  }
  #of(uuid: string) {
    let held = this.#held.get(uuid)
    if (!held) {
      let resolve!: (file: DataFile) => void
      const promise = new Promise<DataFile>((r) => {
        resolve = r
      })
      held = { promise, resolve }
      this.#held.set(uuid, held)
    }
    return held
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve))

describe('a round of the shared layout', () => {
  test('never reports a partition as written without the rotations that hold its range, however late older rounds finish', async () => {
    const uploads = new HeldUploads()
    // every round's cut lists the same rotation; each older round waits on a file of its own
    let round = 0
    const rounds = new SharedRounds({
      cut: async () => {
        round += 1
        return [rotation(1, { 0: [0, 10] }, [round === 6 ? 'ok' : `old${round}`])]
      },
      upload: uploads.upload,
    })
    const older = [1, 2, 3, 4, 5].map((n) => rounds.flush(0, flushInput(`c${n}`, 0)))
    const newest = rounds.flush(0, flushInput('c6', 0))
    uploads.finish('ok')
    const status = await newest
    assert.notEqual(status, 'gap')
    // storage wakes: the older rounds' snapshots finish after the newest one
    for (const n of [1, 2, 3, 4, 5]) uploads.finish(`old${n}`)
    await Promise.all(older)
    await settle()
    const message = rounds.compose('c6', [status as Exclude<typeof status, 'gap'>])
    for (const reported of message.statuses) {
      if (reported.kind !== 'written') continue
      assert.ok(message.rotations.length > 0, `partition ${reported.partition} is reported written with no rotation`)
    }
    assert.deepEqual(
      message.rotations.map((r) => r.id),
      ['R1'],
    )
  })

  test('a round no longer held (four newer rounds began) answers error for its written partitions, never a bare summary', async () => {
    const uploads = new HeldUploads()
    const rounds = new SharedRounds({
      cut: async () => [rotation(1, { 0: [0, 10] }, ['a'])],
      upload: uploads.upload,
    })
    uploads.finish('a')
    const status = await rounds.flush(0, flushInput('c1', 0))
    assert.equal(status !== 'gap' && status.kind, 'written')
    for (const n of [2, 3, 4, 5]) await rounds.flush(0, flushInput(`c${n}`, 0))
    const message = rounds.compose('c1', [status as Exclude<typeof status, 'gap'>])
    assert.deepEqual(message.rotations, [])
    assert.deepEqual(
      message.statuses.map((s) => [s.partition, s.kind]),
      [[0, 'error']],
    )
    assert.deepEqual(rounds.reported('c1'), [])
  })
})
