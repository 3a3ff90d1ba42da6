import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  partitionKey,
  partitionOfKey,
  recordedJumps,
  type WalkDropReason,
  type WalkInput,
  type WalkRotation,
  walkRotations,
} from './rotation-walk.ts'

// Two Kafka partitions of topic `t` share the worker's files: r (1) is the one that moves, k (2)
// the one the worker keeps. Offsets are small so a row reads as its story.
const r = partitionKey('t', 1)
const k = partitionKey('t', 2)
const x = partitionKey('t', 3)

function rotation(
  sequence: number,
  ranges: Record<string, [number, number]>,
  options: { complete?: boolean } = {},
): WalkRotation {
  return {
    id: `R${sequence}`,
    sequence: BigInt(sequence),
    ranges: Object.entries(ranges).map(([key, [start, end]]) => ({
      topic: 't',
      partition: Number(key.split('@')[0]),
      start: BigInt(start),
      end: BigInt(end),
    })),
    ...options,
  }
}

function offsets(values: Record<string, number | undefined>): Map<string, bigint | undefined> {
  return new Map(Object.entries(values).map(([key, value]) => [key, value === undefined ? undefined : BigInt(value)]))
}

interface Expected {
  kept: string[]
  dropped: Record<string, WalkDropReason>
  next: Record<string, number | undefined>
  rewound?: string[]
}

function walk(input: WalkInput) {
  const result = walkRotations(input)
  return {
    kept: result.kept.map((rotation) => rotation.id),
    dropped: Object.fromEntries(result.dropped.map(({ rotation, reason }) => [rotation.id, reason])),
    next: Object.fromEntries(
      [...result.next].map(([key, value]) => [key, value === undefined ? undefined : Number(value)]),
    ),
    rewound: [...result.rewound].sort(),
  }
}

function expect(input: WalkInput, expected: Expected): void {
  assert.deepEqual(walk(input), { ...expected, rewound: [...(expected.rewound ?? [])].sort() })
}

const both = new Set([r, k])

