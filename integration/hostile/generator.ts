// Hostile records for the fuzz runs (fuzz.test.ts, bench/fuzz.ts): every shape of input a Kafka
// topic can hand Floe, mixed with good events at a chosen rate. Seeded, so a failing run repeats.
//
// Good events carry `kind: "good"` and an id from the run's good-id sequence; every hostile record
// that still decodes (a BOM, duplicate keys, a lone surrogate, some bit flips) carries another kind
// and an id outside that sequence, so pyiceberg can count the good ids exactly with a filter on kind
// while the total of rows plus dead-lettered records accounts for every record produced.

/** The dataset the fuzz runs map the events into: every column type a number can overflow. */
export const fuzzMapping = {
  id: 'id',
  ts: 'ts',
  user_id: 'user.id',
  n: 'n',
  amount: 'amount',
  price: 'price',
  ok: 'ok',
  kind: 'kind',
} as const

export const fuzzSchema = {
  id: 'string not null',
  ts: 'timestamptz',
  user_id: 'long',
  n: 'int',
  amount: 'double',
  price: 'decimal(9, 2)',
  ok: 'boolean',
  kind: 'string',
} as const

export const hostileKinds = [
  'random-bytes',
  'truncated-json',
  'bit-flipped-json',
  'deep-nesting',
  'oversize-compressible',
  'oversize-incompressible',
  'invalid-utf8',
  'encoded-surrogate',
  'lone-surrogate-escape',
  'byte-order-mark',
  'overflow-long',
  'overflow-int',
  'overflow-double',
  'overflow-decimal',
  'overflow-timestamp',
  'nan',
  'duplicate-keys',
  'wrong-types',
  'json-null',
  'bare-string',
  'json-array',
  'empty-value',
  'tombstone',
] as const

/**
 * For a dataset that infers its columns, two more: field names that cannot be columns, and records
 * that each bring 25 new fields (a producer writing ids as keys), until the table's field limit.
 */
export const inferredHostileKinds = [...hostileKinds, 'unusable-field-name', 'many-new-fields'] as const

export type HostileKind = (typeof inferredHostileKinds)[number]

export interface FuzzRecord {
  key: Buffer
  /** null: a tombstone. */
  value: Buffer | null
  /** 'good', or the hostile shape. */
  kind: 'good' | HostileKind
  /** The good event's id, for the exactly-once count. */
  goodId?: string
}

/** mulberry32: small, fast, seeded; enough for test input. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface GeneratorOptions {
  /** Share of hostile records, 0..1. */
  hostileRate: number
  seed?: number
  /** Prefix of every id, unique per run. */
  runId: string
  /** The dataset's ingestion.maxRecordBytes: oversize records are just above it. */
  maxRecordBytes: number
  /** Oversize records cost that many bytes each: the share of hostile picks that keep one (default 0.05). */
  oversizeShare?: number
  /** The hostile shapes to pick from (default hostileKinds). */
  kinds?: readonly HostileKind[]
  /**
   * So many records first are good (default 0): a dataset that infers its columns takes their
   * types from the first values, as it would from a stream that starts well.
   */
  goodFirst?: number
}

export class HostileGenerator {
  readonly #rand: () => number
  readonly #o: GeneratorOptions
  #serial = 0
  #good = 0

  constructor(options: GeneratorOptions) {
    this.#o = options
    this.#rand = random(options.seed ?? 42)
  }

