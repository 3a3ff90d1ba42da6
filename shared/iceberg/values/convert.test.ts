import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { FloeError, isFloeError } from '../../errors.ts'
import type { IcebergType, IcebergValue, PrimitiveType } from '../types.ts'
import { significantDigits } from './convert-primitive.ts'
import { type ConverterOptions, compileConverter } from './index.ts'

const bytes = (...values: number[]) => Uint8Array.from(values)

describe('converting valid JSON', () => {
  const cases: [PrimitiveType, unknown, IcebergValue, ConverterOptions?][] = [
    ['boolean', true, true],
    ['boolean', false, false],
    ['int', 34, 34],
    ['int', -2147483648, -2147483648],
    ['int', 2147483647, 2147483647],
    ['int', 1.0, 1],
    ['int', -0, 0],
    ['int', 7n, 7],
    ['long', 34, 34n],
    ['long', Number.MAX_SAFE_INTEGER, 9007199254740991n],
    ['long', '9223372036854775807', 9223372036854775807n],
    ['long', '-9223372036854775808', -9223372036854775808n],
    ['long', '0042', 42n],
    ['long', 2n ** 62n, 2n ** 62n],
    ['float', 1.5, 1.5],
    ['float', 0.1, Math.fround(0.1)],
    ['float', 'NaN', Number.NaN],
    ['float', '-Infinity', Number.NEGATIVE_INFINITY],
    ['double', 0.1, 0.1],
    ['double', 'Infinity', Number.POSITIVE_INFINITY],
    ['double', -0, -0],
    ['decimal(4,2)', '14.20', 1420n],
    ['decimal(4,2)', 14.2, 1420n],
    ['decimal(4,2)', '14.2', 1420n],
    ['decimal(4,2)', '-0.05', -5n],
    ['decimal(4,2)', '1.500', 150n],
    ['decimal(4,2)', 0.1, 10n],
    ['decimal(9,2)', '1.5e3', 150000n],
    ['decimal(9,2)', '+.5', 50n],
    ['decimal(9,2)', 12n, 1200n],
    ['decimal(38,0)', '99999999999999999999999999999999999999', 10n ** 38n - 1n],
    ['decimal(38,10)', '-1234567890123456789012345678.0123456789', -12345678901234567890123456780123456789n],
    ['decimal(5,0)', 1e4, 10000n],
    ['date', '2017-11-16', 17486],
    ['date', '1970-01-01', 0],
    ['date', '1969-12-31', -1],
    ['date', '2000-02-29', 11016],
    ['date', '0001-01-01', -719162],
    ['date', 17486, 17486],
    ['date', 17486n, 17486],
    ['time', '22:31:08', 81068000000n],
    ['time', '22:31:08.123456', 81068123456n],
    ['time', '22:31:08.1', 81068100000n],
    ['time', '22:31:08.123456789', 81068123456n],
    ['time', '00:00', 0n],
    ['timestamp', '2017-11-16T22:31:08', 1510871468000000n],
    ['timestamp', '2017-11-16 22:31:08.000001', 1510871468000001n],
    ['timestamp', '1969-12-31T23:59:59.999999', -1n],
    ['timestamp', '1900-01-01T00:00', -2208988800000000n],
    ['timestamp', '9999-12-31T23:59:59.999999', 253402300799999999n],
    ['timestamptz', '2017-11-16T14:31:08-08:00', 1510871468000000n],
    ['timestamptz', '2017-11-16T22:31:08Z', 1510871468000000n],
    ['timestamptz', '2017-11-17T00:01:08+0130', 1510871468000000n],
    ['timestamptz', '2017-11-17T07:31:08.5+09', 1510871468500000n],
    ['timestamptz', 1510871468000, 1510871468000000n],
    ['timestamptz', 1510871468123.456, 1510871468123456n],
    ['timestamptz', -1, -1000n],
    ['timestamp', 1510871468, 1510871468000000n, { timestampEpochUnit: 'seconds' }],
    ['timestamp', 1.001, 1001000n, { timestampEpochUnit: 'seconds' }],
    ['timestamp', 1510871468000001, 1510871468000001n, { timestampEpochUnit: 'microseconds' }],
    ['timestamp', 1510871468000001n, 1510871468000001n, { timestampEpochUnit: 'microseconds' }],
    ['string', 'iceberg', 'iceberg'],
    ['string', '', ''],
    ['string', 'a😀测', 'a😀测'],
    [
      'uuid',
      'f79c3e09-677c-4bbd-a479-3f349cb785e7',
      bytes(0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7),
    ],
    [
      'uuid',
      'F79C3E09-677C-4BBD-A479-3F349CB785E7',
      bytes(0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7),
    ],
    ['binary', 'AAECAw==', bytes(0, 1, 2, 3)],
    ['binary', 'AAECAw', bytes(0, 1, 2, 3)],
    ['binary', '', bytes()],
    ['fixed[4]', 'AAECAw==', bytes(0, 1, 2, 3)],
  ]
  for (const [type, json, expected, options] of cases) {
    test(`reads ${type} from ${typeof json} ${typeof json === 'bigint' ? `${json}n` : JSON.stringify(json)}${options ? ` with ${JSON.stringify(options)}` : ''}`, () => {
      const actual = compileConverter(type, 'c', options)(json)
      if (typeof expected === 'number' && Number.isNaN(expected)) assert.ok(Number.isNaN(actual))
      else assert.deepEqual(actual, expected)
      if (Object.is(expected, -0)) assert.ok(Object.is(actual, -0))
    })
  }

  test('returns binary values as plain Uint8Array, not Buffer', () => {
    const value = compileConverter('binary', 'c')('AAECAw==')
    assert.equal(Object.getPrototypeOf(value), Uint8Array.prototype)
  })
})

