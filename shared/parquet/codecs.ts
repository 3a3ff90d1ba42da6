// Page compression codecs, named as Iceberg's `write.parquet.compression-codec` names them.
// hyparquet-writer compresses pages through synchronous functions it is handed (it has only
// snappy built in), so zstd, gzip and brotli come from node:zlib here, and LZ4_RAW from ./lz4.ts.
import {
  brotliCompressSync,
  brotliDecompressSync,
  constants,
  gunzipSync,
  gzipSync,
  zstdCompressSync,
  zstdDecompressSync,
} from 'node:zlib'
import type { ParquetWriter } from 'hyparquet-writer'
import type { Compressors } from 'hyparquet-writer/src/types.js'
import { FloeError } from '../errors.ts'
import { lz4RawCompress, lz4RawDecompress } from './lz4.ts'

export type DataFileCodec = 'zstd' | 'snappy' | 'gzip' | 'brotli' | 'lz4' | 'uncompressed'

export interface PageCompression {
  codec: ParquetWriter['codec']
  compressors: Compressors
}

/** Levels as parquet-java and zlib use them unless told otherwise. */
const levelRanges = {
  zstd: { min: 1, max: 22, default: 3 },
  gzip: { min: 0, max: 9, default: 6 },
  brotli: { min: 0, max: 11, default: 4 },
} as const

/**
 * The reverse for hyparquet, which reads only snappy by itself: every codec Floe writes, so a
 * file Floe wrote (or any writer using these codecs) can be read back, as compaction does.
 */
export const pageDecompressors = {
  ZSTD: (input: Uint8Array) => zstdDecompressSync(input),
  GZIP: (input: Uint8Array) => gunzipSync(input),
  BROTLI: (input: Uint8Array) => brotliDecompressSync(input),
  LZ4_RAW: lz4RawDecompress,
} as const

export function pageCompressionFor(codec: DataFileCodec, level?: number): PageCompression {
  switch (codec) {
    case 'zstd': {
      const params = { [constants.ZSTD_c_compressionLevel]: checkedLevel(codec, level) }
      return { codec: 'ZSTD', compressors: { ZSTD: (input) => zstdCompressSync(input, { params }) } }
    }
    case 'gzip': {
      const options = { level: checkedLevel(codec, level) }
      return { codec: 'GZIP', compressors: { GZIP: (input) => gzipSync(input, options) } }
    }
    case 'brotli': {
      const params = { [constants.BROTLI_PARAM_QUALITY]: checkedLevel(codec, level) }
      return { codec: 'BROTLI', compressors: { BROTLI: (input) => brotliCompressSync(input, { params }) } }
    }
    case 'snappy':
      noLevel(codec, level)
      // hyparquet-writer's own JS snappy is used (it registers it itself)
      return { codec: 'SNAPPY', compressors: {} }
    case 'uncompressed':
      noLevel(codec, level)
      return { codec: 'UNCOMPRESSED', compressors: {} }
    case 'lz4':
      noLevel(codec, level)
      return { codec: 'LZ4_RAW', compressors: { LZ4_RAW: lz4RawCompress } }
    default:
      throw new FloeError('CONFIG_INVALID', `unknown Parquet codec ${String(codec)}`, { details: { codec } })
  }
}

function checkedLevel(codec: keyof typeof levelRanges, level: number | undefined): number {
  const range = levelRanges[codec]
  if (level === undefined) return range.default
  if (!Number.isInteger(level) || level < range.min || level > range.max) {
    throw new FloeError('CONFIG_INVALID', `${codec} compression level must be ${range.min}..${range.max}`, {
      details: { codec, level },
    })
  }
  return level
}

function noLevel(codec: DataFileCodec, level: number | undefined): void {
  if (level !== undefined) {
    throw new FloeError('CONFIG_INVALID', `codec ${codec} takes no compression level`, { details: { codec, level } })
  }
}