  /** The next record: good with probability 1 - hostileRate. */
  next(): FuzzRecord {
    const serial = this.#serial++
    if (this.#rand() >= this.#o.hostileRate || serial < (this.#o.goodFirst ?? 0)) return this.#goodRecord(serial)
    // Oversize records cost megabytes each: only a share of the picks that land on one keep it.
    const oversizeShare = this.#o.oversizeShare ?? 0.05
    const kinds = this.#o.kinds ?? hostileKinds
    let kind: HostileKind
    do kind = kinds[Math.floor(this.#rand() * kinds.length)]!
    while (kind.startsWith('oversize') && this.#rand() >= oversizeShare)
    return { key: Buffer.from(`k${serial}`), value: this.hostile(kind, serial), kind }
  }

  #goodRecord(serial: number): FuzzRecord {
    const id = `${this.#o.runId}-good-${this.#good++}`
    return {
      key: Buffer.from(id),
      value: Buffer.from(JSON.stringify(this.#event(id, 'good', serial))),
      kind: 'good',
      goodId: id,
    }
  }

  #event(id: string, kind: string, i: number): Record<string, unknown> {
    return {
      id,
      ts: new Date(Date.UTC(2026, 10, 28 + (i % 3), 0, 0, i % 60)).toISOString(),
      user: { id: i, name: `user ${i % 1000}` },
      n: i % 100_000,
      amount: (i % 10_000) / 10,
      price: ((i % 100_000) / 100).toFixed(2),
      ok: i % 2 === 0,
      kind,
    }
  }

  /** A hostile template: valid JSON of an event that is not a good one. */
  #template(serial: number): string {
    return JSON.stringify(this.#event(`${this.#o.runId}-hostile-${serial}`, 'hostile', serial))
  }

  #bytes(length: number): Buffer {
    const bytes = Buffer.allocUnsafe(length)
    for (let i = 0; i < length; i++) bytes[i] = Math.floor(this.#rand() * 256)
    return bytes
  }

  hostile(kind: HostileKind, serial: number): Buffer | null {
    const template = this.#template(serial)
    // Replaces one field's JSON (for `user`, the user's id) in the template.
    const swap = (field: string, json: string) =>
      field === 'user'
        ? Buffer.from(template.replace(/"user":\{"id":[^,}]*/, `"user":{"id":${json}`))
        : Buffer.from(template.replace(new RegExp(`"${field}":("[^"]*"|[^,}]*)`), `"${field}":${json}`))
    switch (kind) {
      case 'random-bytes':
        return this.#bytes(1 + Math.floor(this.#rand() * 300))
      case 'truncated-json':
        return Buffer.from(template.slice(0, Math.floor(this.#rand() * (template.length - 1))))
      case 'bit-flipped-json': {
        const bytes = Buffer.from(template)
        const at = Math.floor(this.#rand() * bytes.length)
        bytes[at] = (bytes[at] ?? 0) ^ (1 << Math.floor(this.#rand() * 8))
        return bytes
      }
      case 'deep-nesting': {
        // A few KB each, thousands deep: what once made one fetch's dead-letter batch too large.
        const depth = 2000 + Math.floor(this.#rand() * 3000)
        return Buffer.from(`{"id":"${this.#o.runId}-deep-${serial}","x":${'['.repeat(depth)}${']'.repeat(depth)}}`)
      }
      case 'oversize-compressible':
        // Shrinks to almost nothing compressed: reaches Floe whole, and the dead-letter topic too.
        return Buffer.from(`{"id":"x","pad":"${'a'.repeat(this.#o.maxRecordBytes + 1024)}"}`)
      case 'oversize-incompressible':
        // Base64 of random bytes still compresses to 3/4: over a small dead-letter limit even compressed.
        return Buffer.from(
          `{"id":"x","pad":"${this.#bytes(Math.ceil((this.#o.maxRecordBytes * 3) / 4) + 1024).toString('base64')}"}`,
        )
      case 'invalid-utf8':
        return Buffer.concat([
          Buffer.from('{"id":"'),
          Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
          Buffer.from('","kind":"x"}'),
        ])
      case 'encoded-surrogate':
        // U+D800 encoded as UTF-8 bytes (ED A0 80): not valid UTF-8.
        return Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('","kind":"x"}')])
      case 'lone-surrogate-escape':
        return swap('kind', '"\\ud800 lone"')
      case 'byte-order-mark':
        return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(template)])
      case 'overflow-long':
        return swap('user', ['9223372036854775808', '1e400', '-1e19', '18446744073709551616'][serial % 4]!)
      case 'overflow-int':
        return swap('n', ['2147483648', '-2147483649', '1e10', '4294967296'][serial % 4]!)
      case 'overflow-double':
        return swap('amount', ['1e400', '-1e400', '1.8e308'][serial % 3]!)
      case 'overflow-decimal':
        return swap('price', ['12345678901.5', '"99999999999.99"', '1e30'][serial % 3]!)
      case 'overflow-timestamp':
        return swap('ts', ['1e20', '-1e20', '"99999-12-31T00:00:00Z"', '"not a time"'][serial % 4]!)
      case 'nan':
        return swap('amount', ['NaN', 'Infinity', '-Infinity'][serial % 3]!)
      case 'duplicate-keys':
        return Buffer.from(`{"kind":"good",${template.slice(1)}`)
      case 'wrong-types':
        return swap(
          ['user', 'n', 'ok', 'ts', 'price'][serial % 5]!,
          ['"abc"', '{"a":1}', '[true]', 'true', 'false'][serial % 5]!,
        )
      case 'json-null':
        return Buffer.from('null')
      case 'bare-string':
        return Buffer.from('"just a string"')
      case 'json-array':
        return Buffer.from(`[${template}]`)
      case 'empty-value':
        return Buffer.alloc(0)
      case 'tombstone':
        return null
      case 'unusable-field-name':
        return Buffer.from(`${template.slice(0, -1)},${['"a.b":1', '"":2', '"__proto__":{"y":1}'][serial % 3]}}`)
      case 'many-new-fields': {
        const fields = Array.from({ length: 25 }, (_, k) => `"f_${serial}_${k}":${k}`)
        return Buffer.from(`${template.slice(0, -1)},${fields.join(',')}}`)
      }
    }
  }
}
