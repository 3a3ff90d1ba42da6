import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseTableMetadata, type SnapshotRef, type TableMetadata } from '../metadata/index.ts'
import { metadataText, snapshot } from '../metadata/test-fixtures.ts'
import { planSnapshotExpiry } from './index.ts'

const day = 86_400_000
const now = 1_800_000_000_000

/** A table whose main is the chain 1 <- 2 <- ... <- n, snapshot i being `ages[i-1]` days old. */
function chain(ages: number[], refs: Record<string, SnapshotRef> = {}): TableMetadata {
  const table = parseTableMetadata(metadataText)
  table.snapshots = ages.map((age, i) =>
    snapshot(BigInt(i + 1), i === 0 ? undefined : BigInt(i), BigInt(i + 1), now - age * day),
  )
  const head = BigInt(ages.length)
  table['current-snapshot-id'] = head
  table.refs = { main: { type: 'branch', 'snapshot-id': head }, ...refs }
  return table
}

const ids = (plan: { expire: { 'snapshot-id': bigint }[] }) => plan.expire.map((s) => s['snapshot-id'])

describe('planSnapshotExpiry', () => {
  test('expires the ancestors of main older than the age limit, oldest first', () => {
    const plan = planSnapshotExpiry(chain([10, 9, 5, 1, 0]), { maxSnapshotAgeMs: 3 * day, minSnapshotsToKeep: 1 }, now)
    assert.deepEqual(ids(plan), [1n, 2n, 3n])
    assert.deepEqual(
      plan.retain.map((s) => s['snapshot-id']),
      [4n, 5n],
    )
  })

  test('keeps the minimum count of newest ancestors however old they are', () => {
    const plan = planSnapshotExpiry(chain([10, 9, 8, 7]), { maxSnapshotAgeMs: day, minSnapshotsToKeep: 3 }, now)
    assert.deepEqual(ids(plan), [1n])
  })

  test('never expires the head of main, even when the minimum is 0', () => {
    const plan = planSnapshotExpiry(chain([10, 9]), { maxSnapshotAgeMs: day, minSnapshotsToKeep: 0 }, now)
    assert.deepEqual(ids(plan), [1n])
  })

  test('keeps the snapshots the caller names, the rest of the old run still goes', () => {
    const plan = planSnapshotExpiry(
      chain([10, 9, 8, 0]),
      { maxSnapshotAgeMs: day, minSnapshotsToKeep: 1 },
      now,
      new Set([2n]),
    )
    assert.deepEqual(ids(plan), [1n, 3n])
  })

  test('the first ancestor past both limits ends the run: an older but young-stamped one goes too', () => {
    // Clock skew between writers can stamp a parent later than its child.
    const plan = planSnapshotExpiry(chain([0, 9, 0]), { maxSnapshotAgeMs: day, minSnapshotsToKeep: 1 }, now)
    assert.deepEqual(ids(plan), [2n, 1n])
  })

  test("a tag keeps its snapshot, and a branch's own limits win over the policy", () => {
    const plan = planSnapshotExpiry(
      chain([10, 9, 8, 7, 6], {
        audit: { type: 'tag', 'snapshot-id': 1n },
        main: { type: 'branch', 'snapshot-id': 5n, 'min-snapshots-to-keep': 2 },
      }),
      { maxSnapshotAgeMs: day, minSnapshotsToKeep: 1 },
      now,
    )
    assert.deepEqual(ids(plan), [2n, 3n])
  })

  test('a snapshot no ref reaches goes once it is old, stays while it is young', () => {
    const table = chain([5, 0])
    table.snapshots.push(snapshot(7n, 1n, 7n, now - 4 * day), snapshot(8n, 1n, 8n, now - 1000))
    const plan = planSnapshotExpiry(table, { maxSnapshotAgeMs: day, minSnapshotsToKeep: 1 }, now)
    assert.deepEqual(ids(plan), [1n, 7n])
  })

  test('an empty table has nothing to expire', () => {
    const table = chain([])
    table.refs = {}
    table['current-snapshot-id'] = null
    assert.deepEqual(planSnapshotExpiry(table, { maxSnapshotAgeMs: 0, minSnapshotsToKeep: 1 }, now).expire, [])
  })
})
