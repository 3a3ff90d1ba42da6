import assert from 'node:assert/strict'
import { isUtf8 } from 'node:buffer'
import { describe, test } from 'node:test'
import { utf8Text, withinDepth } from './text.ts'

/** The nesting depth of a parsed JSON value, the reference withinDepth is checked against. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0
  let deepest = 0
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child))
  return deepest + 1
}

// A small deterministic generator (mulberry32), so a failure reproduces.
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const tricky = ['[', ']', '{', '}', '"', '\\', '\\"', '\\\\', 'a', '€', '😀']

// Mostly one child per container, so documents go deep without growing wide; a budget of nodes
// keeps every document small.
function randomJson(next: () => number, budget: { nodes: number }): unknown {
  const pick = next()
  if (--budget.nodes <= 0 || pick < 0.2) {
    let text = ''
    for (let i = Math.floor(next() * 6); i > 0; i--) text += tricky[Math.floor(next() * tricky.length)]
    return pick < 0.1 ? text : Math.floor(next() * 1000)
  }
  const size = pick < 0.3 ? 0 : pick < 0.85 ? 1 : 2
  if (pick < 0.6) return Array.from({ length: size }, () => randomJson(next, budget))
  const object: Record<string, unknown> = {}
  for (let i = 0; i < size; i++) object[`k${i}${tricky[i % tricky.length]}`] = randomJson(next, budget)
  return object
}

describe('the nesting depth check', () => {
  const cases: { text: string; maxDepth: number; within: boolean }[] = [
    { text: '{}', maxDepth: 1, within: true },
    { text: '{"a":{}}', maxDepth: 1, within: false },
    { text: '{"a":[]}', maxDepth: 2, within: true },
    { text: '{"a":[],"b":[],"c":{"d":1}}', maxDepth: 2, within: true },
    { text: '{"a":"[[[[{{{{"}', maxDepth: 1, within: true },
    { text: '{"a":"\\"[[[["}', maxDepth: 1, within: true },
    { text: '{"a":"\\\\","b":[[[]]]}', maxDepth: 3, within: false },
    { text: '{"a\\\\\\"[[":"x"}', maxDepth: 1, within: true },
    { text: `{"x":${'['.repeat(63)}${']'.repeat(63)}}`, maxDepth: 64, within: true },
    { text: `{"x":${'['.repeat(64)}${']'.repeat(64)}}`, maxDepth: 64, within: false },
    { text: `[${'[],'.repeat(200)}[]]`, maxDepth: 2, within: true },
    { text: `{"s":"${'{'.repeat(200)}","t":{}}`, maxDepth: 2, within: true },
  ]
  for (const { text, maxDepth, within } of cases) {
    test(`says ${text.length > 40 ? `${text.slice(0, 37)}...` : text} is ${within ? 'within' : 'beyond'} ${maxDepth}`, () => {
      assert.equal(withinDepth(text, maxDepth), within)
    })
  }

  test('agrees with the depth of the parsed value on 2,000 random documents', () => {
    const next = random(20240301)
    for (let i = 0; i < 2000; i++) {
      const text = JSON.stringify(randomJson(next, { nodes: 200 }))
      const depth = depthOf(JSON.parse(text))
      for (const maxDepth of [1, 2, 3, 5, depth - 1, depth, depth + 1]) {
        if (maxDepth < 1) continue
        assert.equal(withinDepth(text, maxDepth), depth <= maxDepth, `${text} at ${maxDepth}`)
      }
    }
  })
})

describe('reading UTF-8', () => {
  test('accepts exactly what buffer.isUtf8 accepts, on 20,000 random byte strings', () => {
    const next = random(7)
    for (let i = 0; i < 20_000; i++) {
      const bytes = Buffer.from(Array.from({ length: Math.floor(next() * 8) }, () => Math.floor(next() * 256)))
      assert.equal(utf8Text(bytes) !== undefined, isUtf8(bytes), bytes.toString('hex'))
    }
  })

  test('decodes multi-byte characters and drops a byte-order mark', () => {
    assert.equal(utf8Text(Buffer.from('€😀')), '€😀')
    assert.equal(utf8Text(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d])), '{}')
  })
})
