// A schema with every Iceberg type, nested structs, lists and maps, and a deterministic generator
// of rows for it (with nulls, empty collections, extreme values and non-ASCII strings).
import type { IcebergValue, Schema, StructValue } from '../../iceberg/index.ts'
import { seededRandom } from '../test-support.ts'

export const allTypesSchema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'flag', required: false, type: 'boolean' },
    { id: 2, name: 'count', required: true, type: 'int' },
    { id: 3, name: 'big', required: false, type: 'long' },
    { id: 4, name: 'ratio', required: false, type: 'float' },
    { id: 5, name: 'amount', required: false, type: 'double' },
    { id: 6, name: 'price', required: false, type: 'decimal(9,2)' },
    { id: 7, name: 'total', required: false, type: 'decimal(18, 6)' },
    { id: 8, name: 'huge', required: false, type: 'decimal(38,10)' },
    { id: 9, name: 'day', required: false, type: 'date' },
    { id: 10, name: 'clock', required: false, type: 'time' },
    { id: 11, name: 'local_ts', required: false, type: 'timestamp' },
    { id: 12, name: 'event_ts', required: true, type: 'timestamptz' },
    { id: 13, name: 'label', required: false, type: 'string' },
    { id: 14, name: 'id', required: false, type: 'uuid' },
    { id: 15, name: 'blob', required: false, type: 'binary' },
    { id: 16, name: 'code', required: false, type: 'fixed[4]' },
    {
      id: 17,
      name: 'place',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 18, name: 'x', required: true, type: 'long' },
          { id: 19, name: 'name', required: false, type: 'string' },
          {
            id: 20,
            name: 'inner',
            required: false,
            type: { type: 'struct', fields: [{ id: 21, name: 'z', required: false, type: 'double' }] },
          },
        ],
      },
    },
    {
      id: 22,
      name: 'scores',
      required: false,
      type: { type: 'list', 'element-id': 23, element: 'int', 'element-required': false },
    },
    {
      id: 24,
      name: 'items',
      required: true,
      type: {
        type: 'list',
        'element-id': 25,
        'element-required': true,
        element: {
          type: 'struct',
          fields: [
            { id: 26, name: 'sku', required: true, type: 'string' },
            { id: 27, name: 'qty', required: false, type: 'int' },
          ],
        },
      },
    },
    {
      id: 28,
      name: 'attributes',
      required: false,
      type: { type: 'map', 'key-id': 29, key: 'string', 'value-id': 30, value: 'long', 'value-required': false },
    },
    {
      id: 31,
      name: 'by_code',
      required: false,
      type: {
        type: 'map',
        'key-id': 32,
        key: 'int',
        'value-id': 33,
        'value-required': true,
        value: { type: 'struct', fields: [{ id: 34, name: 'seen', required: false, type: 'boolean' }] },
      },
    },
    {
      id: 35,
      name: 'matrix',
      required: false,
      type: {
        type: 'list',
        'element-id': 36,
        'element-required': true,
        element: { type: 'list', 'element-id': 37, element: 'string', 'element-required': false },
      },
    },
  ],
}

const strings = [
  '',
  'a',
  'abc',
  'zebra',
  'Ünïcödé',
  '日本語テキスト',
  '\uFFFF',
  '\u{1F600} emoji',
  'a long string that exceeds sixteen characters',
  'b long string that also exceeds sixteen',
]

export function allTypesRows(count: number, seed = 1): StructValue[] {
  const random = seededRandom(seed)
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T
  const maybe = <T extends IcebergValue>(make: () => T, nullChance = 0.15): T | null =>
    random() < nullChance ? null : make()
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1))
  const bigBetween = (digits: number) => {
    let value = 0n
    const length = int(1, digits)
    for (let i = 0; i < length; i++) value = value * 10n + BigInt(int(0, 9))
    return random() < 0.5 ? -value : value
  }
  const bytes = (length: number) => Uint8Array.from({ length }, () => int(0, 255))
  const special = <T>(make: () => T, extremes: readonly T[]): T => (random() < 0.05 ? pick(extremes) : make())
  const float = () => special(() => (random() - 0.5) * 1000, [Number.NaN, -0, 0])

  const rows: StructValue[] = []
  for (let i = 0; i < count; i++) {
    rows.push({
      flag: maybe(() => random() < 0.5),
      count: special(() => int(-1000, 1000), [-(2 ** 31), 2 ** 31 - 1]),
      big: maybe(() => special(() => BigInt(int(-1e9, 1e9)) * 1000003n, [-(2n ** 63n), 2n ** 63n - 1n])),
      ratio: maybe(float),
      amount: maybe(float),
      price: maybe(() => bigBetween(9)),
      total: maybe(() => bigBetween(18)),
      huge: maybe(() => bigBetween(38)),
      day: maybe(() => int(-30000, 30000)),
      clock: maybe(() => BigInt(int(0, 86_399)) * 1_000_000n + BigInt(int(0, 999_999))),
      local_ts: maybe(() => BigInt(int(-2e9, 2e9)) * 1_000_000n + BigInt(int(0, 999_999))),
      event_ts: BigInt(int(1.6e9, 1.8e9)) * 1_000_000n + BigInt(int(0, 999_999)),
      label: maybe(() => pick(strings)),
      id: maybe(() => bytes(16)),
      blob: maybe(() => bytes(int(0, 12))),
      code: maybe(() => bytes(4)),
      place: maybe(
        () => ({
          x: BigInt(int(-1e6, 1e6)),
          name: maybe(() => pick(strings)),
          inner: maybe(() => ({ z: maybe(() => random() * 100) })),
        }),
        0.2,
      ),
      scores: maybe(() => Array.from({ length: int(0, 4) }, () => maybe(() => int(-50, 50), 0.2))),
      items: Array.from({ length: int(0, 3) }, () => ({ sku: pick(strings), qty: maybe(() => int(0, 9)) })),
      attributes: maybe(
        () => new Map(Array.from({ length: int(0, 3) }, (_, k) => [`key${k}`, maybe(() => BigInt(int(0, 99)))])),
      ),
      by_code: maybe(() => new Map(Array.from({ length: int(0, 2) }, (_, k) => [k * 7, { seen: maybe(() => true) }]))),
      matrix: maybe(() =>
        Array.from({ length: int(0, 2) }, () => Array.from({ length: int(0, 2) }, () => maybe(() => pick(strings)))),
      ),
    })
  }
  return rows
}
