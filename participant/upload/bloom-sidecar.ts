// The bloom-filter sidecar: every split-block bloom filter of one Parquet data file, copied into a
// small object `<data object>.bloom` beside it, so a lookup can test membership with one GET and
// no Parquet footer parsing. The byte layout is docs/bloom-sidecar.md; in short (little-endian):
//
//   header     16 bytes   magic "FLBF", u16 version, u16 entry size, u32 entry count, u32 CRC-32
//   directory  N x 24     i32 field id, i32 row group, u64 bitset offset, u32 bitset bytes,
//                         u8 algorithm, u8 hash, u8 compression, u8 reserved
//   padding    to a multiple of 32
//   bitsets    each exactly the bytes Parquet stores after its BloomFilterHeader
//
// The Thrift header is not copied: each of its union fields has one legal value today, so three
// directory bytes say the same, and a reader needs no Thrift decoder to use the bitsets.
import { open } from 'node:fs/promises'
import { crc32 } from 'node:zlib'
import { readBloomFilter, sbbfContains } from 'hyparquet/src/bloom.js'
import type { IcebergValue, PrimitiveType } from '../../shared/iceberg/index.ts'
import { FloeError } from '../../shared/index.ts'
import type { BloomFilterLocation } from '../../shared/parquet/index.ts'
import { bloomHash } from './bloom-hash.ts'
import { localFileFailure } from './local-file.ts'

export const sidecarMagic = 'FLBF'
export const sidecarVersion = 1
const headerBytes = 16
const entryBytes = 24
/** Bitsets start on a block boundary, so a reader may view them as 32-byte blocks in place. */
const blockBytes = 32

/** The directory's codes for Parquet's BloomFilterAlgorithm, BloomFilterHash, BloomFilterCompression. */
export const sidecarCodes = { splitBlock: 0, xxhash64: 0, uncompressed: 0 } as const

export interface SidecarFilter {
  fieldId: number
  rowGroup: number
  /** The SBBF bitset as Parquet stores it: blocks of 8 little-endian u32 words. */
  bitset: Uint8Array
}

const align = (offset: number) => Math.ceil(offset / blockBytes) * blockBytes

async function readRange(handle: import('node:fs/promises').FileHandle, offset: number, length: number) {
  const bytes = new Uint8Array(length)
  let done = 0
  while (done < length) {
    const { bytesRead } = await handle.read(bytes, done, length - done, offset + done)
    if (bytesRead === 0) break
    done += bytesRead
  }
  return bytes.subarray(0, done)
}

/** The bitset inside one `BloomFilterHeader + bitset` range of a Parquet file. */
function bitsetOf(range: Uint8Array, location: BloomFilterLocation, path: string): Uint8Array {
  const corrupt = (why: string) =>
    new FloeError('INVARIANT_BROKEN', `bloom filter of field ${location.fieldId} in ${path}: ${why}`, {
      details: { path, fieldId: location.fieldId, rowGroup: location.rowGroup, offset: String(location.offset) },
    })
  if (range.byteLength !== location.length) throw corrupt('the file ends inside it')
  const reader = { view: new DataView(range.buffer, range.byteOffset, range.byteLength), offset: 0 }
  let filter: ReturnType<typeof readBloomFilter>
  try {
    filter = readBloomFilter(reader)
  } catch (error) {
    throw corrupt(`no bloom filter header (${error instanceof Error ? error.message : String(error)})`)
  }
  // undefined: an algorithm, hash or compression other than the one Parquet defines
  if (filter === undefined) throw corrupt('not a split-block, xxHash, uncompressed filter')
  if (reader.offset !== range.byteLength) throw corrupt('its header and length disagree')
  return range.subarray(reader.offset - filter.numBytes)
}

/**
 * Builds the sidecar of a local Parquet file from its filters' locations (the writer's
 * `bloomFilters` metrics), reading only those byte ranges. Entries are ordered by field id, then
 * row group. A missing file is STORAGE_NOT_FOUND; a range that holds no Parquet bloom filter is
 * INVARIANT_BROKEN (the segment's metadata and its file disagree).
 */
export async function writeBloomSidecar(
  localParquetPath: string,
  bloomFilters: readonly BloomFilterLocation[],
): Promise<Uint8Array> {
  const sorted = [...bloomFilters].sort((a, b) => a.fieldId - b.fieldId || a.rowGroup - b.rowGroup)
  const filters: SidecarFilter[] = []
  try {
    const handle = await open(localParquetPath, 'r')
    try {
      for (const location of sorted) {
        const range = await readRange(handle, Number(location.offset), location.length)
        const bitset = bitsetOf(range, location, localParquetPath)
        filters.push({ fieldId: location.fieldId, rowGroup: location.rowGroup, bitset })
      }
    } finally {
      await handle.close()
    }
  } catch (error) {
    throw localFileFailure(error, localParquetPath)
  }
  return encodeBloomSidecar(filters)
}