describe('converting malformed JSON', () => {
  const cases: [IcebergType, unknown, string, ConverterOptions?][] = [
    ['double', 'abc', 'column c: expected double, got string "abc"'],
    ['double', true, 'column c: expected double, got boolean true'],
    ['double', [1], 'column c: expected double, got array of 1'],
    ['boolean', 'true', 'column c: expected boolean, got string "true"'],
    ['boolean', 1, 'column c: expected boolean, got number 1'],
    ['int', 1.5, 'column c: expected int, got number 1.5 (not an integer)'],
    ['int', 2147483648, 'column c: expected int, got number 2147483648 (out of range for a 32-bit int)'],
    ['int', -2147483649, 'column c: expected int, got number -2147483649 (out of range for a 32-bit int)'],
    ['int', Number.NaN, 'column c: expected int, got number NaN (not a finite number)'],
    ['int', Number.POSITIVE_INFINITY, 'column c: expected int, got number Infinity (not a finite number)'],
    ['int', '12', 'column c: expected int, got string "12"'],
    ['int', 2n ** 31n, 'column c: expected int, got number 2147483648 (out of range for a 32-bit int)'],
    ['int', {}, 'column c: expected int, got object'],
    [
      'long',
      2 ** 53,
      'column c: expected long, got number 9007199254740992 (beyond 2^53, where JSON numbers lose precision; send it as a string)',
    ],
    ['long', 1e300, 'column c: expected long, got number 1e+300 (out of range for a 64-bit long)'],
    [
      'long',
      '9223372036854775808',
      'column c: expected long, got string "9223372036854775808" (out of range for a 64-bit long)',
    ],
    ['long', '1.5', 'column c: expected long, got string "1.5" (not an integer)'],
    [
      'long',
      '12345678901234567890123',
      'column c: expected long, got string "12345678901234567890123" (not an integer)',
    ],
    ['long', 'NaN', 'column c: expected long, got string "NaN" (not an integer)'],
    ['float', 1e39, 'column c: expected float, got number 1e+39 (out of range for a 32-bit float)'],
    ['float', 'nan', 'column c: expected float, got string "nan"'],
    [
      'decimal(4,2)',
      '123.45',
      'column c: expected decimal(4,2), got string "123.45" (more than 4 digits (precision 4))',
    ],
    ['decimal(4,2)', 10.655, 'column c: expected decimal(4,2), got number 10.655 (needs rounding to fit scale 2)'],
    ['decimal(4,2)', '0.001', 'column c: expected decimal(4,2), got string "0.001" (needs rounding to fit scale 2)'],
    ['decimal(4,2)', '1e2', 'column c: expected decimal(4,2), got string "1e2" (more than 4 digits (precision 4))'],
    [
      'decimal(38,0)',
      '1e999999',
      'column c: expected decimal(38,0), got string "1e999999" (more than 38 digits (precision 38))',
    ],
    ['decimal(4,2)', '1,5', 'column c: expected decimal(4,2), got string "1,5" (not a decimal number)'],
    ['decimal(4,2)', '', 'column c: expected decimal(4,2), got string "" (not a decimal number)'],
    ['decimal(4,2)', Number.NaN, 'column c: expected decimal(4,2), got number NaN (not a finite number)'],
    ['decimal(4,2)', 1000n, 'column c: expected decimal(4,2), got number 1000 (more than 4 digits (precision 4))'],
    ['date', '2017-02-29', 'column c: expected date, got string "2017-02-29" (not a YYYY-MM-DD date)'],
    ['date', '2017-13-01', 'column c: expected date, got string "2017-13-01" (not a YYYY-MM-DD date)'],
    [
      'date',
      '2017-11-16T00:00:00',
      'column c: expected date, got string "2017-11-16T00:00:00" (not a YYYY-MM-DD date)',
    ],
    ['date', '17-11-16', 'column c: expected date, got string "17-11-16" (not a YYYY-MM-DD date)'],
    ['date', 1.5, 'column c: expected date, got number 1.5 (not an integer)'],
    ['time', '24:00:00', 'column c: expected time, got string "24:00:00" (not an HH:MM:SS[.ffffff] time)'],
    ['time', '12:60', 'column c: expected time, got string "12:60" (not an HH:MM:SS[.ffffff] time)'],
    ['time', '12:00:00.', 'column c: expected time, got string "12:00:00." (not an HH:MM:SS[.ffffff] time)'],
    ['time', 3600, 'column c: expected time, got number 3600'],
    [
      'timestamp',
      '2017-11-16T22:31:08Z',
      'column c: expected timestamp, got string "2017-11-16T22:31:08Z" (has a zone offset; a timestamp without zone takes none, use timestamptz)',
    ],
    [
      'timestamptz',
      '2017-11-16T22:31:08',
      'column c: expected timestamptz, got string "2017-11-16T22:31:08" (no zone offset; timestamptz needs one, e.g. Z or +01:00)',
    ],
    [
      'timestamptz',
      '2017-11-16T22:31:08+25:00',
      'column c: expected timestamptz, got string "2017-11-16T22:31:08+25:00" (bad zone offset)',
    ],
    [
      'timestamptz',
      '2017-11-31T22:31:08Z',
      'column c: expected timestamptz, got string "2017-11-31T22:31:08Z" (not an ISO-8601 timestamp)',
    ],
    ['timestamptz', 'yesterday', 'column c: expected timestamptz, got string "yesterday" (not an ISO-8601 timestamp)'],
    [
      'timestamptz',
      Number.POSITIVE_INFINITY,
      'column c: expected timestamptz, got number Infinity (not a finite number)',
    ],
    ['timestamptz', 1e300, 'column c: expected timestamptz, got number 1e+300 (out of range as epoch milliseconds)'],
    ['timestamptz', true, 'column c: expected timestamptz, got boolean true'],
    ['string', 42, 'column c: expected string, got number 42'],
    [
      'string',
      'a\ud800b',
      'column c: expected string, got string "a\\ud800b" (contains a lone surrogate, not valid UTF-8)',
    ],
    [
      'uuid',
      'f79c3e09677c4bbda4793f349cb785e7',
      'column c: expected uuid, got string "f79c3e09677c4bbda4793f349cb785e7" (not a canonical UUID)',
    ],
    [
      'uuid',
      'g79c3e09-677c-4bbd-a479-3f349cb785e7',
      'column c: expected uuid, got string "g79c3e09-677c-4bbd-a479-3f349cb785e7" (not a canonical UUID)',
    ],
    ['uuid', 12, 'column c: expected uuid, got number 12'],
    ['binary', 'AA$C', 'column c: expected binary, got string "AA$C" (not base64)'],
    ['binary', 'AAECA', 'column c: expected binary, got string "AAECA" (not base64)'],
    ['binary', 'AA==AA==', 'column c: expected binary, got string "AA==AA==" (not base64)'],
    ['binary', [0, 1], 'column c: expected binary, got array of 2'],
    ['fixed[4]', 'AAEC', 'column c: expected fixed[4], got string "AAEC" (3 bytes, not 4)'],
  ]
  for (const [type, json, message, options] of cases) {
    test(`refuses ${typeof type === 'string' ? type : type.type} from ${typeof json} ${typeof json === 'bigint' ? `${json}n` : String(json).slice(0, 30)}`, () => {
      const convert = compileConverter(type, 'c', options)
      assert.throws(
        () => convert(json),
        (error) => isFloeError(error, 'CONVERSION_FAILED') && error.message === message,
        message,
      )
    })
  }

  test('cuts a long value to a short excerpt in the message', () => {
    const error = catchError(() => compileConverter('int', 'c')('x'.repeat(1000)))
    assert.equal(error.message, `column c: expected int, got string "${'x'.repeat(40)}…"`)
  })

  test('puts the path, the expected type and what was found in the details', () => {
    const error = catchError(() => compileConverter('int', 'amount')(1.5))
    assert.deepEqual(error.details, {
      column: 'amount',
      expected: 'int',
      found: 'number 1.5',
      reason: 'not an integer',
    })
    assert.equal(error.retryable, false)
    assert.equal(error.fatal, false)
  })
})

