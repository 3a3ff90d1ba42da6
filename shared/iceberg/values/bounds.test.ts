import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { IcebergValue, PrimitiveType } from '../types.ts'
import {
  compareUtf8,
  compareValues,
  DEFAULT_BOUND_LENGTH,
  toBinarySingleValue,
  truncateLowerBound,
  truncateUpperBound,
} from './index.ts'

const bytes = (...values: number[]) => Uint8Array.from(values)
const sign = (n: number) => Math.sign(n)

describe('string order', () => {
  test('is UTF-8 byte order, where JavaScript`s UTF-16 order differs for astral characters', () => {
    const astral = '😀' // U+1F600, surrogates D83D DE00
    const privateUse = '\ue000'
    assert.ok(astral < privateUse, 'JavaScript puts the astral character first')
    assert.ok(compareUtf8(astral, privateUse) > 0, 'UTF-8 puts it last')
  })

  test('agrees with Buffer.compare of the UTF-8 bytes on a seeded sample', () => {
    const alphabet = [
      'a',
      'b',
      'é',
      '\u07ff',
      '\u0800',
      '\ud7ff',
      '\ue000',
      '\uffff',
      '😀',
      '\u{10000}',
      '\u{10ffff}',
      '',
    ]
    let seed = 1
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    }
    const word = () =>
      Array.from({ length: Math.floor(next() * 5) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('')
    for (let i = 0; i < 5000; i++) {
      const [a, b] = [word(), word()]
      assert.equal(
        sign(compareUtf8(a, b)),
        sign(Buffer.compare(Buffer.from(a), Buffer.from(b))),
        `${escape(a)} vs ${escape(b)}`,
      )
    }
  })
})

describe('compareValues', () => {
  const ordered: [PrimitiveType, IcebergValue[]][] = [
    ['boolean', [null, false, true]],
    ['int', [null, -2147483648, -1, 0, 7, 2147483647]],
    ['date', [-719162, 0, 17486]],
    ['long', [-(2n ** 63n), -1n, 0n, 2n ** 63n - 1n]],
    ['timestamptz', [-1n, 0n, 1510871468000000n]],
    ['decimal(9,2)', [-1000n, -5n, 0n, 1420n]],
    ['double', [Number.NEGATIVE_INFINITY, -1.5, -0, 0, 1e-300, Number.POSITIVE_INFINITY, Number.NaN]],
    ['float', [-3.4e38, -0, 0, 1]],
    ['string', ['', 'a', 'ab', 'b', 'é', '\uffff', '😀']],
    ['binary', [bytes(), bytes(0), bytes(0, 0), bytes(1), bytes(0x7f), bytes(0x80), bytes(0xff)]],
    ['uuid', [new Uint8Array(16), bytes(0x7f, ...new Array(15).fill(0)), bytes(0x80, ...new Array(15).fill(0))]],
    ['fixed[2]', [bytes(0, 0xff), bytes(0xff, 0)]],
  ]
  for (const [type, values] of ordered) {
    test(`orders ${type} values as Iceberg does`, () => {
      const compare = compareValues(type)
      for (let i = 0; i < values.length; i++) {
        for (let j = 0; j < values.length; j++) {
          assert.equal(
            sign(compare(values[i]!, values[j]!)),
            sign(i - j),
            `${String(values[i])} vs ${String(values[j])}`,
          )
        }
      }
    })
  }

  test('orders binary values as unsigned bytes, like their serialized bounds', () => {
    const compare = compareValues('binary')
    assert.ok(compare(bytes(0x80), bytes(0x7f)) > 0)
    assert.equal(
      sign(compare(bytes(1, 0x80), bytes(1, 0x7f))),
      sign(
        Buffer.compare(toBinarySingleValue('binary', bytes(1, 0x80)), toBinarySingleValue('binary', bytes(1, 0x7f))),
      ),
    )
  })
})

describe('bound truncation', () => {
  test('keeps values no longer than the limit, which is 16 by default', () => {
    assert.equal(DEFAULT_BOUND_LENGTH, 16)
    const sixteen = 'abcdefghijklmnop'
    assert.equal(truncateLowerBound(sixteen), sixteen)
    assert.equal(truncateUpperBound(sixteen), sixteen)
    // 16 code points in 32 UTF-16 units is not too long.
    const astral = '😀'.repeat(16)
    assert.equal(truncateLowerBound(astral), astral)
    assert.equal(truncateUpperBound(astral), astral)
  })

  const strings: [string, number, string, string | null][] = [
    ['abcdefghijklmnopq', 16, 'abcdefghijklmnop', 'abcdefghijklmnoq'],
    ['iceberg', 3, 'ice', 'icf'],
    ['a😀b', 2, 'a😀', 'a😁'],
    ['😀😀😀', 2, '😀😀', '😀😁'],
    ['a\u{10ffff}b', 2, 'a\u{10ffff}', 'b'],
    ['\u{10ffff}\u{10ffff}x', 2, '\u{10ffff}\u{10ffff}', null],
    ['a\ud7ffz', 2, 'a\ud7ff', 'a\ue000'],
    ['测试数据', 1, '测', '测'.replace('测', String.fromCodePoint('测'.codePointAt(0)! + 1))],
  ]
  for (const [value, length, lower, upper] of strings) {
    test(`truncates the string ${escape(value)} to ${length}: lower ${escape(lower)}, upper ${upper === null ? 'none' : escape(upper)}`, () => {
      assert.equal(truncateLowerBound(value, length), lower)
      assert.equal(truncateUpperBound(value, length), upper)
      assert.ok(compareUtf8(truncateLowerBound(value, length), value) <= 0)
      if (upper !== null) assert.ok(compareUtf8(upper, value) > 0)
    })
  }

  const binaries: [Uint8Array, number, Uint8Array, Uint8Array | null][] = [
    [bytes(1, 2, 3, 4), 2, bytes(1, 2), bytes(1, 3)],
    [bytes(1, 0xff, 3), 2, bytes(1, 0xff), bytes(2)],
    [bytes(0xff, 0xff, 0), 2, bytes(0xff, 0xff), null],
    [bytes(1, 2), 2, bytes(1, 2), bytes(1, 2)],
  ]
  for (const [value, length, lower, upper] of binaries) {
    test(`truncates the bytes ${Buffer.from(value).toString('hex')} to ${length}`, () => {
      assert.deepEqual(truncateLowerBound(value, length), lower)
      assert.deepEqual(truncateUpperBound(value, length), upper)
    })
  }

  test('does not change the value it truncates', () => {
    const value = bytes(1, 2, 3)
    truncateUpperBound(value, 2)
    assert.deepEqual(value, bytes(1, 2, 3))
  })
})
