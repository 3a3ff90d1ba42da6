// A second implementation must agree: pyiceberg 0.11 (the stack's venv) applies the same
// transforms to a seeded sample of values, and prints their human strings and partition paths.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { seededSample, stackPython } from '../test-sample.ts'
import type { IcebergValue, PrimitiveType } from '../types.ts'
import { encodeHex } from '../values/index.ts'
import { compilePartitioner, compileTransform, humanString, parseTransform, transformResultType } from './index.ts'

const python = stackPython

interface Case {
  transform: string
  type: PrimitiveType
  value: IcebergValue
  name?: string
}
interface Answer {
  result: unknown
  human: string
  path?: string
}

const { next, integer, bigint64, bytes, pick } = seededSample(20171116)
const alphabet = [
  'a',
  'Z',
  '0',
  ' ',
  '/',
  '=',
  '%',
  '~',
  '*',
  '!',
  "'",
  '(',
  'é',
  '测',
  '😀',
  '\u{10ffff}',
  '\uffff',
  '+',
  '&',
]
const text = () => Array.from({ length: integer(0, 12) }, () => pick(alphabet)).join('')

/** Timestamps from year 1 to 9999, in microseconds. */
const micros = () => BigInt(integer(-62135596800, 253402300799)) * 1_000_000n + BigInt(integer(0, 999999))

function sample(): Case[] {
  const cases: Case[] = []
  const add = (type: PrimitiveType, transforms: string[], make: () => IcebergValue, count = 25) => {
    for (let i = 0; i < count; i++) {
      const value = make()
      for (const transform of transforms) cases.push({ transform, type, value })
    }
  }
  add('int', ['identity', 'bucket[16]', 'bucket[7]', 'truncate[10]', 'truncate[3]'], () =>
    pick([0, -1, 1, 2147483647, -2147483648, integer(-2147483648, 2147483647), integer(-1000, 1000)]),
  )
  add('long', ['identity', 'bucket[16]', 'bucket[1000]', 'truncate[10]', 'truncate[1000000]'], () =>
    pick([0n, -1n, 2n ** 63n - 1n, -(2n ** 63n) + 10n, bigint64(), BigInt(integer(-1000, 1000))]),
  )
  // -2^(8k-1) unscaled values are left out: pyiceberg hashes them one byte longer than Java (see decimal.ts).
  const decimal = (digits: number) => () => {
    const v = BigInt.asIntN(126, bigint64() * bigint64()) % 10n ** BigInt(digits)
    return v === -128n || v === -32768n ? 0n : v
  }
  add('decimal(9,2)', ['identity', 'bucket[16]', 'truncate[50]', 'truncate[7]'], decimal(9))
  add('decimal(38,10)', ['identity', 'bucket[100]', 'truncate[1000]'], decimal(38))
  add('date', ['identity', 'year', 'month', 'day', 'bucket[16]'], () =>
    pick([0, -1, 17486, -365, integer(-719162, 2932896)]),
  )
  add(
    'time',
    ['identity', 'bucket[16]'],
    () => BigInt(integer(0, 86399)) * 1_000_000n + BigInt(pick([0, integer(0, 999999)])),
  )
  add('timestamp', ['identity', 'year', 'month', 'day', 'hour', 'bucket[16]'], () =>
    pick([0n, -1n, micros(), micros()]),
  )
  add('timestamptz', ['identity', 'year', 'month', 'day', 'hour', 'bucket[32]'], () => pick([0n, -1n, micros()]))
  add('string', ['identity', 'bucket[16]', 'truncate[3]', 'truncate[1]'], text)
  add('uuid', ['identity', 'bucket[16]'], () => bytes(16))
  add('binary', ['identity', 'bucket[16]', 'truncate[2]'], () => bytes(integer(0, 6)))
  add('fixed[5]', ['identity', 'bucket[16]'], () => bytes(5))
  add('boolean', ['identity'], () => next() < 0.5, 4)
  add('double', ['identity'], () => pick([0.1, -2.5, 1e16, 1.5e-5, 123456.789, 1e-4, -0, 2 ** 60, next() * 1e6]), 15)
  add('float', ['identity'], () => Math.fround(pick([0.1, 3.4e38, 1.5, -7.25e-7, next()])), 10)
  // Partition paths, with names and values that need escaping.
  for (const [name, transform, type, value] of [
    ['ts_day', 'day', 'timestamptz', 1510871468000000n],
    ['id bucket', 'bucket[16]', 'long', 34n],
    ['a/b=c%d', 'identity', 'string', 'x y/z=1&2%+~*'],
    ['bin', 'identity', 'binary', Uint8Array.of(0xfb, 0xff, 0xfe)],
    ['none', 'identity', 'long', null],
    ['ts', 'identity', 'timestamp', -1n],
    ['h', 'hour', 'timestamp', -1n],
  ] as const) {
    cases.push({ name, transform, type, value })
  }
  return cases
}

