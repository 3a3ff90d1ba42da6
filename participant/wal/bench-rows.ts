// The rows both Parquet benchmarks write: this folder's wal.bench.ts (through the WAL) and
// bench/parquet-writer.bench.ts (one data file). Twelve columns of a web event; strings come out
// of JSON.parse, as in the real pipeline. Benchmarks only: index.ts does not export it.
import { randomUUID } from 'node:crypto'
import type { Schema, StructValue } from '../../shared/iceberg/index.ts'

export const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'event_id', required: true, type: 'uuid' },
    { id: 2, name: 'ts', required: true, type: 'timestamptz' },
    { id: 3, name: 'user_id', required: true, type: 'long' },
    { id: 4, name: 'session_id', required: true, type: 'string' },
    { id: 5, name: 'event_type', required: true, type: 'string' },
    { id: 6, name: 'page', required: true, type: 'string' },
    { id: 7, name: 'referrer', required: false, type: 'string' },
    { id: 8, name: 'amount', required: false, type: 'double' },
    { id: 9, name: 'quantity', required: true, type: 'long' },
    { id: 10, name: 'country', required: true, type: 'string' },
    { id: 11, name: 'device', required: true, type: 'string' },
    { id: 12, name: 'payload', required: true, type: 'string' },
  ],
}

const eventTypes = ['view', 'click', 'purchase', 'add_to_cart', 'remove', 'search', 'login', 'logout']
const countries = Array.from({ length: 20 }, (_, i) => `C${String.fromCharCode(65 + i)}`)
const devices = ['ios', 'android', 'web', 'tablet', 'tv']

/**
 * A pool of distinct rows, cycled through so 1M rows need not all sit in memory at once. Strings
 * come out of JSON.parse, as in the real pipeline: V8 compares the flat strings it makes much
 * faster than the rope strings that concatenation (or crypto.randomUUID) produces.
 */
export function eventPool(size: number): StructValue[] {
  const start = 1_700_000_000_000_000n // every ts of the run falls on one day
  return Array.from({ length: size }, (_, i) => {
    const message = JSON.parse(
      JSON.stringify({
        event_id: randomUUID(),
        session_id: randomUUID(),
        page: `/catalog/item/${Math.floor(Math.random() * 1000)}`,
        referrer: i % 2 === 0 ? null : `https://example.com/ref/${i % 97}`,
        payload: JSON.stringify({ a: i, b: randomUUID(), c: 'x'.repeat(60 + (i % 40)), d: [1, 2, 3] }),
      }),
    )
    return {
      event_id: new Uint8Array(Buffer.from(message.event_id.replaceAll('-', ''), 'hex')),
      ts: start + BigInt(i) * 1_000n,
      user_id: BigInt(Math.floor(Math.random() * 5_000_000)),
      session_id: message.session_id,
      event_type: eventTypes[i % eventTypes.length] as string,
      page: message.page,
      referrer: message.referrer,
      amount: i % 100 === 0 ? null : Math.round(Math.random() * 100_000) / 100,
      quantity: BigInt(1 + (i % 5)),
      country: countries[i % countries.length] as string,
      device: devices[i % devices.length] as string,
      payload: message.payload,
    }
  })
}
