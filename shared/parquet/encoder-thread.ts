// The body of one encoder thread (encoder-pool.ts): encodes the row groups it is posted, one at a
// time, and posts back the bytes (transferred, not copied) with the chunk records. A failure goes
// back as the FloeError's parts, which the pool rebuilds on the main thread.
import { parentPort } from 'node:worker_threads'
import { FloeError, isFloeError } from '../errors.ts'
import type { EncodeReply, EncodeTask } from './encoder-pool.ts'
import { RowGroupEncoder } from './row-group-encoder.ts'

/** Encoders by their settings' JSON: a worker writes the files of few tables, so few settings. */
const encoders = new Map<string, RowGroupEncoder>()
const maxEncoders = 64

function encoderFor(task: EncodeTask): RowGroupEncoder {
  let encoder = encoders.get(task.encodingKey)
  if (!encoder) {
    if (encoders.size >= maxEncoders) encoders.clear()
    encoder = new RowGroupEncoder(task.encoding)
    encoders.set(task.encodingKey, encoder)
  }
  return encoder
}

parentPort?.on('message', (task: EncodeTask) => {
  let reply: EncodeReply
  try {
    const group = encoderFor(task).encode(task.columns, task.rowCount)
    parentPort?.postMessage({ id: task.id, group } satisfies EncodeReply, [group.bytes])
    return
  } catch (error) {
    const floe = isFloeError(error) ? error : new FloeError('INTERNAL_ERROR', 'encoder thread failed', { cause: error })
    const cause = floe.cause instanceof Error ? floe.cause.message : undefined
    reply = { id: task.id, failure: { code: floe.code, message: floe.message, details: floe.details, cause } }
  }
  parentPort?.postMessage(reply)
})
