// A minimal Avro object container file (OCF) writer and reader, on top of avsc's binary encoding.
//
// Why not avsc's own BlockEncoder/BlockDecoder: a BlockEncoder built from a Type writes
// `Type.getSchema()` into the header, and avsc 5.7.9 drops unknown attributes there even with
// `exportAttrs` — every `field-id`, `element-id`, `logicalType: "map"` and `iceberg-field-name`
// that Iceberg readers resolve columns by would be gone (docs/decisions.md, "Avro"). Its streams are
// also asynchronous while manifests are small, whole-buffer artefacts. So the header carries the
// raw schema JSON verbatim and records are encoded with avsc's `Type.encode`.
//
// Longs are BigInt everywhere (snapshot ids are 63-bit): `bigintLong` replaces avsc's `long`.
import { randomBytes } from 'node:crypto'
import { deflateRawSync, inflateRawSync, zstdDecompressSync } from 'node:zlib'
import avro from 'avsc'
import { FloeError } from '../../errors.ts'

export type AvroCodec = 'null' | 'deflate'

const scratch = Buffer.alloc(10)
const twoTo52 = 2 ** 52

/** Zigzag varint bytes (as avsc hands them over) to BigInt, with a fast path below 2^49. */
export function varintToBigint(bytes: Buffer): bigint {
  if (bytes.length <= 7) {
    let n = 0
    let scale = 1
    for (let i = 0; i < bytes.length; i += 1) {
      n += ((bytes[i] as number) & 0x7f) * scale
      scale *= 128
    }
    return BigInt(n % 2 === 1 ? -(n + 1) / 2 : n / 2)
  }
  let n = 0n
  for (let i = bytes.length - 1; i >= 0; i -= 1) n = (n << 7n) | BigInt((bytes[i] as number) & 0x7f)
  return (n >> 1n) ^ -(n & 1n)
}

/** BigInt to zigzag varint bytes in a shared scratch buffer, which avsc copies out at once. */
export function bigintToVarint(value: bigint): Buffer {
  let length = 0
  if (value > -twoTo52 && value < twoTo52) {
    const v = Number(value)
    let z = v >= 0 ? v * 2 : -v * 2 - 1
    while (z >= 128) {
      scratch[length++] = (z % 128) | 0x80
      z = Math.floor(z / 128)
    }
    scratch[length++] = z
  } else {
    let z = BigInt.asUintN(64, (value << 1n) ^ (value >> 63n))
    while (z >= 128n) {
      scratch[length++] = Number(z & 0x7fn) | 0x80
      z >>= 7n
    }
    scratch[length++] = Number(z)
  }
  return scratch.subarray(0, length)
}

/**
 * Avro `long` as BigInt, exact over the whole 64-bit range. `noUnpack` hands over the raw varint:
 * avsc's default would unpack every long into a fresh 8-byte Buffer, one more allocation per long
 * (a manifest entry with full statistics has ~50), and reading is dominated by garbage collection.
 */
export const bigintLong = avro.types.LongType.__with(
  {
    fromBuffer: varintToBigint,
    toBuffer: bigintToVarint,
    fromJSON: (value: number | string) => BigInt(value),
    toJSON: (value: bigint) => value.toString(),
    isValid: (value: unknown) => typeof value === 'bigint' && BigInt.asIntN(64, value) === value,
    compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
  },
  true,
)

/**
 * An avsc Type for an Iceberg Avro schema, with BigInt longs. The hook also catches longs written
 * as `{"type": "long", "logicalType": ...}` (time, timestamps), which avsc's registry would miss.
 * Logical types avsc does not know stay their underlying type.
 */
export function avroTypeOf(schema: object): avro.Type {
  return avro.Type.forSchema(schema as Parameters<typeof avro.Type.forSchema>[0], {
    registry: { long: bigintLong },
    typeHook: (node) =>
      node === 'long' || (typeof node === 'object' && (node as { type?: unknown }).type === 'long')
        ? bigintLong
        : undefined,
  })
}

const magic = Buffer.from([0x4f, 0x62, 0x6a, 0x01]) // "Obj" 1
const metadataType = avro.Type.forSchema({ type: 'map', values: 'bytes' })
const countType = avro.Type.forSchema('long') // block counts and sizes fit a double
/** Java's DataFileWriter default sync interval; blocks of this size compress well enough. */
const blockBytes = 64_000

export interface ContainerToWrite {
  /** The schema exactly as it goes into the header (with Iceberg's id attributes). */
  schema: object
  /** avsc Type built from `schema` by `avroTypeOf`. */
  type: avro.Type
  /** Extra header metadata (Iceberg's keys); `avro.schema` and `avro.codec` are added. */
  metadata: Record<string, string>
  codec: AvroCodec
  /** 16 bytes; random when absent. Only tests pass one, for byte-identical output. */
  syncMarker?: Uint8Array
}

