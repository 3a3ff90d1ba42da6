import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../errors.ts'
import type { IcebergValue, StructType } from '../types.ts'
import { compileConverter, compileRowConverter } from './index.ts'

const user: StructType = {
  type: 'struct',
  fields: [
    { id: 1, name: 'name', required: true, type: 'string' },
    { id: 2, name: 'age', required: false, type: 'int' },
    {
      id: 3,
      name: 'tags',
      required: false,
      type: { type: 'list', 'element-id': 4, element: 'string', 'element-required': true },
    },
    {
      id: 5,
      name: 'scores',
      required: false,
      type: { type: 'map', 'key-id': 6, key: 'string', 'value-id': 7, value: 'double', 'value-required': false },
    },
    {
      id: 8,
      name: 'matrix',
      required: false,
      type: {
        type: 'list',
        'element-id': 9,
        element: { type: 'list', 'element-id': 10, element: 'int', 'element-required': false },
        'element-required': false,
      },
    },
    {
      id: 11,
      name: 'friends',
      required: false,
      type: {
        type: 'list',
        'element-id': 12,
        element: { type: 'struct', fields: [{ id: 13, name: 'id', required: true, type: 'long' }] },
        'element-required': false,
      },
    },
  ],
}

describe('nested values', () => {
  const convert = compileConverter(user, 'user')

  test('read a struct, ignoring unknown keys and defaulting missing optional fields to null', () => {
    assert.deepEqual(convert({ name: 'ann', tags: ['a', 'b'], extra: 1, scores: { x: 1.5, y: null } }), {
      name: 'ann',
      age: null,
      tags: ['a', 'b'],
      scores: new Map<IcebergValue, IcebergValue>([
        ['x', 1.5],
        ['y', null],
      ]),
      matrix: null,
      friends: null,
    })
  })

  test('read nested lists and lists of structs', () => {
    const value = convert({ name: 'b', matrix: [[1, 2], null, [null]], friends: [{ id: '7' }, null] })
    assert.deepEqual((value as Record<string, IcebergValue>).matrix, [[1, 2], null, [null]])
    assert.deepEqual((value as Record<string, IcebergValue>).friends, [{ id: 7n }, null])
  })

  const failures: [unknown, string][] = [
    [{ age: 3 }, 'column user.name: expected string, got missing (the column is required)'],
    [{ name: 'a', tags: ['x', 'y', 'z', 5] }, 'column user.tags[3]: expected string, got number 5'],
    [{ name: 'a', tags: ['x', null] }, 'column user.tags[1]: expected string, got null (the column is required)'],
    [{ name: 'a', tags: 'x' }, 'column user.tags: expected list, got string "x"'],
    [{ name: 'a', scores: { good: 1, bad: 'NaN!' } }, 'column user.scores["bad"]: expected double, got string "NaN!"'],
    [{ name: 'a', scores: [1] }, 'column user.scores[0]: expected map entry {key, value}, got number 1'],
    [{ name: 'a', matrix: [[1], [2, 'x']] }, 'column user.matrix[1][1]: expected int, got string "x"'],
    [
      { name: 'a', friends: [{ id: 1 }, { id: 2 }, { id: 1.5 }] },
      'column user.friends[2].id: expected long, got number 1.5 (not an integer)',
    ],
    [{ name: 'a', friends: [{}] }, 'column user.friends[0].id: expected long, got missing (the column is required)'],
    ['ann', 'column user: expected struct, got string "ann"'],
    [[{ name: 'a' }], 'column user: expected struct, got array of 1'],
  ]
  for (const [json, message] of failures) {
    test(`name the nested path in the error: ${message.split(':')[0]}`, () => {
      assert.throws(
        () => convert(json),
        (error) => isFloeError(error, 'CONVERSION_FAILED') && error.message === message,
        message,
      )
    })
  }

  test('read a map with int keys from a JSON object, and one with struct keys from entries', () => {
    const intKeys = compileConverter(
      { type: 'map', 'key-id': 1, key: 'int', 'value-id': 2, value: 'string', 'value-required': true },
      'm',
    )
    assert.deepEqual(
      intKeys({ '1': 'a', '-2': 'b' }),
      new Map<IcebergValue, IcebergValue>([
        [1, 'a'],
        [-2, 'b'],
      ]),
    )
    assert.throws(() => intKeys({ x: 'a' }), { message: 'column m.key: expected int, got string "x"' })
    assert.throws(() => intKeys({ '1': null }), {
      message: 'column m["1"]: expected string, got null (the column is required)',
    })
    assert.deepEqual(intKeys([{ key: 3, value: 'c' }]), new Map<IcebergValue, IcebergValue>([[3, 'c']]))
    assert.throws(
      () =>
        intKeys([
          { key: 3, value: 'c' },
          { key: 3, value: 'd' },
        ]),
      { message: 'column m[1].key: expected int, got number 3 (duplicate map key)' },
    )

    const structKeys = compileConverter(
      {
        type: 'map',
        'key-id': 1,
        key: { type: 'struct', fields: [{ id: 3, name: 'k', required: true, type: 'string' }] },
        'value-id': 2,
        value: 'long',
        'value-required': false,
      },
      'm',
    )
    assert.deepEqual(
      structKeys([{ key: { k: 'a' }, value: 1 }]),
      new Map<IcebergValue, IcebergValue>([[{ k: 'a' }, 1n]]),
    )
    assert.throws(
      () => structKeys({ a: 1 }),
      (e) => isFloeError(e, 'CONVERSION_FAILED'),
    )
    assert.throws(() => structKeys([{ key: null, value: 1 }]), {
      message: 'column m.key: expected struct, got null (the column is required)',
    })
  })

  test('read boolean and long map keys from their text', () => {
    const booleans = compileConverter(
      { type: 'map', 'key-id': 1, key: 'boolean', 'value-id': 2, value: 'long', 'value-required': false },
      'm',
    )
    assert.deepEqual(
      booleans({ true: 1, false: '2' }),
      new Map<IcebergValue, IcebergValue>([
        [true, 1n],
        [false, 2n],
      ]),
    )
  })
})

