// The dead-letter record of a refused Kafka record: the bytes exactly as they arrived, and why, in
// headers an operator (or a replay tool) can read without parsing the payload.
import type { FloeError } from '../../shared/index.ts'
import type { IncomingRecord, OutgoingRecord } from '../../shared/kafka/index.ts'
import { isDlqReason } from './reasons.ts'

/** The headers Floe sets on a dead-letter record. Originals with the same names are replaced. */
export const dlqHeaders = {
  reason: 'floe.dlq.reason',
  error: 'floe.dlq.error',
  column: 'floe.dlq.column',
  sourceTopic: 'floe.source.topic',
  sourcePartition: 'floe.source.partition',
  sourceOffset: 'floe.source.offset',
  sourceTimestamp: 'floe.source.timestamp',
  dataset: 'floe.dataset',
} as const

/** Longest `floe.dlq.error` value, in UTF-8 bytes. */
export const MAX_ERROR_HEADER_BYTES = 1024

const ellipsis = '…'
const ellipsisBytes = Buffer.byteLength(ellipsis)

/** `text` cut to at most `maxBytes` of UTF-8 at a character boundary, ending in … when cut. */
export function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.length <= maxBytes) return text
  let end = maxBytes - ellipsisBytes
  // Step back over continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--
  return bytes.toString('utf8', 0, end) + ellipsis
}

/**
 * The record to produce to `dlqTopic` for `record`, refused with `error`.
 *
 * - value and key: the bytes as they arrived. A tombstone (no value) becomes an empty value, since
 *   an OutgoingRecord always has one; `floe.dlq.reason: empty` says what it was.
 * - partition: left to the producer's partitioner, which hashes the original key (the dead-letter
 *   topic may have a different partition count, so the source partition number is a header).
 * - timestamp: not copied; the dead-letter record is stamped when produced, so the dead-letter
 *   topic's retention counts from then. The original is in `floe.source.timestamp` (epoch ms).
 * - headers: the original headers (names read as UTF-8), then Floe's (dlqHeaders), which replace
 *   an original of the same name. Kafka allows repeated header names; the producer's headers are a
 *   plain object, so of repeated originals the last one is kept.
 * - `floe.dlq.reason`: one of dlqReasons, or the error's code for an error that is not the
 *   decoder's. `floe.dlq.error`: the message, at most 1 KiB. `floe.dlq.column`: when one is known.
 */
export function dlqRecord(record: IncomingRecord, dlqTopic: string, dataset: string, error: FloeError): OutgoingRecord {
  const headers: Record<string, string | Buffer> = {}
  for (const [name, value] of record.headers) headers[name.toString('utf8')] = value
  const reason = error.details.reason
  headers[dlqHeaders.reason] = isDlqReason(reason) ? reason : error.code
  headers[dlqHeaders.error] = truncateUtf8(error.message, MAX_ERROR_HEADER_BYTES)
  const column = error.details.column
  if (typeof column === 'string') headers[dlqHeaders.column] = column
  headers[dlqHeaders.sourceTopic] = record.topic
  headers[dlqHeaders.sourcePartition] = String(record.partition)
  headers[dlqHeaders.sourceOffset] = String(record.offset)
  headers[dlqHeaders.sourceTimestamp] = String(record.timestamp)
  headers[dlqHeaders.dataset] = dataset
  const dead: OutgoingRecord = { topic: dlqTopic, value: record.value ?? Buffer.alloc(0), headers }
  if (record.key !== undefined) dead.key = record.key
  return dead
}
