import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { chainedRange, placeChain, uncounted } from './chain.ts'

describe('placing the chain after a sync', () => {
  test('with the log start behind what the WAL holds, reading resumes after the kept files', () => {
    assert.deepEqual(placeChain({ start: 100n, tableOffset: 100n, keptUpTo: 300n, logStart: 50n }), {
      chainStart: 100n,
      position: 300n,
      dropKept: false,
    })
  })

  test('with nothing kept and the log start past the table offset, the chain starts at the log start after the jump', () => {
    assert.deepEqual(placeChain({ start: 100n, tableOffset: 100n, keptUpTo: undefined, logStart: 500n }), {
      chainStart: 500n,
      position: 500n,
      logStartJump: { from: 100n, to: 500n },
      dropKept: false,
    })
  })

  test('kept files from the table offset are kept and the jump starts where they end', () => {
    assert.deepEqual(placeChain({ start: 100n, tableOffset: 100n, keptUpTo: 300n, logStart: 500n }), {
      chainStart: 100n,
      position: 500n,
      logStartJump: { from: 300n, to: 500n },
      dropKept: false,
    })
  })

  test('kept files that reach the log start exactly need no jump', () => {
    assert.deepEqual(placeChain({ start: 100n, tableOffset: 100n, keptUpTo: 500n, logStart: 500n }), {
      chainStart: 100n,
      position: 500n,
      dropKept: false,
    })
  })

  test('files kept across the jump they recorded keep it while the log start stays within them', () => {
    const keptJump = { from: 300n, to: 500n }
    assert.deepEqual(placeChain({ start: 100n, tableOffset: 100n, keptUpTo: 600n, logStart: 550n, keptJump }), {
      chainStart: 100n,
      position: 600n,
      logStartJump: keptJump,
      dropKept: false,
    })
  })

  test('files kept across their jump with the log start past them too: the files past the jump must go', () => {
    const keptJump = { from: 300n, to: 500n }
    assert.deepEqual(placeChain({ start: 100n, tableOffset: 100n, keptUpTo: 600n, logStart: 700n, keptJump }), {
      chainStart: 100n,
      position: 600n,
      dropKept: false,
      dropPastJump: true,
    })
  })

  test('files that end where their jump starts place the chain as if the jump were new', () => {
    const keptJump = { from: 300n, to: 500n }
    const at = (logStart: bigint, start = 100n) =>
      placeChain({ start, tableOffset: start, keptUpTo: 500n, logStart, keptJump })
    assert.deepEqual(at(500n), placeChain({ start: 100n, tableOffset: 100n, keptUpTo: 300n, logStart: 500n }))
    assert.deepEqual(at(700n).logStartJump, { from: 300n, to: 700n })
    // nothing kept before the jump either: the chain starts at the log start
    assert.deepEqual(at(500n, 300n), { chainStart: 500n, position: 500n, logStartJump: keptJump, dropKept: false })
  })

  test('a recorded jump the table has passed is not the chain one', () => {
    const keptJump = { from: 300n, to: 500n }
    assert.deepEqual(placeChain({ start: 550n, tableOffset: 550n, keptUpTo: 600n, logStart: 500n, keptJump }), {
      chainStart: 550n,
      position: 600n,
      dropKept: false,
    })
  })

  test('a partition the table never saw starts at the log start with nothing owed', () => {
    assert.deepEqual(placeChain({ start: 20n, tableOffset: undefined, keptUpTo: undefined, logStart: 500n }), {
      chainStart: 500n,
      position: 500n,
      dropKept: false,
    })
  })
})

describe('the range a status reports', () => {
  const r = (start: bigint, end: bigint) => ({ start, end })

  test('rotations chained from the chain start report their whole span', () => {
    assert.deepEqual(chainedRange(100n, undefined, [r(100n, 200n), r(200n, 250n)]), {
      kind: 'range',
      range: r(100n, 250n),
    })
  })

  test('kept files, the jump, then files from the log start: one range across the hole', () => {
    const jump = { from: 300n, to: 500n }
    assert.deepEqual(chainedRange(100n, jump, [r(100n, 300n), r(500n, 600n)]), {
      kind: 'range',
      range: r(100n, 600n),
      jump,
    })
  })

  test('kept files and a jump with nothing read since: the files alone, the jump left for when they are committed', () => {
    const jump = { from: 300n, to: 500n }
    assert.deepEqual(chainedRange(100n, jump, [r(100n, 200n), r(200n, 300n)]), { kind: 'range', range: r(100n, 300n) })
    // committed up to the jump: it sits before the range now, with or without files after it
    assert.deepEqual(chainedRange(300n, jump, []), { kind: 'range', range: r(500n, 500n), jump })
    assert.deepEqual(chainedRange(300n, jump, [r(500n, 600n)]), { kind: 'range', range: r(500n, 600n), jump })
  })

  test('a jump before the chain (nothing kept) leaves the range starting at the log start', () => {
    const jump = { from: 100n, to: 500n }
    assert.deepEqual(chainedRange(500n, jump, [r(500n, 600n)]), { kind: 'range', range: r(500n, 600n), jump })
    assert.deepEqual(chainedRange(500n, jump, []), { kind: 'range', range: r(500n, 500n), jump })
  })

  test('a chain that starts at its jump holds no record the jump skips', () => {
    const jump = { from: 300n, to: 500n }
    assert.deepEqual(chainedRange(300n, jump, [r(300n, 400n)]), { kind: 'gap', expected: 500n, found: 300n })
  })

  test('a hole that is not the declared jump is a gap', () => {
    assert.deepEqual(chainedRange(100n, undefined, [r(100n, 200n), r(210n, 300n)]), {
      kind: 'gap',
      expected: 200n,
      found: 210n,
    })
    assert.deepEqual(chainedRange(100n, { from: 300n, to: 500n }, [r(100n, 300n), r(520n, 600n)]), {
      kind: 'gap',
      expected: 300n,
      found: 520n,
    })
    assert.deepEqual(chainedRange(100n, undefined, [r(120n, 200n)]), { kind: 'gap', expected: 100n, found: 120n })
  })
})

describe('counting skipped records once', () => {
  test('a jump found again counts nothing, one that grew counts what is new, another counts whole', () => {
    assert.equal(uncounted({ from: 100n, to: 500n }, undefined), 400n)
    assert.equal(uncounted({ from: 100n, to: 500n }, { from: 100n, to: 500n }), 0n)
    assert.equal(uncounted({ from: 100n, to: 700n }, { from: 100n, to: 500n }), 200n)
    assert.equal(uncounted({ from: 300n, to: 700n }, { from: 100n, to: 500n }), 200n)
    assert.equal(uncounted({ from: 900n, to: 950n }, { from: 100n, to: 500n }), 50n)
  })
})
