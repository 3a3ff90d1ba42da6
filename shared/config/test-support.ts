// Test support for the configuration's unit tests: the one-line refusal of a file, and a minimal
// ingestion and dataset section to put other sections in front of (with a REST catalog, or not).
import assert from 'node:assert/strict'
import { isFloeError } from '../errors.ts'
import { parseConfig } from './load.ts'

/** The CONFIG_INVALID message `text` is refused with (one line), or a failed assertion. */
export function refusal(text: string, env: NodeJS.ProcessEnv = {}): string {
  try {
    parseConfig(text, 'floe.yaml', env)
  } catch (error) {
    assert.ok(isFloeError(error, 'CONFIG_INVALID'), String(error))
    assert.doesNotMatch(error.message, /\n/, 'one line')
    return error.message
  }
  assert.fail('the configuration was accepted')
}

/** `ingestion` and one dataset, the least a file needs besides `kafka` and `catalog`. */
export const oneDataset = `ingestion:
  wal:
    dir: /tmp/floe-wal
datasets:
  - name: events
    topic: events
    table: analytics.events
    customMapping: {id: id}
    schema: {id: string}
    badRecords: skip
`

/** Everything after `kafka:`: a REST catalog, a WAL folder and one dataset. */
export const restAndOneDataset = `catalog:
  type: rest
  uri: http://127.0.0.1:8181
${oneDataset}`
