// A dataset with every column type Floe writes that Spark 3.5 can read (all but `time`: Spark has
// no time-of-day type, and Iceberg's Spark runtime refuses a table with one), partitioned by
// identity(kind) and day(ts); the JSON event Floe ingests for each id, and the value a Spark
// reader must return for each column, in the plain JSON form spark_check.py turns Spark's values
// into (decimals and timestamps as text, bytes as hex, maps as sorted [key, value] pairs).
import { stringify } from 'lossless-json'

export const allTypesDataset = `    customMapping:
      id: id
      ts: ts
      kind: kind
      flag: flag
      small: small
      big: big
      ratio: ratio
      amount: amount
      price: money.price
      huge: money.huge
      day: day
      local_ts: local_ts
      uid: uid
      label: label
      blob: blob
      code: code
      tags: tags
      attrs: attrs
      place: place
      items: items
    schema:
      id: string not null
      ts: timestamptz not null
      kind: string not null
      flag: boolean
      small: int
      big: long
      ratio: float
      amount: double
      price: decimal(9, 2)
      huge: decimal(38, 10)
      day: date
      local_ts: timestamp
      uid: uuid
      label: string
      blob: binary
      code: fixed[4]
      tags: list<string>
      attrs: map<string, long>
      place: 'struct<x: long, name: string, inner: struct<z: double>>'
      items: 'list<struct<sku: string, qty: int>>'
    partitionSpec: [kind, day(ts)]
`

export const kinds = ['click', 'view', 'buy'] as const
const labels = ['', 'a', 'Ünïcödé', '日本語テキスト', '\u{1F600} emoji', 'a label longer than sixteen characters']

/** `YYYY-MM-DDTHH:MM:SS.ffffff` of microseconds since the epoch (UTC). */
function isoMicros(micros: bigint): string {
  const ms = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n)
  const fraction = String(((micros % 1_000_000n) + 1_000_000n) % 1_000_000n).padStart(6, '0')
  return `${new Date(Number(ms)).toISOString().slice(0, 19)}.${fraction}`
}

/** Three days, one per kind: a filter on either partition column selects a third of the files. */
function tsMicros(i: number): bigint {
  return BigInt(Date.UTC(2026, 10, 28 + (i % 3))) * 1000n + BigInt(i) * 1_000_003n
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

/** What the columns of event `i` hold; `null` in every optional column on one event of seven. */
function values(i: number) {
  const nulls = i % 7 === 3
  const blob = Uint8Array.from([i % 256, 0, 255, (i * 7) % 256]).subarray(0, i % 5)
  const code = Uint8Array.from([(i >> 24) & 255, (i >> 16) & 255, (i >> 8) & 255, i & 255])
  const sign = i % 5 === 4 ? '-' : ''
  return {
    nulls,
    ts: tsMicros(i),
    kind: kinds[i % 3] as string,
    flag: i % 2 === 0,
    small: i % 50 === 0 ? 2_147_483_647 : i % 50 === 25 ? -2_147_483_648 : i * 13 - 5000,
    big: i % 50 === 1 ? 9_223_372_036_854_775_807n : BigInt(i) * 3_000_000_007n,
    ratio: i / 8,
    amount: i * 1.5 + 0.25,
    price: `${sign}${Math.floor(i * 1.37)}.${String(i % 100).padStart(2, '0')}`,
    huge: `${sign}1234567890123456789012345${String(i % 1000).padStart(3, '0')}.${String(i).padStart(10, '0')}`,
    day: new Date(Date.UTC(1969, 11, 25 + i)).toISOString().slice(0, 10),
    localTs: BigInt(Date.UTC(1999, 11, 31, 23, 59, 59)) * 1000n + BigInt(i) * 1_000_001n,
    uid: `0000${String(i % 10)}000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
    label: labels[i % labels.length] as string,
    blob,
    code,
    tags: i % 4 === 0 ? [] : [`t${i % 5}`, `ü${i}`],
    attrs:
      i % 6 === 0
        ? []
        : ([
            ['a', BigInt(i)],
            ['b', -BigInt(i)],
          ] as [string, bigint][]),
    place: { x: BigInt(i) * 1000n, name: i % 3 === 0 ? null : `place ${i}`, inner: { z: i / 2 } },
    items: [
      { sku: `sku-${i}`, qty: i % 10 },
      { sku: 'x', qty: null },
    ],
  }
}

/** The JSON event Floe ingests for `id`: long beyond 2^53 as a string, bytes as base64. */
export function allTypesEvent(id: string, i: number): Record<string, unknown> {
  const v = values(i)
  const optional = {
    flag: v.flag,
    small: v.small,
    big: v.big > BigInt(Number.MAX_SAFE_INTEGER) ? String(v.big) : Number(v.big),
    ratio: v.ratio,
    amount: v.amount,
    money: { price: v.price, huge: v.huge },
    day: v.day,
    local_ts: isoMicros(v.localTs),
    uid: v.uid,
    label: v.label,
    blob: Buffer.from(v.blob).toString('base64'),
    code: Buffer.from(v.code).toString('base64'),
    tags: v.tags,
    attrs: Object.fromEntries(v.attrs.map(([key, value]) => [key, Number(value)])),
    place: { x: Number(v.place.x), name: v.place.name, inner: v.place.inner },
    items: v.items,
  }
  const ts = `${isoMicros(v.ts)}Z`
  return v.nulls ? { id, ts, kind: v.kind } : { id, ts, kind: v.kind, ...optional }
}

/** The row a reader must return for `id`, every column, in spark_check.py's JSON form. */
export function allTypesExpected(id: string, i: number): Record<string, unknown> {
  const v = values(i)
  const optional = {
    flag: v.flag,
    small: v.small,
    big: v.big,
    ratio: v.ratio,
    amount: v.amount,
    price: v.price,
    huge: v.huge,
    day: v.day,
    local_ts: isoMicros(v.localTs),
    uid: v.uid,
    label: v.label,
    blob: hex(v.blob),
    code: hex(v.code),
    tags: v.tags,
    attrs: v.attrs,
    place: v.place,
    items: v.items,
  }
  const row = { id, ts: isoMicros(v.ts), kind: v.kind }
  if (!v.nulls) return { ...row, ...optional }
  return { ...row, ...Object.fromEntries(Object.keys(optional).map((column) => [column, null])) }
}

/** One JSON object per line, id -> expected row; bigints as JSON integers (Python reads them whole). */
export function expectedLines(ids: readonly string[], expected: (id: string, i: number) => unknown): string {
  return `${ids.map((id, i) => stringify({ id, row: expected(id, i) })).join('\n')}\n`
}

export const dayOf = (i: number) => new Date(Date.UTC(2026, 10, 28 + (i % 3))).toISOString().slice(0, 10)