describe('a row converter', () => {
  test('converts a JSON object into the schema`s struct', () => {
    const toRow = compileRowConverter({
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'ts', required: false, type: 'timestamptz' },
      ],
    })
    assert.deepEqual(toRow({ id: '12', ts: 0 }), { id: 12n, ts: 0n })
    assert.throws(() => toRow([]), { message: 'column (row): expected struct, got array of 0' })
    assert.throws(() => toRow({ ts: 0 }), { message: 'column id: expected long, got missing (the column is required)' })
  })

  test('does not read inherited members for fields named like them, nor set the prototype', () => {
    const toRow = compileRowConverter({
      type: 'struct',
      fields: [
        { id: 1, name: 'constructor', required: false, type: 'string' },
        { id: 2, name: '__proto__', required: false, type: 'string' },
        { id: 3, name: 'toString', required: false, type: 'string' },
      ],
    })
    const row = toRow(JSON.parse('{"__proto__": "p", "toString": "t"}'))
    assert.deepEqual(Object.entries(row), [
      ['constructor', null],
      ['__proto__', 'p'],
      ['toString', 't'],
    ])
    assert.equal(Object.getPrototypeOf(row), Object.prototype)
  })

  test('sparse: leaves out the top-level fields a record lacks or has null, still checking the required ones', () => {
    const toRow = compileRowConverter(
      {
        type: 'struct',
        fields: [
          { id: 1, name: 'id', required: true, type: 'long' },
          { id: 2, name: 'note', required: false, type: 'string' },
          {
            id: 3,
            name: 'user',
            required: false,
            type: { type: 'struct', fields: [{ id: 4, name: 'name', required: false, type: 'string' }] },
          },
        ],
      },
      { sparse: true },
    )
    assert.deepEqual(toRow({ id: 1, note: null }), { id: 1n })
    // a nested struct keeps every field of its own
    assert.deepEqual(toRow({ id: 2, user: {} }), { id: 2n, user: { name: null } })
    assert.throws(() => toRow({ note: 'x' }), { message: /column id: expected long, got missing/ })
  })
})