export function writeContainer<T>(container: ContainerToWrite, records: Iterable<T>): Uint8Array {
  const sync = Buffer.from(container.syncMarker ?? randomBytes(16))
  if (sync.length !== 16) throw new FloeError('INVARIANT_BROKEN', 'an Avro sync marker has 16 bytes')
  const metadata: Record<string, Buffer> = {
    'avro.schema': Buffer.from(JSON.stringify(container.schema)),
    'avro.codec': Buffer.from(container.codec),
  }
  for (const [key, value] of Object.entries(container.metadata)) metadata[key] = Buffer.from(value)
  const parts: Buffer[] = [magic, metadataType.toBuffer(metadata), sync]

  let block = Buffer.allocUnsafe(blockBytes * 2)
  let used = 0
  let count = 0
  const flush = (): void => {
    if (count === 0) return
    const raw = block.subarray(0, used)
    const data = container.codec === 'deflate' ? deflateRawSync(raw) : Buffer.from(raw)
    parts.push(countType.toBuffer(count), countType.toBuffer(data.length), data, sync)
    used = 0
    count = 0
  }
  for (const record of records) {
    let end = container.type.encode(record, block, used)
    while (end < 0) {
      // avsc reports how many bytes were missing as a negative offset; grow and encode again.
      const grown = Buffer.allocUnsafe(Math.max(block.length * 2, used - end))
      block.copy(grown, 0, 0, used)
      block = grown
      end = container.type.encode(record, block, used)
    }
    used = end
    count += 1
    if (used >= blockBytes) flush()
  }
  flush()
  const bytes = Buffer.concat(parts)
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length)
}

export interface ContainerRead<T> {
  /** The header's schema JSON, parsed, with every attribute kept. */
  schema: object
  metadata: Map<string, string>
  records: T[]
}

function unreadable(message: string, cause?: unknown): FloeError {
  return new FloeError('INVARIANT_BROKEN', `unreadable Avro container: ${message}`, { cause })
}

/**
 * Reads a whole container. Each record, decoded with the writer's schema (an avsc record object
 * keyed by Avro field name), goes through `convert` as soon as it is decoded, so avsc's objects die
 * young instead of piling up beside the converted ones. `prepare` sees the header first and builds
 * the converter.
 */
export function readContainer<T = unknown>(
  bytes: Uint8Array,
  prepare: (header: { schema: object; metadata: Map<string, string> }) => (record: unknown) => T = () => (record) =>
    record as T,
): ContainerRead<T> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)
  if (buffer.length < 4 || !buffer.subarray(0, 4).equals(magic)) throw unreadable('bad magic')
  const header = metadataType.decode(buffer, 4)
  if (header.offset < 0) throw unreadable('truncated header')
  const metadata = new Map<string, string>()
  for (const [key, value] of Object.entries(header.value as Record<string, Buffer>)) {
    metadata.set(key, value.toString('utf8'))
  }
  const sync = buffer.subarray(header.offset, header.offset + 16)
  let pos = header.offset + 16
  const schemaText = metadata.get('avro.schema')
  if (schemaText === undefined) throw unreadable('no avro.schema in the header')
  const codec = metadata.get('avro.codec') ?? 'null'
  let schema: object
  let type: avro.Type
  try {
    schema = renameInvalidFields(JSON.parse(schemaText) as object)
    type = avroTypeOf(schema)
  } catch (error) {
    throw unreadable('bad schema', error)
  }

  const convert = prepare({ schema, metadata })
  const records: T[] = []
  while (pos < buffer.length) {
    const count = countType.decode(buffer, pos)
    const size = count.offset < 0 ? count : countType.decode(buffer, count.offset)
    if (size.offset < 0) throw unreadable('truncated block header')
    const start = size.offset
    const end = start + (size.value as number)
    if (end + 16 > buffer.length) throw unreadable('truncated block')
    if (!buffer.subarray(end, end + 16).equals(sync)) throw unreadable('sync marker mismatch')
    const data = decompress(codec, buffer.subarray(start, end))
    let at = 0
    for (let i = 0; i < (count.value as number); i += 1) {
      const decoded = type.decode(data, at)
      if (decoded.offset < 0) throw unreadable('truncated record')
      records.push(convert(decoded.value))
      at = decoded.offset
    }
    pos = end + 16
  }
  return { schema, metadata, records }
}

const avroNamePattern = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * Java's AvroSchemaUtil keeps non-ASCII letters in field names ("région"), which the Avro grammar
 * and avsc refuse. Decoding never depends on names, and readers here find fields by field id, so
 * such a field is renamed in place (keeping `iceberg-field-name` if it has none) before parsing.
 */
function renameInvalidFields<T>(node: T): T {
  if (Array.isArray(node)) {
    for (const branch of node) renameInvalidFields(branch)
  } else if (typeof node === 'object' && node !== null) {
    const record = node as Record<string, unknown>
    if (Array.isArray(record.fields)) {
      record.fields.forEach((field: Record<string, unknown>, i: number) => {
        if (typeof field.name === 'string' && !avroNamePattern.test(field.name)) {
          field['iceberg-field-name'] ??= field.name
          field.name = `_field${i}`
        }
        renameInvalidFields(field.type)
      })
    }
    if (record.items !== undefined) renameInvalidFields(record.items)
    if (record.values !== undefined) renameInvalidFields(record.values)
    if (typeof record.type === 'object') renameInvalidFields(record.type)
  }
  return node
}

function decompress(codec: string, data: Buffer): Buffer {
  switch (codec) {
    case 'null':
      return data
    case 'deflate':
      return inflateRawSync(data)
    case 'zstandard':
      return zstdDecompressSync(data)
    default:
      // snappy (with its CRC) has no decoder in node:zlib; nothing Floe reads uses it today.
      throw unreadable(`codec ${codec} is not supported`)
  }
}