describe('the rotation walk on the crash table of shared segments', () => {
  test('a crash while appending: the ready rotations chain from the table and are kept; each partition reads on after them', () => {
    // the open segments (active_*) are gone before the walk: only ready rotations are seen
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] }), rotation(2, { [r]: [20, 25], [k]: [60, 70] })],
        from: offsets({ [r]: 10, [k]: 50 }),
        assigned: both,
      },
      { kept: ['R1', 'R2'], dropped: {}, next: { [r]: 25, [k]: 70 } },
    )
  })

  test('a crash during a cut before the manifest rename: the rotation never existed, reading resumes after the previous one', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] })],
        from: offsets({ [r]: 10, [k]: 50 }),
        assigned: both,
      },
      { kept: ['R1'], dropped: {}, next: { [r]: 20, [k]: 60 } },
    )
  })

  test('after the cut, before upload: a rotation starting at the table for assigned partitions is kept', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] })],
        from: offsets({ [r]: 10, [k]: 50 }),
        assigned: both,
      },
      { kept: ['R1'], dropped: {}, next: { [r]: 20, [k]: 60 } },
    )
  })

  test('after the cut, before upload: a rotation holding a partition now assigned elsewhere is dropped whole and the other partition re-reads', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] })],
        from: offsets({ [r]: 10, [k]: 50 }),
        assigned: new Set([k]),
      },
      { kept: [], dropped: { R1: 'not-assigned' }, next: { [k]: 50 }, rewound: [k] },
    )
  })

  test('a rotation naming a missing file or sidecar is dropped whole and stops the later rotations of its partitions', () => {
    expect(
      {
        rotations: [
          rotation(1, { [r]: [10, 20], [k]: [50, 60] }, { complete: false }),
          rotation(2, { [r]: [20, 30], [k]: [60, 70] }),
        ],
        from: offsets({ [r]: 10, [k]: 50 }),
        assigned: both,
      },
      { kept: [], dropped: { R1: 'incomplete', R2: 'after-dropped' }, next: { [r]: 10, [k]: 50 }, rewound: [r, k] },
    )
  })

  test('after WRITE-STATUS, before the commit: the restarted worker keeps its rotations to report them again', () => {
    expect(
      {
        rotations: [rotation(3, { [r]: [10, 20], [k]: [50, 60] })],
        from: offsets({ [r]: 10, [k]: 50 }),
        assigned: both,
      },
      { kept: ['R3'], dropped: {}, next: { [r]: 20, [k]: 60 } },
    )
  })

  test('a commit with unknown outcome that landed: the table moved past the rotation, which is deleted', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] })],
        from: offsets({ [r]: 20, [k]: 60 }),
        assigned: both,
      },
      { kept: [], dropped: { R1: 'behind-table' }, next: { [r]: 20, [k]: 60 } },
    )
  })

  test('a commit with unknown outcome that did not land: the rotation still starts at the table and is kept', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] })],
        from: offsets({ [r]: 10, [k]: 50 }),
        assigned: both,
      },
      { kept: ['R1'], dropped: {}, next: { [r]: 20, [k]: 60 } },
    )
  })

  test('after the commit, before the ACK: rotations wholly behind the table are deleted, the newer one kept', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] }), rotation(2, { [r]: [20, 30] })],
        from: offsets({ [r]: 20, [k]: 60 }),
        assigned: both,
      },
      { kept: ['R2'], dropped: { R1: 'behind-table' }, next: { [r]: 30, [k]: 60 } },
    )
  })

  test('a revocation with a shared file open: the cut rotation holding the lost partition and every later one of the kept partition go; the kept partition rewinds', () => {
    expect(
      {
        rotations: [
          rotation(1, { [k]: [40, 50] }),
          rotation(2, { [r]: [10, 20], [k]: [50, 60] }),
          rotation(3, { [k]: [60, 65] }),
        ],
        from: offsets({ [r]: 10, [k]: 40 }),
        assigned: new Set([k]),
      },
      { kept: ['R1'], dropped: { R2: 'not-assigned', R3: 'after-dropped' }, next: { [k]: 50 }, rewound: [k] },
    )
  })

  test('a revocation, killed before the walk: at restart the lost partition is not assigned here and its rotation is dropped', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] })],
        from: offsets({ [r]: 10, [k]: 50 }),
        assigned: new Set([k]),
      },
      { kept: [], dropped: { R1: 'not-assigned' }, next: { [k]: 50 }, rewound: [k] },
    )
  })

  test('a round in flight committed the dropped rotation anyway: the rewound chain is behind the table, the next walk finds it stale', () => {
    // after the revocation k re-read [50, 60) into R4; the old R2 landed, so the table says k: 60
    expect(
      { rotations: [rotation(4, { [k]: [50, 60] })], from: offsets({ [k]: 60 }), assigned: new Set([k]) },
      { kept: [], dropped: { R4: 'behind-table' }, next: { [k]: 60 } },
    )
  })

  test('restart with one stale range ending at the table: dropped whole, the other partition re-reads from its table offset', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] })],
        from: offsets({ [r]: 30, [k]: 50 }),
        assigned: both,
      },
      { kept: [], dropped: { R1: 'stale-range' }, next: { [r]: 30, [k]: 50 }, rewound: [k] },
    )
  })

  test('restart with one stale range straddling the table: dropped whole, both read from their table offsets', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] })],
        from: offsets({ [r]: 15, [k]: 50 }),
        assigned: both,
      },
      { kept: [], dropped: { R1: 'stale-range' }, next: { [r]: 15, [k]: 50 }, rewound: [r, k] },
    )
  })

  test('a zombie whose range the new owner committed: its rotation straddles the ACK offset and goes, the kept partition resyncs', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 30], [k]: [50, 60] }), rotation(2, { [k]: [60, 70] })],
        from: offsets({ [r]: 25, [k]: 50 }),
        assigned: both,
      },
      { kept: [], dropped: { R1: 'stale-range', R2: 'after-dropped' }, next: { [r]: 25, [k]: 50 }, rewound: [r, k] },
    )
  })
})

