import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { parseJson, parseJsonBytes, stringifyJson, stringifyJsonBytes } from './index.ts'

describe('parseJson', () => {
  const cases: { name: string; text: string; expected: unknown }[] = [
    { name: 'a 63-bit snapshot id stays exact', text: '3051729675574597004', expected: 3051729675574597004n },
    { name: 'the largest long stays exact', text: '9223372036854775807', expected: 9223372036854775807n },
    { name: 'the smallest long stays exact', text: '-9223372036854775808', expected: -9223372036854775808n },
    { name: 'the first unsafe integer becomes a bigint', text: '9007199254740992', expected: 9007199254740992n },
    { name: 'the largest safe integer stays a number', text: '9007199254740991', expected: 9007199254740991 },
    { name: 'a small integer stays a number', text: '42', expected: 42 },
    { name: 'a negative one stays a number', text: '-1', expected: -1 },
    { name: 'a fraction stays a number', text: '1.5', expected: 1.5 },
    { name: 'an exponent stays a number', text: '1e300', expected: 1e300 },
    {
      name: 'a large decimal with a fraction stays a number',
      text: '12345678901234567890.5',
      expected: Number('12345678901234567890.5'),
    },
    { name: 'strings of digits stay strings', text: '"3051729675574597004"', expected: '3051729675574597004' },
    {
      name: 'nested ids keep their place',
      text: '{"snapshots":[{"snapshot-id":3051729675574597004,"sequence-number":1}],"current-snapshot-id":-1}',
      expected: {
        snapshots: [{ 'snapshot-id': 3051729675574597004n, 'sequence-number': 1 }],
        'current-snapshot-id': -1,
      },
    },
  ]
  for (const { name, text, expected } of cases) {
    test(`parses so that ${name}`, () => {
      assert.deepEqual(parseJson(text), expected)
    })
  }

  test('throws a SyntaxError on malformed text', () => {
    assert.throws(() => parseJson('{"a":'), SyntaxError)
  })

  test('reads UTF-8 bytes', () => {
    assert.deepEqual(parseJsonBytes(new TextEncoder().encode('{"név":3051729675574597004}')), {
      név: 3051729675574597004n,
    })
  })
})

describe('stringifyJson', () => {
  const cases: { name: string; value: unknown; expected: string }[] = [
    {
      name: 'a bigint is written as its digits',
      value: { id: 3051729675574597004n },
      expected: '{"id":3051729675574597004}',
    },
    { name: 'a small bigint is written as a number', value: [1n, -1n], expected: '[1,-1]' },
    { name: 'undefined properties are left out', value: { a: 1, b: undefined }, expected: '{"a":1}' },
    { name: 'strings are escaped as usual', value: { s: 'a"b\u001f' }, expected: '{"s":"a\\"b\\u001f"}' },
  ]
  for (const { name, value, expected } of cases) {
    test(`stringifies so that ${name}`, () => {
      assert.equal(stringifyJson(value), expected)
    })
  }

  test('round-trips every long exactly', () => {
    const ids = [0n, 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), 3051729675574597004n]
    const text = stringifyJson({ ids })
    assert.deepEqual(parseJson(text), {
      ids: ids.map((id) => (id >= -(2n ** 53n - 1n) && id <= 2n ** 53n - 1n ? Number(id) : id)),
    })
    assert.equal(stringifyJson(parseJson(text)), text)
  })

  test('indents when asked', () => {
    assert.equal(stringifyJson({ a: 1n }, 2), '{\n  "a": 1\n}')
  })

  test('writes UTF-8 bytes', () => {
    assert.equal(new TextDecoder().decode(stringifyJsonBytes({ n: 2n ** 63n - 1n })), '{"n":9223372036854775807}')
  })

  test('refuses a value without a JSON form', () => {
    assert.throws(() => stringifyJson(undefined), TypeError)
  })
})