function catchError(run: () => unknown): FloeError {
  try {
    run()
  } catch (error) {
    if (error instanceof FloeError) return error
    throw error
  }
  assert.fail('no error thrown')
}

describe('null and missing values', () => {
  test('are null for an optional column', () => {
    const convert = compileConverter('long', 'c')
    assert.equal(convert(null), null)
    assert.equal(convert(undefined), null)
  })

  test('are an error for a required column', () => {
    const convert = compileConverter('long', 'id', { required: true })
    assert.throws(() => convert(null), { message: 'column id: expected long, got null (the column is required)' })
    assert.throws(() => convert(undefined), {
      message: 'column id: expected long, got missing (the column is required)',
    })
  })
})

describe('counting the significant digits of a JSON number', () => {
  const cases: [number, number][] = [
    [0, 0],
    [1, 1],
    [-1.5, 2],
    [100, 1],
    [0.000123, 3],
    [1.5e-7, 2],
    [1e21, 1],
    [123456789012345, 15],
    [1234567890123456, 16],
    [JSON.parse('12345678901234567890'), 17],
    [0.1 + 0.2, 17],
  ]
  for (const [value, digits] of cases) {
    test(`${value} has ${digits}`, () => assert.equal(significantDigits(value), digits))
  }
})

describe('numbers JSON.parse would change', () => {
  test('an overflowed double, at any depth, is refused; the quoted Infinity still converts', () => {
    const convert = compileConverter(
      { type: 'list', 'element-id': 2, element: 'double', 'element-required': false },
      'xs',
    )
    assert.throws(() => convert([1, JSON.parse('1e400')]), {
      message: /column xs\[1\]: expected double, got .*out of range for a double: JSON has no Infinity/,
    })
    assert.deepEqual(convert(['Infinity']), [Number.POSITIVE_INFINITY])
    assert.throws(() => compileConverter('float', 'f')(JSON.parse('-1e400')), { message: /out of range for a float/ })
  })

  test('a decimal given as a number of more than 15 significant digits, at any depth, is refused', () => {
    const convert = compileConverter(
      { type: 'struct', fields: [{ id: 2, name: 'price', required: false, type: 'decimal(38, 2)' }] },
      'order',
    )
    assert.throws(() => convert({ price: JSON.parse('12345678901234567890') }), {
      message: /column order\.price: expected decimal\(38, 2\), .*more than 15 significant digits/,
    })
    assert.deepEqual(convert({ price: '12345678901234567890' }), { price: 1234567890123456789000n })
  })
})
