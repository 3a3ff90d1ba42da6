import assert from 'node:assert/strict'
import { test } from 'node:test'
import { compareBytes, compareUtf8, truncateMax, truncateMin } from './bounds.ts'
import { seededRandom } from './test-support.ts'

test('strings compare in UTF-8 byte order, unlike JavaScript comparison', () => {
  const cases: [string, string, number][] = [
    ['a', 'b', -1],
    ['', 'a', -1],
    ['abc', 'abc', 0],
    ['ab', 'abc', -1],
    ['\uFFFF', '\u{1F600}', -1],
    ['\u{1F600}', '\u{1F601}', -1],
    ['\uE000', '\u{10000}', -1],
    ['x\u{1F600}', 'x\uFFFF', 1],
  ]
  for (const [left, right, sign] of cases) {
    assert.equal(Math.sign(compareUtf8(left, right)), sign, `${left} vs ${right}`)
    assert.equal(Math.sign(compareUtf8(right, left)), 0 - sign, `${right} vs ${left}`)
  }
  assert.ok('\uFFFF' > '\u{1F600}', 'JavaScript orders by UTF-16 code units')
})

test('string comparison agrees with comparing the UTF-8 encodings on random strings', () => {
  const random = seededRandom(42)
  const alphabet = ['a', 'Z', 'é', '日', '\uFFFF', '\uFFFD', '\u{1F600}', '\u{10FFFF}', '\uE000', '\uD7FF']
  // Lone surrogates are left out: the converter refuses them, so no column value holds one.
  const randomString = () =>
    Array.from({ length: Math.floor(random() * 5) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('')
  for (let i = 0; i < 5000; i++) {
    const left = randomString()
    const right = randomString()
    const expected = Math.sign(Buffer.compare(Buffer.from(left, 'utf8'), Buffer.from(right, 'utf8')))
    assert.equal(Math.sign(compareUtf8(left, right)), expected, JSON.stringify([left, right]))
  }
})

test('byte arrays compare unsigned, shorter prefix first', () => {
  const cases: [number[], number[], number][] = [
    [[0x01], [0xff], -1],
    [[0x80], [0x7f], 1],
    [[1, 2], [1, 2, 0], -1],
    [[], [], 0],
  ]
  for (const [left, right, sign] of cases) {
    assert.equal(Math.sign(compareBytes(Uint8Array.from(left), Uint8Array.from(right))), sign)
  }
})

test('string bounds truncate by code points and round the upper bound up as Iceberg does', () => {
  const cases: [string, number, string, string | undefined][] = [
    ['abcdef', 3, 'abc', 'abd'],
    ['ab', 3, 'ab', 'ab'],
    ['abc', 3, 'abc', 'abc'],
    ['😀😀😀', 2, '😀😀', '😀😁'],
    ['a\uD7FFb', 2, 'a\uD7FF', 'a\uE000'],
    ['ab\u{10FFFF}\u{10FFFF}x', 4, 'ab\u{10FFFF}\u{10FFFF}', 'ac'],
    ['\u{10FFFF}\u{10FFFF}x', 2, '\u{10FFFF}\u{10FFFF}', undefined],
    ['日本語テキスト', 3, '日本語', '日本\u8A9F'],
  ]
  for (const [value, length, lower, upper] of cases) {
    assert.equal(truncateMin(value, length), lower, `min ${value}`)
    assert.equal(truncateMax(value, length), upper, `max ${value}`)
  }
})

test('binary bounds truncate by bytes and round the upper bound up as Iceberg does', () => {
  const cases: [number[], number, number[], number[] | undefined][] = [
    [[1, 2, 3], 2, [1, 2], [1, 3]],
    [[1, 0xff, 3], 2, [1, 0xff], [2]],
    [[0xff, 0xff, 1], 2, [0xff, 0xff], undefined],
    [[1, 2], 2, [1, 2], [1, 2]],
  ]
  for (const [value, length, lower, upper] of cases) {
    const bytes = Uint8Array.from(value)
    assert.deepEqual(truncateMin(bytes, length), Uint8Array.from(lower))
    assert.deepEqual(truncateMax(bytes, length), upper && Uint8Array.from(upper))
  }
})
