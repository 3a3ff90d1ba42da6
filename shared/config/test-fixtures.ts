// What the configuration tests share: a small valid file's catalog, ingestion and datasets
// sections, and the refusal a bad file must meet (CONFIG_INVALID, one line).
import assert from 'node:assert/strict'
import { isFloeError } from '../errors.ts'
import { parseConfig } from './load.ts'

/** Everything after `kafka:`: a REST catalog, a WAL folder and one dataset. */
export const restAndOneDataset = `catalog:
  type: rest
  uri: http://127.0.0.1:8181
ingestion:
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

/** The message of the CONFIG_INVALID error `text` is refused with; fails the test if it is accepted. */
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