/** The sidecar bytes of these filters, in the order given. */
export function encodeBloomSidecar(filters: readonly SidecarFilter[]): Uint8Array {
  const firstBitset = align(headerBytes + entryBytes * filters.length)
  const total = filters.reduce((sum, filter) => sum + filter.bitset.byteLength, firstBitset)
  const bytes = new Uint8Array(total)
  const view = new DataView(bytes.buffer)
  bytes.set(new TextEncoder().encode(sidecarMagic), 0)
  view.setUint16(4, sidecarVersion, true)
  view.setUint16(6, entryBytes, true)
  view.setUint32(8, filters.length, true)
  let offset = firstBitset
  filters.forEach((filter, index) => {
    if (filter.bitset.byteLength === 0 || filter.bitset.byteLength % blockBytes !== 0) {
      throw new FloeError(
        'INVARIANT_BROKEN',
        `a bloom filter bitset of ${filter.bitset.byteLength} bytes is not whole blocks`,
      )
    }
    const entry = headerBytes + entryBytes * index
    view.setInt32(entry, filter.fieldId, true)
    view.setInt32(entry + 4, filter.rowGroup, true)
    view.setBigUint64(entry + 8, BigInt(offset), true)
    view.setUint32(entry + 16, filter.bitset.byteLength, true)
    view.setUint8(entry + 20, sidecarCodes.splitBlock)
    view.setUint8(entry + 21, sidecarCodes.xxhash64)
    view.setUint8(entry + 22, sidecarCodes.uncompressed)
    bytes.set(filter.bitset, offset)
    offset += filter.bitset.byteLength
  })
  view.setUint32(12, crc32(bytes.subarray(headerBytes)), true)
  return bytes
}

interface LoadedFilter {
  fieldId: number
  rowGroup: number
  bitset: Uint8Array
  /** The bitset as u32 words in the host's order, for the probe. */
  words: Uint32Array
}

/** A decoded sidecar: its filters, and membership tests on them. */
export class BloomSidecar {
  readonly #filters: LoadedFilter[]

  constructor(filters: LoadedFilter[]) {
    this.#filters = filters
  }

  get filters(): readonly SidecarFilter[] {
    return this.#filters.map(({ fieldId, rowGroup, bitset }) => ({ fieldId, rowGroup, bitset }))
  }

  /**
   * False only when the value is certainly in no row group of the field (or of `rowGroup`, when
   * given). True when it may be there, and also when the sidecar holds no filter for the field or
   * the value is null: without a filter nothing can be ruled out.
   */
  mightContain(fieldId: number, value: IcebergValue, type: PrimitiveType, rowGroup?: number): boolean {
    const candidates = this.#filters.filter(
      (filter) => filter.fieldId === fieldId && (rowGroup === undefined || filter.rowGroup === rowGroup),
    )
    if (candidates.length === 0 || value === null) return true
    const hash = bloomHash(value, type)
    return candidates.some((filter) => sbbfContains(filter.words, hash))
  }
}

function undecodable(why: string): FloeError {
  return new FloeError('PROTOCOL_UNDECODABLE', `not a bloom-filter sidecar: ${why}`, { details: { reason: why } })
}

/** Decodes and checks a sidecar (magic, version, CRC, bounds). */
export function readBloomSidecar(bytes: Uint8Array): BloomSidecar {
  if (bytes.byteLength < headerBytes) throw undecodable('shorter than its header')
  if (new TextDecoder().decode(bytes.subarray(0, 4)) !== sidecarMagic) throw undecodable('wrong magic')
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const version = view.getUint16(4, true)
  if (version !== sidecarVersion) {
    throw new FloeError('PROTOCOL_VERSION_UNSUPPORTED', `bloom-filter sidecar version ${version} is not supported`, {
      details: { version },
    })
  }
  const entrySize = view.getUint16(6, true)
  const count = view.getUint32(8, true)
  // entries may grow in a later version; a reader skips what it does not know
  if (entrySize < entryBytes) throw undecodable(`directory entries of ${entrySize} bytes`)
  if (headerBytes + entrySize * count > bytes.byteLength) throw undecodable('the directory is cut off')
  if (crc32(bytes.subarray(headerBytes)) !== view.getUint32(12, true)) throw undecodable('CRC-32 mismatch')
  const filters: LoadedFilter[] = []
  for (let index = 0; index < count; index++) {
    const entry = headerBytes + entrySize * index
    const offset = Number(view.getBigUint64(entry + 8, true))
    const numBytes = view.getUint32(entry + 16, true)
    const codes = [view.getUint8(entry + 20), view.getUint8(entry + 21), view.getUint8(entry + 22)]
    if (codes.some((code) => code !== 0)) throw undecodable(`unknown filter kind ${codes.join('/')}`)
    if (numBytes === 0 || numBytes % blockBytes !== 0 || offset + numBytes > bytes.byteLength) {
      throw undecodable(`filter ${index} lies outside the sidecar or is not whole blocks`)
    }
    const bitset = bytes.subarray(offset, offset + numBytes)
    const bitsetView = new DataView(bitset.buffer, bitset.byteOffset, numBytes)
    // copied word by word: the bytes may be unaligned, and are little-endian whatever the host
    const words = new Uint32Array(numBytes / 4)
    for (let w = 0; w < words.length; w++) words[w] = bitsetView.getUint32(w * 4, true)
    filters.push({ fieldId: view.getInt32(entry, true), rowGroup: view.getInt32(entry + 4, true), bitset, words })
  }
  return new BloomSidecar(filters)
}

/** One membership test straight on sidecar bytes; see BloomSidecar.mightContain. */
export function probeBloomSidecar(
  sidecar: Uint8Array,
  fieldId: number,
  value: IcebergValue,
  type: PrimitiveType,
  options: { rowGroup?: number } = {},
): boolean {
  return readBloomSidecar(sidecar).mightContain(fieldId, value, type, options.rowGroup)
}
