import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { isFloeError } from '../../errors.ts'
import type { IcebergType, IcebergValue, PrimitiveType } from '../types.ts'
import {
  compileConverter,
  fromBinarySingleValue,
  fromJsonSingleValue,
  toBinarySingleValue,
  toJsonSingleValue,
  toJsonSingleValueText,
} from './index.ts'

const hex = (text: string) => Uint8Array.from(Buffer.from(text.replaceAll(' ', ''), 'hex'))
const value = (type: PrimitiveType, json: unknown) => compileConverter(type, 'test')(json)

describe('the binary single-value serialization', () => {
  const cases: [PrimitiveType, IcebergValue, string][] = [
    ['boolean', false, '00'],
    ['boolean', true, '01'],
    ['int', 34, '22 00 00 00'],
    ['int', -1, 'ff ff ff ff'],
    ['int', -2147483648, '00 00 00 80'],
    ['long', 34n, '22 00 00 00 00 00 00 00'],
    ['long', -(2n ** 63n), '00 00 00 00 00 00 00 80'],
    ['long', 2n ** 63n - 1n, 'ff ff ff ff ff ff ff 7f'],
    ['float', 1, '00 00 80 3f'],
    ['float', -0, '00 00 00 80'],
    ['float', Number.POSITIVE_INFINITY, '00 00 80 7f'],
    ['double', 1, '00 00 00 00 00 00 f0 3f'],
    ['double', -2.5, '00 00 00 00 00 00 04 c0'],
    ['date', value('date', '2017-11-16'), '4e 44 00 00'],
    ['date', -1, 'ff ff ff ff'],
    ['time', value('time', '22:31:08'), '00 83 07 e0 12 00 00 00'],
    ['timestamp', value('timestamp', '2017-11-16T22:31:08'), '00 c3 26 2d 21 5e 05 00'],
    ['timestamptz', value('timestamptz', '1969-12-31T23:59:59.999999Z'), 'ff ff ff ff ff ff ff ff'],
    ['string', 'iceberg', '69 63 65 62 65 72 67'],
    ['string', '', ''],
    ['string', 'é😀', 'c3 a9 f0 9f 98 80'],
    ['uuid', value('uuid', 'f79c3e09-677c-4bbd-a479-3f349cb785e7'), 'f7 9c 3e 09 67 7c 4b bd a4 79 3f 34 9c b7 85 e7'],
    ['fixed[4]', hex('00 01 02 03'), '00 01 02 03'],
    ['binary', hex('00 01 02 ff'), '00 01 02 ff'],
    ['binary', hex(''), ''],
    ['decimal(4,2)', value('decimal(4,2)', '14.20'), '05 8c'],
    ['decimal(4,2)', 0n, '00'],
    ['decimal(9,2)', 127n, '7f'],
    ['decimal(9,2)', 128n, '00 80'],
    ['decimal(9,2)', -128n, '80'],
    ['decimal(9,2)', -129n, 'ff 7f'],
    ['decimal(9,2)', -1n, 'ff'],
    ['decimal(38,0)', 10n ** 38n - 1n, '4b 3b 4c a8 5a 86 c4 7a 09 8a 22 3f ff ff ff ff'],
    ['decimal(38,0)', -(10n ** 38n) + 1n, 'b4 c4 b3 57 a5 79 3b 85 f6 75 dd c0 00 00 00 01'],
  ]
  for (const [type, input, bytes] of cases) {
    test(`writes ${type} ${typeof input === 'bigint' ? `${input}n` : String(input)} as ${bytes || 'no bytes'} and reads it back`, () => {
      const written = toBinarySingleValue(type, input)
      assert.deepEqual(written, hex(bytes))
      const read = fromBinarySingleValue(type, written)
      if (Object.is(input, -0)) assert.ok(Object.is(read, -0))
      else assert.deepEqual(read, input)
    })
  }

  test('round-trips NaN', () => {
    assert.ok(Number.isNaN(fromBinarySingleValue('double', toBinarySingleValue('double', Number.NaN))))
    assert.ok(Number.isNaN(fromBinarySingleValue('float', toBinarySingleValue('float', Number.NaN))))
  })

  test('never shares memory with the value it serializes', () => {
    const input = hex('01 02')
    const written = toBinarySingleValue('binary', input)
    written[0] = 9
    assert.deepEqual(input, hex('01 02'))
  })

  test('reads bounds written before a type promotion, as the spec lists them', () => {
    assert.equal(fromBinarySingleValue('long', hex('22 00 00 00')), 34n)
    assert.equal(fromBinarySingleValue('double', hex('00 00 80 3f')), 1)
    assert.equal(fromBinarySingleValue('timestamp', hex('4e 44 00 00')), 17486n * 86_400_000_000n)
    assert.equal(fromBinarySingleValue('decimal(9,2)', hex('05 8c')), 1420n)
  })

  test('treats any non-zero byte as true', () => {
    assert.equal(fromBinarySingleValue('boolean', hex('02')), true)
  })

  const malformed: [PrimitiveType, string][] = [
    ['int', '01 02'],
    ['long', '01 02 03'],
    ['boolean', ''],
    ['uuid', '01'],
    ['decimal(9,2)', ''],
    ['string', 'ff fe'],
    ['time', '00 00 00 00'],
  ]
  for (const [type, bytes] of malformed) {
    test(`refuses ${bytes || 'no bytes'} as a ${type}`, () => {
      assert.throws(
        () => fromBinarySingleValue(type, hex(bytes)),
        (e) => isFloeError(e, 'CONVERSION_FAILED'),
      )
    })
  }

  const wrongValues: [PrimitiveType, IcebergValue][] = [
    ['int', 1n],
    ['int', 2 ** 31],
    ['date', 1.5],
    ['long', 2n ** 63n],
    ['timestamp', -(2n ** 63n) - 1n],
    ['long', 1],
    ['string', 1],
    ['uuid', hex('01')],
    ['fixed[4]', hex('01')],
    ['decimal(9,2)', 1],
    ['boolean', 0],
  ]
  for (const [type, input] of wrongValues) {
    test(`refuses to serialize ${typeof input} ${String(input)} as a ${type}`, () => {
      assert.throws(
        () => toBinarySingleValue(type, input),
        (e) => isFloeError(e, 'CONVERSION_FAILED'),
      )
    })
  }
})

