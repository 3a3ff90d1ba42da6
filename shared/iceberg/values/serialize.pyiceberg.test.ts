// A second implementation must agree: pyiceberg 0.11 (the stack's venv) serializes a seeded sample
// of values to the spec's binary and JSON single-value forms, and parses ISO-8601 text that the
// converter also reads.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { seededSample, stackPython } from '../test-sample.ts'
import type { IcebergValue, PrimitiveType } from '../types.ts'
import { decimalParams } from '../types.ts'
import {
  compileConverter,
  encodeHex,
  formatIsoTimestamp,
  parseDecimalText,
  toBinarySingleValue,
  toJsonSingleValue,
} from './index.ts'

const python = stackPython

const { next, integer, bigint64, bytes, pick } = seededSample(34)
const micros = () => BigInt(integer(-62135596800, 253402300799)) * 1_000_000n + BigInt(pick([0, integer(0, 999999)]))

interface Serialized {
  type: PrimitiveType
  value: IcebergValue
}

function sample(): Serialized[] {
  const cases: Serialized[] = []
  const add = (type: PrimitiveType, make: () => IcebergValue, count = 30) => {
    for (let i = 0; i < count; i++) cases.push({ type, value: make() })
  }
  add('boolean', () => next() < 0.5, 4)
  add('int', () => pick([0, -1, 2147483647, -2147483648, integer(-2147483648, 2147483647)]))
  add('long', () => pick([0n, -1n, 2n ** 63n - 1n, -(2n ** 63n), bigint64()]))
  add('float', () => Math.fround(pick([0, -0, 1.5, 3.4e38, -1e-30, (next() - 0.5) * 1e6])))
  add('double', () => pick([0, -0, 0.1, 1e300, -5e-324, (next() - 0.5) * 1e12]))
  // -2^(8k-1) unscaled values are left out: pyiceberg writes them one byte longer than Java (decimal.ts).
  const decimal = (digits: number) => () => {
    const v = (bigint64() * bigint64()) % 10n ** BigInt(digits)
    return v === -128n || v === -32768n ? 0n : v
  }
  add('decimal(9,2)', decimal(9))
  add('decimal(38,10)', decimal(38))
  add('decimal(5,0)', decimal(5))
  add('date', () => integer(-719162, 2932896))
  add('time', () => BigInt(integer(0, 86399)) * 1_000_000n + BigInt(pick([0, integer(0, 999999)])))
  add('timestamp', micros)
  add('timestamptz', micros)
  add('string', () =>
    Array.from({ length: integer(0, 8) }, () => pick(['a', 'é', '测', '😀', '"', '\\', '\n'])).join(''),
  )
  add('uuid', () => bytes(16))
  add('binary', () => bytes(integer(0, 9)))
  add('fixed[3]', () => bytes(3))
  return cases
}

interface Parsed {
  type: 'date' | 'time' | 'timestamp' | 'timestamptz'
  text: string
}

/** ISO text in the forms both read: with and without a fraction, at random offsets. */
function parseSample(): Parsed[] {
  const cases: Parsed[] = []
  const trim = (text: string) => (next() < 0.5 ? text.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '') : text)
  for (let i = 0; i < 60; i++) {
    const utc = micros()
    const offsetMinutes = integer(-14 * 60, 14 * 60)
    const local = utc + BigInt(offsetMinutes) * 60_000_000n
    if (local < -62135596800000000n || local > 253402300799999999n) continue
    const sign = offsetMinutes < 0 ? '-' : '+'
    const offset = `${sign}${String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, '0')}:${String(Math.abs(offsetMinutes) % 60).padStart(2, '0')}`
    cases.push({ type: 'timestamptz', text: `${trim(formatIsoTimestamp(local, false))}${offset}` })
    cases.push({ type: 'timestamp', text: trim(formatIsoTimestamp(utc, false)) })
    const text = formatIsoTimestamp(utc, false)
    cases.push({ type: 'date', text: text.slice(0, 10) })
    cases.push({ type: 'time', text: trim(text.slice(11)) })
  }
  return cases
}

function encode(type: PrimitiveType, value: IcebergValue): unknown {
  if (value instanceof Uint8Array) return encodeHex(value)
  if (typeof value === 'bigint') return String(value)
  if (type === 'float' || type === 'double') return Object.is(value, -0) ? '-0' : String(value)
  return value
}

describe('single values and ISO text, checked against pyiceberg', {
  skip: !existsSync(python) && `needs python with pyiceberg (the venv ${python}): npm run stack -- setup`,
}, () => {
  const serialize = sample()
  const parse = parseSample()
  const run = spawnSync(python, [join(import.meta.dirname, 'pyiceberg_conversions.py')], {
    input: JSON.stringify({
      serialize: serialize.map((c) => ({ type: c.type, value: encode(c.type, c.value) })),
      parse,
    }),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  const answer: { serialize: { bytes: string; json: unknown }[]; parse: string[] } =
    run.status === 0 ? JSON.parse(run.stdout) : { serialize: [], parse: [] }

  test('pyiceberg ran over the whole sample', () => {
    assert.equal(run.status, 0, run.stderr)
    assert.equal(answer.serialize.length, serialize.length)
    assert.equal(answer.parse.length, parse.length)
  })

  test('the binary single-value bytes agree for every type', () => {
    const disagreements: string[] = []
    serialize.forEach((c, i) => {
      const ours = encodeHex(toBinarySingleValue(c.type, c.value))
      if (ours !== answer.serialize[i]?.bytes)
        disagreements.push(`${c.type} ${String(encode(c.type, c.value))}: ${ours} vs ${answer.serialize[i]?.bytes}`)
    })
    assert.deepEqual(disagreements, [])
  })

  test('the JSON single values agree for every type', () => {
    const disagreements: string[] = []
    serialize.forEach((c, i) => {
      const ours = toJsonSingleValue(c.type, c.value)
      const theirs = answer.serialize[i]?.json
      const decimal = decimalParams(c.type)
      let same: boolean
      if (decimal) {
        // pyiceberg prints str(Decimal), which goes scientific below 1E-6; the spec asks for plain text.
        same =
          parseDecimalText(ours as string, 38, decimal.scale) === parseDecimalText(theirs as string, 38, decimal.scale)
      } else if (c.type === 'float') {
        // Floe prints a float's shortest float32 digits; pyiceberg its double widening.
        same = Math.fround(ours as number) === Math.fround(theirs as number)
      } else if (typeof ours === 'bigint' || typeof ours === 'number') {
        same = String(ours) === String(theirs) || Object.is(ours, theirs)
      } else same = ours === theirs
      if (!same)
        disagreements.push(`${c.type} ${String(encode(c.type, c.value))}: ${String(ours)} vs ${String(theirs)}`)
    })
    assert.deepEqual(disagreements, [])
  })

  test('ISO-8601 dates, times and timestamps read the same', () => {
    const disagreements: string[] = []
    parse.forEach((c, i) => {
      const ours = String(compileConverter(c.type, 'c')(c.text))
      if (ours !== answer.parse[i]) disagreements.push(`${c.type} ${c.text}: ${ours} vs ${answer.parse[i]}`)
    })
    assert.deepEqual(disagreements, [])
    assert.ok(parse.length > 200)
  })
})