/** The test's wire form of a value (see pyiceberg_transforms.py). */
function encode(value: IcebergValue): unknown {
  if (value instanceof Uint8Array) return encodeHex(value)
  if (typeof value === 'bigint') return String(value)
  return value
}

/** Floats go as text, or JSON would turn 1e16 and -0 into Python ints. */
function encodeInput(c: Case): unknown {
  if (c.type !== 'float' && c.type !== 'double') return encode(c.value)
  return Object.is(c.value, -0) ? '-0' : String(c.value)
}

describe('the transforms, checked against pyiceberg', {
  skip: !existsSync(python) && `needs python with pyiceberg (the venv ${python}): npm run stack -- setup`,
}, () => {
  const cases = sample()
  const run = spawnSync(python, [join(import.meta.dirname, 'pyiceberg_transforms.py')], {
    input: JSON.stringify(cases.map((c) => ({ ...c, value: encodeInput(c) }))),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  const answers: Answer[] = run.status === 0 ? JSON.parse(run.stdout) : []

  test('pyiceberg ran over the whole sample', () => {
    assert.equal(run.status, 0, run.stderr)
    assert.equal(answers.length, cases.length)
    assert.ok(cases.length > 900, `${cases.length} cases`)
  })

  /**
   * truncate[W] of an int near -2^31 (a long near -2^63) leaves the type's range: Java's arithmetic
   * wraps (Floe does the same, so tables written by both agree), Python's ints do not. The one known,
   * deliberate difference.
   */
  const wrapsInJava = (c: Case) => {
    if (!c.transform.startsWith('truncate') || (c.type !== 'int' && c.type !== 'long') || c.value === null) return false
    const width = BigInt(c.transform.slice(9, -1))
    const value = BigInt(c.value as number | bigint)
    const truncated = value - (((value % width) + width) % width)
    return c.type === 'int' ? truncated < -(2n ** 31n) : truncated < -(2n ** 63n)
  }

  test('every transform result agrees', () => {
    const disagreements: string[] = []
    cases.forEach((c, i) => {
      if (wrapsInJava(c)) return
      const transform = parseTransform(c.transform)
      const result = compileTransform(transform, c.type)(c.value)
      const resultType = transformResultType(transform, c.type)
      const ours =
        resultType === 'float' || resultType === 'double'
          ? result
          : typeof result === 'number'
            ? String(result)
            : encode(result)
      if (!Object.is(ours, answers[i]?.result) && ours !== answers[i]?.result) {
        disagreements.push(
          `${c.transform} ${c.type} ${String(encode(c.value))}: ours ${String(ours)}, pyiceberg ${String(answers[i]?.result)}`,
        )
      }
    })
    assert.deepEqual(disagreements, [])
  })

  test('every human string agrees', () => {
    const disagreements: string[] = []
    cases.forEach((c, i) => {
      if (wrapsInJava(c)) return
      const transform = parseTransform(c.transform)
      const ours = humanString(transform, c.type, compileTransform(transform, c.type)(c.value))
      if (ours !== answers[i]?.human) {
        disagreements.push(
          `${c.transform} ${c.type} ${String(encode(c.value))}: ours ${ours}, pyiceberg ${answers[i]?.human}`,
        )
      }
    })
    assert.deepEqual(disagreements, [])
  })

  test('every partition path agrees, escaping included', () => {
    let checked = 0
    cases.forEach((c, i) => {
      if (c.name === undefined) return
      const partitioner = compilePartitioner(
        { 'spec-id': 0, fields: [{ 'source-id': 1, 'field-id': 1000, name: c.name, transform: c.transform }] },
        { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'src', required: false, type: c.type }] },
      )
      assert.equal(partitioner.path(partitioner.partition({ src: c.value })), answers[i]?.path)
      checked++
    })
    assert.equal(checked, 7)
  })
})
