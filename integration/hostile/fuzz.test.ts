// Hostile input never stops a worker: a real `floe run` worker over a topic where one record in five
// is hostile (random bytes, truncated and bit-flipped JSON, nesting thousands deep, records over
// maxRecordBytes that arrive compressed and are too large for the dead-letter topic even
// compressed, invalid UTF-8, lone surrogates, a BOM, overflowing numbers, NaN, duplicate keys, wrong
// types, null, bare strings, empty values, tombstones). Counted with pyiceberg after a settling time.
// Then the same into a dataset that infers its columns, with two more shapes of its own: field names
// that cannot be columns, and records of 25 new fields each until the table's field limit.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type FuzzOptions, type FuzzResult, startFuzzRun } from './fuzz-run.ts'

/** Runs 20,000 records, 20 % hostile; every good id once, every record accounted for, each reason seen. */
async function fuzz(
  t: { after: (fn: () => Promise<void>) => void; diagnostic: (text: string) => void },
  options: Pick<FuzzOptions, 'columns'>,
  reasons: string[],
): Promise<FuzzResult> {
  const run = startFuzzRun({ records: 20_000, hostileRate: 0.2, seed: 7, timeoutMs: 4 * 60_000, ...options })
  t.after(() => run.cleanup())
  const result = await run.result
  t.diagnostic(JSON.stringify(result))
  assert.equal(result.workerAlive, true, 'the worker is running')
  assert.deepEqual(
    {
      missing: result.settledIds?.missing,
      duplicated: result.settledIds?.duplicated,
      unexpected: result.settledIds?.unexpected,
    },
    { missing: 0, duplicated: 0, unexpected: 0 },
    JSON.stringify(result.settledIds),
  )
  assert.equal(result.goodRows, result.good, 'each good id once')
  assert.equal(result.rows + result.deadLettered, result.produced, 'table rows + dead-lettered = records read')
  assert.equal(result.vanished, 0)
  assert.equal(result.dropped, 0, 'no record the dead-letter topic refused for good')
  assert.ok(result.cut > 0, 'records too large for the dead-letter topic landed there cut')
  for (const reason of reasons) {
    assert.ok((result.deadLetteredByReason[reason] ?? 0) > 0, `dead-lettered as ${reason}`)
  }
  return result
}

const reasons = ['not-json', 'too-deep', 'too-large', 'invalid-utf8', 'not-object', 'empty', 'conversion-failed']

test('a worker fed 20% hostile records stays up, lands every good id once and accounts for every record', async (t) => {
  await fuzz(t, {}, reasons)
})

test('the same into a dataset that infers its columns, with unusable field names and new fields past the limit', async (t) => {
  await fuzz(t, { columns: 'inferred' }, [...reasons, 'field-name', 'too-many-columns'])
})