describe('the JSON single-value serialization', () => {
  // The spec's examples (Appendix D), plus edges.
  const cases: [IcebergType, IcebergValue, unknown][] = [
    ['boolean', true, true],
    ['int', 34, 34],
    ['long', 34n, 34n],
    ['float', 1, 1],
    ['float', Math.fround(0.1), 0.1],
    ['double', 1, 1],
    ['double', Number.NaN, 'NaN'],
    ['double', Number.NEGATIVE_INFINITY, '-Infinity'],
    ['decimal(4,2)', 1420n, '14.20'],
    ['decimal(9,2)', -5n, '-0.05'],
    ['decimal(9,0)', 7n, '7'],
    ['decimal(38,10)', 1n, '0.0000000001'],
    ['date', value('date', '2017-11-16'), '2017-11-16'],
    ['date', -719162, '0001-01-01'],
    ['time', value('time', '22:31:08.123456'), '22:31:08.123456'],
    ['time', 0n, '00:00:00'],
    ['timestamp', value('timestamp', '2017-11-16T22:31:08.123456'), '2017-11-16T22:31:08.123456'],
    ['timestamp', -1n, '1969-12-31T23:59:59.999999'],
    ['timestamptz', value('timestamptz', '2017-11-16T22:31:08.123456Z'), '2017-11-16T22:31:08.123456+00:00'],
    ['timestamptz', 0n, '1970-01-01T00:00:00+00:00'],
    ['string', 'iceberg', 'iceberg'],
    ['uuid', value('uuid', 'F79C3E09-677C-4BBD-A479-3F349CB785E7'), 'f79c3e09-677c-4bbd-a479-3f349cb785e7'],
    ['fixed[4]', hex('00 01 02 ff'), '000102ff'],
    ['binary', hex('00 01 02 ff'), '000102ff'],
    [
      {
        type: 'struct',
        fields: [
          { id: 1, name: 'a', required: true, type: 'int' },
          { id: 2, name: 'b', required: false, type: 'string' },
        ],
      },
      { a: 1, b: 'bar' },
      { '1': 1, '2': 'bar' },
    ],
    [{ type: 'list', 'element-id': 1, element: 'int', 'element-required': true }, [1, 2, 3], [1, 2, 3]],
    [
      { type: 'map', 'key-id': 1, key: 'string', 'value-id': 2, value: 'int', 'value-required': true },
      new Map<IcebergValue, IcebergValue>([
        ['a', 1],
        ['b', 2],
      ]),
      { keys: ['a', 'b'], values: [1, 2] },
    ],
    ['long', null, null],
  ]
  for (const [type, input, json] of cases) {
    const name = typeof type === 'string' ? type : type.type
    test(`writes ${name} ${typeof input === 'bigint' ? `${input}n` : String(input)} as ${JSON.stringify(json, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))} and reads it back`, () => {
      assert.deepEqual(toJsonSingleValue(type, input), json)
      const read = fromJsonSingleValue(type, json)
      if (typeof input === 'number' && Number.isNaN(input)) assert.ok(Number.isNaN(read))
      else assert.deepEqual(read, input)
    })
  }

  test('prints longs in full in JSON text', () => {
    assert.equal(toJsonSingleValueText('long', 2n ** 63n - 1n), '9223372036854775807')
    // -0.0 and 0.0 are different float partitions: the text keeps the sign, as Java writes it
    assert.equal(toJsonSingleValueText('double', -0), '-0.0')
    assert.equal(toJsonSingleValueText('float', -0), '-0.0')
    assert.equal(toJsonSingleValueText('double', 0), '0')
    const mapType: IcebergType = {
      type: 'map',
      'key-id': 1,
      key: 'string',
      'value-id': 2,
      value: 'long',
      'value-required': true,
    }
    assert.equal(
      toJsonSingleValueText(mapType, new Map<IcebergValue, IcebergValue>([['a"', -(2n ** 63n)]])),
      '{"keys":["a\\""],"values":[-9223372036854775808]}',
    )
  })

  test('reads longs from numbers, bigints and digit strings', () => {
    assert.equal(fromJsonSingleValue('long', 34), 34n)
    assert.equal(fromJsonSingleValue('long', 2n ** 62n), 2n ** 62n)
    assert.equal(fromJsonSingleValue('long', '-9223372036854775808'), -(2n ** 63n))
  })

  test('reads upper-case hex, and timestamps with any fraction length', () => {
    assert.deepEqual(fromJsonSingleValue('binary', '00FF'), hex('00 ff'))
    assert.equal(fromJsonSingleValue('timestamp', '2017-11-16T22:31:08.1'), 1510871468100000n)
  })

  const malformed: [IcebergType, unknown][] = [
    ['int', 1.5],
    ['int', 2147483648],
    ['long', 2 ** 53],
    ['long', '9223372036854775808'],
    ['decimal(4,2)', 14.2],
    ['decimal(4,2)', '14.205'],
    ['date', 17486],
    ['timestamptz', '2017-11-16T22:31:08'],
    ['timestamp', '2017-11-16T22:31:08+00:00'],
    ['fixed[4]', '0001'],
    ['binary', 'xyz0'],
    ['uuid', 'nope'],
    [
      { type: 'map', 'key-id': 1, key: 'string', 'value-id': 2, value: 'int', 'value-required': true },
      { keys: ['a'], values: [] },
    ],
  ]
  for (const [type, json] of malformed) {
    test(`refuses ${JSON.stringify(json)} as a ${typeof type === 'string' ? type : type.type}`, () => {
      assert.throws(
        () => fromJsonSingleValue(type, json),
        (e) => isFloeError(e, 'CONVERSION_FAILED'),
      )
    })
  }
})