describe('the rotation walk beyond the crash table', () => {
  test('the jumps recorded by ranges past them chain the walk across the hole, the oldest per partition', () => {
    const past = (rotationOf: WalkRotation, after: number): WalkRotation => ({
      ...rotationOf,
      ranges: rotationOf.ranges.map((range) => ({ ...range, after: BigInt(after) })),
    })
    const rotations = [
      rotation(1, { [r]: [10, 20], [k]: [50, 60] }),
      past(rotation(2, { [r]: [500, 510] }), 20),
      past(rotation(3, { [r]: [900, 910] }), 600),
    ]
    const jumps = recordedJumps(rotations)
    assert.deepEqual(jumps, new Map([[r, { from: 20n, to: 500n }]]))
    expect(
      { rotations, from: offsets({ [r]: 10, [k]: 50 }), assigned: both, jumps },
      { kept: ['R1', 'R2'], dropped: { R3: 'gap' }, next: { [r]: 510, [k]: 60 }, rewound: [r] },
    )
  })

  test('a rejected rotation stops later rotations of its partitions and no others', () => {
    expect(
      {
        rotations: [
          rotation(1, { [r]: [10, 20], [k]: [50, 60] }, { complete: false }),
          rotation(2, { [k]: [60, 70] }),
          rotation(3, { [x]: [5, 9] }),
        ],
        from: offsets({ [r]: 10, [k]: 50, [x]: 5 }),
        assigned: new Set([r, k, x]),
      },
      {
        kept: ['R3'],
        dropped: { R1: 'incomplete', R2: 'after-dropped' },
        next: { [r]: 10, [k]: 50, [x]: 9 },
        rewound: [r, k],
      },
    )
  })

  test('a rotation the coordinator rejected is dropped whole though it chains, and the rotations after it go too', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] }), rotation(2, { [k]: [60, 70] })],
        from: offsets({ [r]: 10, [k]: 50 }),
        assigned: both,
        rejected: new Set(['R1']),
      },
      { kept: [], dropped: { R1: 'rejected', R2: 'after-dropped' }, next: { [r]: 10, [k]: 50 }, rewound: [r, k] },
    )
  })

  test('a declared log-start jump bridges two rotations of its partition', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] }), rotation(2, { [r]: [500, 510], [k]: [60, 61] })],
        from: offsets({ [r]: 10, [k]: 50 }),
        assigned: both,
        jumps: new Map([[r, { from: 20n, to: 500n }]]),
      },
      { kept: ['R1', 'R2'], dropped: {}, next: { [r]: 510, [k]: 61 } },
    )
  })

  test('a jump of one partition lets no rotation through for another', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20] }), rotation(2, { [k]: [500, 510] })],
        from: offsets({ [r]: 10, [k]: 50 }),
        assigned: both,
        jumps: new Map([[r, { from: 50n, to: 500n }]]),
      },
      { kept: ['R1'], dropped: { R2: 'gap' }, next: { [r]: 20, [k]: 50 }, rewound: [k] },
    )
  })

  test('a kept chain that ends where its jump starts reads on from the log start, whatever is dropped after it', () => {
    const jumps = new Map([[r, { from: 20n, to: 500n }]])
    expect(
      { rotations: [rotation(1, { [r]: [10, 20] })], from: offsets({ [r]: 10 }), assigned: new Set([r]), jumps },
      { kept: ['R1'], dropped: {}, next: { [r]: 500 } },
    )
    // committed up to the jump: nothing kept, the chain starts at its start
    expect(
      { rotations: [], from: offsets({ [r]: 20 }), assigned: new Set([r]), jumps },
      { kept: [], dropped: {}, next: { [r]: 500 } },
    )
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20] }), rotation(2, { [r]: [500, 510], [k]: [50, 60] })],
        from: offsets({ [r]: 10, [k]: 50 }),
        assigned: both,
        jumps,
        rejected: new Set(['R2']),
      },
      { kept: ['R1'], dropped: { R2: 'rejected' }, next: { [r]: 500, [k]: 50 }, rewound: [r, k] },
    )
  })

  test('a jump before the first rotation: the chain starts at the log start', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [500, 510] })],
        from: offsets({ [r]: 10 }),
        assigned: new Set([r]),
        jumps: new Map([[r, { from: 10n, to: 500n }]]),
      },
      { kept: ['R1'], dropped: {}, next: { [r]: 510 } },
    )
  })

  test('two rotations claiming the same start are both dropped', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20] }), rotation(2, { [r]: [10, 25] })],
        from: offsets({ [r]: 10 }),
        assigned: new Set([r]),
      },
      { kept: [], dropped: { R1: 'ambiguous', R2: 'ambiguous' }, next: { [r]: 10 }, rewound: [r] },
    )
  })

  test('a rotation starting inside the kept chain is an overlap', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20] }), rotation(2, { [r]: [15, 25] })],
        from: offsets({ [r]: 10 }),
        assigned: new Set([r]),
      },
      { kept: ['R1'], dropped: { R2: 'overlap' }, next: { [r]: 20 }, rewound: [r] },
    )
  })

  test('a partition without a table offset proves nothing: its rotations are dropped', () => {
    expect(
      { rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] })], from: offsets({ [k]: 50 }), assigned: both },
      { kept: [], dropped: { R1: 'no-table-offset' }, next: { [r]: undefined, [k]: 50 }, rewound: [r, k] },
    )
  })

  test('the walk takes rotations by sequence, whatever order they are listed in', () => {
    expect(
      {
        rotations: [rotation(2, { [r]: [20, 30] }), rotation(1, { [r]: [10, 20] })],
        from: offsets({ [r]: 10 }),
        assigned: new Set([r]),
      },
      { kept: ['R1', 'R2'], dropped: {}, next: { [r]: 30 } },
    )
  })

  test('a stale range behind the table stops nothing for its partition: a later rotation starting at the table is kept', () => {
    expect(
      {
        rotations: [rotation(1, { [r]: [10, 20], [k]: [50, 60] }), rotation(2, { [r]: [20, 30] })],
        from: offsets({ [r]: 20, [k]: 50 }),
        assigned: both,
      },
      { kept: ['R2'], dropped: { R1: 'stale-range' }, next: { [r]: 30, [k]: 50 }, rewound: [k] },
    )
  })
})

test('partitionOfKey reads back the partition of a partitionKey of the same topic only', () => {
  assert.equal(partitionOfKey(partitionKey('orders.eu', 17), 'orders.eu'), 17)
  assert.equal(partitionOfKey(partitionKey('orders.eu', 17), 'orders'), undefined)
  assert.equal(partitionOfKey('17', 'orders'), undefined)
})
